// What the daemon's FETCH gains from KeelModel's planner and fetch, over the socket: EXPLAIN
// names the index it reads (and says SCAN without one), and a fetched property in `include`
// (Book.feedbackList, whose Feedback objects live in the other store file of config/model.json)
// is evaluated.

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
}
