// What the daemon's FETCH gains from KeelModel's planner and fetch, over the socket: EXPLAIN
// names the index it reads (and says SCAN without one), and a fetched property in `include`
// (Book.feedbackList, whose Feedback objects live in the other store file of config/model.json)
// is evaluated; FETCH rows and GET replies of objects with values of every type, written
// straight from the objects' values, carry the same text, in the documented form.

import Foundation
import KeelModel
import KeelTestSupport
import Testing

@Suite("Fetch commands")
struct FetchCommandTests {
    @Test("EXPLAIN names the index an indexed predicate reads and says SCAN for an unindexed one; the fetches agree")
    func explainNamesIndexes() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        try c.ok(#"a BATCH.INSERT {"entity":"Employee","objects":[{"name":"kim","age":30,"salary":"10"},{"name":"Lee","age":40,"salary":"12"},{"name":"abe","age":25,"salary":"7"}]}"#)

        let indexed = try #require(try c.ok(#"x1 EXPLAIN {"entity":"Employee","predicate":"name == %@","args":["Lee"]}"#))
        let indexName = try #require(indexed["indexes"]?.arrayValue?.first?.stringValue)
        #expect(indexed["access"] == "index" && indexName.hasSuffix(".name"), "\(indexed)")
        #expect(indexed["plan"]?.stringValue?.contains("INDEX \(indexName)") == true, "\(indexed)")
        #expect(try c.request(#"f1 FETCH {"entity":"Employee","predicate":"name == %@","args":["Lee"],"result":"ids"}"#).rows == [["$id": "Employee/2"]])

        let scanned = try #require(try c.ok(#"x2 EXPLAIN {"entity":"Employee","predicate":"age > 26"}"#))
        #expect(scanned["access"] == "scan" && scanned["indexes"] == [], "\(scanned)")
        #expect(scanned["plan"]?.stringValue?.hasPrefix("SCAN Employee") == true, "\(scanned)")
        #expect(try c.ok(#"n COUNT {"entity":"Employee","predicate":"age > 26"}"#) == ["count": 2])

        // A pending change is seen by the indexed fetch too.
        try c.ok(#"u UPDATE {"$id":"Employee/1","values":{"name":"Lee"}}"#)
        #expect(try c.request(#"f2 FETCH {"entity":"Employee","predicate":"name == 'Lee'","result":"ids"}"#).rows.count == 2)

        let nothing = try #require(try c.ok(#"x3 EXPLAIN {"entity":"Employee","predicate":"FALSEPREDICATE"}"#))
        #expect(nothing["access"] == "nothing", "\(nothing)")
    }

    @Test("A fetched property in include (Book.feedbackList across the two store files) is evaluated, in its sort order")
    func fetchedPropertyInInclude() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        let book = "00000000-0000-0000-0000-0000000000b1"
        let other = "00000000-0000-0000-0000-0000000000b2"
        try c.ok(#"b BATCH.INSERT {"entity":"Book","objects":[{"uuid":"\#(book)","title":"Keel"},{"uuid":"\#(other)","title":"Other"}]}"#)
        try c.ok(#"f BATCH.INSERT {"entity":"Feedback","objects":[{"bookUUID":"\#(book)","rating":2,"comment":"ok"},{"bookUUID":"\#(book)","rating":5,"comment":"great"},{"bookUUID":"\#(other)","rating":1}]}"#)
        // Pending feedback in the connection's context is part of what its fetch sees.
        try c.ok(#"i INSERT {"entity":"Feedback","values":{"bookUUID":"\#(book)","rating":3,"comment":"fine"}}"#)

        let reply = try c.request(#"q FETCH {"entity":"Book","predicate":"title == 'Keel'","include":["feedbackList"]}"#)
        #expect(reply.isOK && reply.rows.count == 1, "\(reply.finalLine)")
        let list = try #require(reply.rows.first?["feedbackList"]?.arrayValue, "\(reply.rows)")
        #expect(list.map { $0["comment"]?.stringValue ?? "" } == ["great", "fine", "ok"], "\(list)")

        let plain = try c.request(#"q2 FETCH {"entity":"Book","predicate":"title == 'Other'"}"#)
        #expect(plain.rows.first?["feedbackList"] == nil, "not evaluated unless included")
        try c.fails(#"q3 FETCH {"entity":"Book","include":["nope"]}"#, "NO_SUCH_PROPERTY")
    }

    @Test("FETCH with groupBy and aggregates over the socket: a row per group in the documented text, COUNT and EXPLAIN of groups, refusals that leave the connection usable")
    func groupsAndAggregates() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        try c.ok(#"c BATCH.INSERT {"entity":"Company","objects":[{"name":"Acme"}]}"#)
        try c.ok(#"d BATCH.INSERT {"entity":"Department","objects":[{"name":"Sales","companies":["Company/1"]},{"name":"Design","companies":["Company/1"]}]}"#)
        try c.ok(#"e BATCH.INSERT {"entity":"Employee","objects":[{"name":"Kim","age":30,"salary":"5200.5","department":"Department/1"},{"name":"Lee","age":41,"salary":"6100","department":"Department/2"},{"name":"Park","age":29,"salary":"4100","department":"Department/1"},{"name":"Choi","salary":"3900"}]}"#)
        // Pending in the connection's context: counted with the saved ones.
        try c.ok(#"i INSERT {"entity":"Employee","values":{"name":"Jung","age":25,"salary":"100","department":"Department/2"}}"#)
        let request = #"{"entity":"Employee","result":"dictionaries","groupBy":["department.name"],"properties":["department.name",{"name":"n","function":"count"},{"name":"payroll","function":"sum","key":"salary"},{"name":"avgAge","function":"avg","key":"age"},{"name":"youngest","function":"min","key":"age"}],"sort":[{"key":"payroll","ascending":false}]}"#
        let (rows, final) = try rawReply(c, "g FETCH " + request)
        #expect(rows == [
            #"{"department.name":"Sales","n":2,"payroll":"9300.5","avgAge":29.5,"youngest":29}"#,
            #"{"department.name":"Design","n":2,"payroll":"6200","avgAge":33.0,"youngest":25}"#,
            #"{"department.name":null,"n":1,"payroll":"3900","avgAge":null,"youngest":null}"#,
        ], "\(rows)")
        #expect(final == #"g OK {"count":3}"#)
        #expect(try c.ok("n COUNT " + request) == ["count": 3])
        let plan = try #require(try c.ok("x EXPLAIN " + request)?["plan"]?.stringValue)
        #expect(plan.contains("→ group by department.name (n = count, payroll = sum of salary, avgAge = avg of age, youngest = min of age): in memory → sort: in memory (payroll descending)"), "\(plan)")
        // Read from the keys of Employee.department,salary in a context without pending changes:
        // EXPLAIN names the index; in `main`, with its pending employee, the objects are read.
        try c.ok(#"o CONTEXT.OPEN {"name":"clean"}"#)
        let grouped = #""entity":"Employee","result":"dictionaries","groupBy":["department"],"properties":["department",{"name":"n","function":"count"}]"#
        let keys = try #require(try c.ok("k EXPLAIN {" + grouped + #","context":"clean"}"#))
        #expect(keys["access"] == "index" && keys["indexes"]?.arrayValue?.first?.stringValue?.hasSuffix(".department,salary") == true, "\(keys)")
        #expect(keys["plan"]?.stringValue?.contains("keys only") == true, "\(keys)")
        let pending = try #require(try c.ok("m EXPLAIN {" + grouped + "}"))
        #expect(pending["access"] == "scan" && pending["plan"]?.stringValue?.contains("keys only") == false, "\(pending)")
        let (fromKeys, _) = try rawReply(c, "kf FETCH {" + grouped + #","context":"clean"}"#)
        #expect(fromKeys == [#"{"department":null,"n":1}"#, #"{"department":"Department/1","n":2}"#, #"{"department":"Department/2","n":1}"#], "\(fromKeys)")
        let (whole, _) = try rawReply(c, #"w FETCH {"entity":"Employee","result":"dictionaries","properties":[{"name":"n","function":"count"},{"name":"top","function":"max","key":"salary"}]}"#)
        #expect(whole == [#"{"n":5,"top":"6100"}"#])
        // having, with its own arguments: the groups it keeps, counted; EXPLAIN shows it.
        let having = String(request.dropLast()) + #","having":"payroll > %@ AND avgAge < $MAX","havingArgs":["5000"],"vars":{"MAX":33}}"#
        let (kept, keptFinal) = try rawReply(c, "h FETCH " + having)
        #expect(kept == [#"{"department.name":"Sales","n":2,"payroll":"9300.5","avgAge":29.5,"youngest":29}"#], "\(kept)")
        #expect(keptFinal == #"h OK {"count":1}"#)
        #expect(try c.ok("hn COUNT " + having) == ["count": 1])
        let havingPlan = try #require(try c.ok("hx EXPLAIN " + having)?["plan"]?.stringValue)
        #expect(havingPlan.contains("in memory → having: payroll > %@ AND avgAge < $MAX → sort"), "\(havingPlan)")
        try c.fails(#"h1 FETCH {"entity":"Employee","result":"dictionaries","groupBy":["department.name"],"having":"salary > 1"}"#, "PREDICATE")
        try c.fails(#"h2 FETCH {"entity":"Employee","result":"dictionaries","properties":["name"],"having":"name != nil"}"#, "BAD_REQUEST")
        try c.fails(#"h3 FETCH {"entity":"Employee","result":"dictionaries","groupBy":["name"],"having":"name != nil","havingArgs":"x"}"#, "BAD_REQUEST")
        try c.fails(#"b1 FETCH {"entity":"Employee","result":"dictionaries","groupBy":["department.name"],"properties":["name"]}"#, "BAD_REQUEST")
        try c.fails(#"b2 FETCH {"entity":"Employee","result":"dictionaries","properties":[{"name":"s","function":"sum","key":"name"}]}"#, "BAD_REQUEST")
        try c.fails(#"b3 FETCH {"entity":"Employee","result":"dictionaries","groupBy":"department"}"#, "BAD_REQUEST")
        try c.fails(#"b4 FETCH {"entity":"Employee","result":"dictionaries","groupBy":["department.nope"]}"#, "NO_SUCH_PROPERTY")
        #expect(try c.request("p PING").isOK)
    }

    /// The text after `TAG KIND ` of each line of one reply, and its final line.
    private func rawReply(_ c: LineClient, _ line: String) throws -> (rows: [String], final: String) {
        try c.send(line + "\n")
        let tag = String(line.prefix { $0 != " " })
        var rows: [String] = []
        while true {
            let text = try c.line()
            if text.hasPrefix(tag + " ROW ") {
                rows.append(String(text.dropFirst(tag.count + 5)))
            } else {
                return (rows, text)
            }
        }
    }

    @Test("FETCH rows of objects with values of every type (saved and pending): each row is GET's text, canonical JSON, with the values as inserted; ids and dictionaries rows too")
    func rowsOfEveryType() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        let name = #"Acme \"R&D\" é😀 \\ \n\t\u0001 / end"#
        try c.ok(#"c BATCH.INSERT {"entity":"Company","objects":[{"name":"\#(name)","website":"https://acme.example/a?b=c","founded":"1999-12-31T23:59:59.999Z","registrationNumber":9223372036854775807},{"name":"Empty"}]}"#)
        try c.ok(#"d BATCH.INSERT {"entity":"Department","objects":[{"name":"R&D","code":-32768,"companies":["Company/1"]}]}"#)
        try c.ok(#"e BATCH.INSERT {"entity":"Employee","objects":[{"name":"Kim","age":30,"salary":"1234.50","hiredAt":"2026-11-21T09:30:00.000Z","isManager":true,"photo":"AAEC/w==","department":"Department/1","company":"Company/1"},{"name":"Lee","salary":"99999999999999999999999999999999999999","department":"Department/1"}]}"#)
        try c.ok(#"m BATCH.INSERT {"entity":"Computer","objects":[{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","model":"X1","price":2,"isLaptop":false,"specs":{"ram":16,"tags":["a","\u00e9"],"none":null,"f":0.1},"owner":"Employee/1"},{"id":"00000000-0000-0000-0000-000000000001","price":"Infinity","specs":[1,2.5,"x"]}]}"#)
        try c.ok(#"f BATCH.INSERT {"entity":"Feedback","objects":[{"bookUUID":"00000000-0000-0000-0000-0000000000b1","rating":0.1,"comment":"fine"},{"bookUUID":"00000000-0000-0000-0000-0000000000b1","rating":3.4}]}"#)
        try c.ok(#"b BATCH.INSERT {"entity":"Book","objects":[{"uuid":"00000000-0000-0000-0000-0000000000b1","title":"Keel","publishedAt":"2026-01-02T03:04:05.006Z"}]}"#)
        try c.ok(#"s BATCH.INSERT {"entity":"Student","objects":[{"name":"Ann","grade":12,"course":"Maths"}]}"#)
        // Pending in the connection's context: an inserted object and a changed one.
        try c.ok(#"i INSERT {"entity":"Employee","values":{"name":"Pending","salary":"0.000001","department":"Department/1"}}"#)
        try c.ok(#"u UPDATE {"$id":"Company/2","values":{"name":"Changed"}}"#)

        var seen = 0
        for entity in ["Company", "Department", "Employee", "Computer", "Feedback", "Book", "Student", "Person"] {
            let (rows, final) = try rawReply(c, #"f FETCH {"entity":"\#(entity)"}"#)
            #expect(final == #"f OK {"count":\#(rows.count)}"#)
            #expect(!rows.isEmpty, "\(entity)")
            for row in rows {
                let json = try JSON.parse(Array(row.utf8))
                #expect(json.serialized() == row, "canonical: \(row)")
                let id = try #require(json["$id"]?.stringValue)
                let (none, got) = try rawReply(c, #"g GET {"$id":"\#(id)"}"#)
                #expect(none.isEmpty && got == "g OK " + row)
                let (ids, _) = try rawReply(c, #"f FETCH {"entity":"\#(entity)","predicate":"SELF == %@","args":["\#(id)"],"result":"ids"}"#)
                #expect(ids == [#"{"$id":"\#(id)"}"#])
                seen += 1
            }
        }
        #expect(seen == 2 + 1 + 3 + 2 + 2 + 1 + 1 + 4)
        let (company, _) = try rawReply(c, #"f FETCH {"entity":"Company","sort":[{"key":"registrationNumber","ascending":false}],"limit":1}"#)
        #expect(company == [#"{"$id":"Company/1","$entity":"Company","$version":1,"name":"Acme \"R&D\" é😀 \\ \n\t\u0001 / end","website":"https://acme.example/a?b=c","founded":"1999-12-31T23:59:59.999Z","registrationNumber":9223372036854775807,"departments":["Department/1"],"employees":["Employee/1"]}"#])
        let (computers, _) = try rawReply(c, #"f FETCH {"entity":"Computer","properties":["price","specs","owner"]}"#)
        #expect(computers == [#"{"$id":"Computer/1","$entity":"Computer","$version":1,"price":2.0,"specs":{"ram":16,"tags":["a","é"],"none":null,"f":0.1},"owner":"Employee/1"}"#,
                              #"{"$id":"Computer/2","$entity":"Computer","$version":1,"price":"Infinity","specs":[1,2.5,"x"],"owner":null}"#])
        let (department, _) = try rawReply(c, #"f FETCH {"entity":"Department","result":"dictionaries","properties":["code","employees"]}"#)
        #expect(department == [#"{"code":-32768,"employees":["Employee/1","Employee/2","Employee/3"]}"#])
        let (none, kim) = try rawReply(c, #"g GET {"$id":"Employee/1","include":["department","computers"]}"#)
        let embedded = try JSON.parse(Array(kim.dropFirst("g OK ".count).utf8))
        #expect(none.isEmpty && embedded.serialized() == String(kim.dropFirst("g OK ".count)))
        #expect(embedded["department"]?["code"] == -32768 && embedded["computers"]?.arrayValue?.first?["$id"] == "Computer/1")
        #expect(embedded["salary"] == "1234.5")
        #expect(embedded["photo"] == "AAEC/w==" && embedded["isManager"] == true && embedded["hiredAt"] == "2026-11-21T09:30:00.000Z")
    }
}
