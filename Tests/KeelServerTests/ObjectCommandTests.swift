// The object commands on contexts, each with its documented reply and errors, against a real
// keeld: INSERT UPDATE DELETE RELATE GET, CHANGES SAVE ROLLBACK REFRESH, CONTEXT.OPEN/CLOSE,
// FETCH COUNT EXPLAIN.

import Foundation
import KeelModel
import KeelTestSupport
import Testing

@Suite("Object commands")
struct ObjectCommandTests {
    @Test("INSERT, SAVE, GET, FETCH, UPDATE, DELETE with cascades: the documented replies")
    func lifecycle() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        #expect(try c.ok(#"i1 INSERT {"entity":"Company","values":{"name":"Acme"}}"#) == ["$id": "Company/1"])
        #expect(try c.ok(#"i2 INSERT {"entity":"Employee","values":{"name":"Kim","age":30,"salary":"5200.00","company":"Company/1"}}"#) == ["$id": "Employee/1"])
        let pending = try #require(try c.ok("ch CHANGES"))
        #expect(pending["hasChanges"] == true && pending["updated"] == [] && pending["deleted"] == [])
        #expect(Set(pending["inserted"]?.arrayValue ?? []) == ["Employee/1", "Company/1"])
        let saved = try #require(try c.ok("s1 SAVE"))
        #expect(saved["inserted"] == 2 && saved["updated"] == 0 && saved["deleted"] == 0)
        #expect(saved["txn"]?.intValue == 1)
        #expect(try c.ok("ch3 CHANGES")?["hasChanges"] == false)

        let kim = try #require(try c.ok(#"g1 GET {"$id":"Employee/1"}"#))
        #expect(kim["$id"] == "Employee/1" && kim["$entity"] == "Employee" && kim["$version"] == 1)
        #expect(kim["name"] == "Kim" && kim["age"] == 30 && kim["company"] == "Company/1" && kim["address"] == .null)
        #expect(kim["computers"] == [])
        let withCompany = try #require(try c.ok(#"g2 GET {"$id":"Employee/1","include":["company"]}"#))
        #expect(withCompany["company"]?["name"] == "Acme")
        #expect(withCompany["company"]?["employees"] == ["Employee/1"])

        let fetched = try c.request(#"f1 FETCH {"entity":"Person"}"#)
        #expect(fetched.rows.count == 1 && fetched.rows.first?["$id"] == "Employee/1")
        #expect(fetched.payload == ["count": 1])

        try c.ok(#"u1 UPDATE {"$id":"Employee/1","values":{"age":31}}"#)
        #expect(try c.ok("s2 SAVE")?["updated"] == 1)
        #expect(try c.ok(#"g3 GET {"$id":"Employee/1"}"#)?["$version"] == 2)

        // Company.employees cascades.
        #expect(try c.ok(#"d1 DELETE {"$id":"Company/1"}"#) == ["deleted": ["Company/1", "Employee/1"]])
        try c.fails(#"g4 GET {"$id":"Employee/1"}"#, "NOT_FOUND")
        #expect(try c.ok("s3 SAVE")?["deleted"] == 2)
        #expect(try c.ok(#"n1 COUNT {"entity":"Person"}"#) == ["count": 0])
    }

    @Test("Errors of the object commands: NOT_FOUND, NO_SUCH_ENTITY, NO_SUCH_PROPERTY, TYPE, BAD_REQUEST, VALIDATION, CONSTRAINT, DENY")
    func errors() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        try c.fails(#"e1 GET {"$id":"Employee/99"}"#, "NOT_FOUND")
        try c.fails(#"e2 GET {"$id":"Nope/1"}"#, "NO_SUCH_ENTITY")
        try c.fails(#"e3 GET {"$id":"garbage"}"#, "BAD_REQUEST")
        try c.fails(#"e4 INSERT {"entity":"Nope"}"#, "NO_SUCH_ENTITY")
        try c.fails(#"e5 INSERT {"entity":"Company","values":{"nmae":"x"}}"#, "NO_SUCH_PROPERTY")
        try c.fails(#"e6 INSERT {"entity":"Company","values":{"name":5}}"#, "TYPE")
        try c.fails(#"e7 INSERT {"entity":"Person","values":{"name":"x"}}"#, "BAD_REQUEST")
        #expect(try c.ok("ch CHANGES")?["hasChanges"] == false, "failed commands leave nothing behind")

        // Validation: every failure at once, nothing written, changes kept.
        try c.ok(#"v1 INSERT {"entity":"Employee","values":{"age":200}}"#)
        let invalid = try c.fails("v2 SAVE", "VALIDATION")
        #expect(invalid.finalLine.contains("\"details\""))
        #expect(try c.ok("v3 CHANGES")?["hasChanges"] == true)
        try c.ok("v4 ROLLBACK")

        // Unique constraint.
        try c.ok(#"u1 INSERT {"entity":"Company","values":{"name":"Acme"}}"#)
        try c.ok("u2 SAVE")
        try c.ok(#"u3 INSERT {"entity":"Company","values":{"name":"Acme"}}"#)
        try c.fails("u4 SAVE", "CONSTRAINT")
        try c.ok("u5 ROLLBACK")

        // Deny: a department that still has employees cannot be deleted.
        try c.ok(#"d1 INSERT {"entity":"Department","values":{"name":"R&D","companies":["Company/1"]}}"#)
        try c.ok(#"d2 INSERT {"entity":"Employee","values":{"name":"Kim","salary":"1","department":"Department/1"}}"#)
        try c.ok("d3 SAVE")
        try c.ok(#"d4 DELETE {"$id":"Department/1"}"#)
        try c.fails("d5 SAVE", "DENY")
        try c.ok("d6 ROLLBACK")
        #expect(try c.ok(#"d7 COUNT {"entity":"Department"}"#) == ["count": 1])
        #expect(try c.ok("p PING") == nil)
    }

    @Test("RELATE adds and removes members with inverses kept; REFRESH keeps pending changes; ROLLBACK drops them")
    func relateRefreshRollback() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        try c.ok(#"a INSERT {"entity":"Company","values":{"name":"Acme"}}"#)
        try c.ok(#"b INSERT {"entity":"Department","values":{"name":"Sales","companies":["Company/1"]}}"#)
        try c.ok(#"c INSERT {"entity":"Employee","values":{"name":"Kim","salary":"1"}}"#)
        try c.ok(#"d INSERT {"entity":"Employee","values":{"name":"Lee","salary":"2"}}"#)
        try c.ok(#"r1 RELATE {"$id":"Department/1","relationship":"employees","add":["Employee/2","Employee/1"]}"#)
        #expect(try c.ok(#"g1 GET {"$id":"Department/1"}"#)?["employees"] == ["Employee/2", "Employee/1"])
        #expect(try c.ok(#"g2 GET {"$id":"Employee/1"}"#)?["department"] == "Department/1")
        try c.ok("s SAVE")
        try c.ok(#"r2 RELATE {"$id":"Department/1","relationship":"employees","remove":["Employee/2"]}"#)
        #expect(try c.ok(#"g3 GET {"$id":"Employee/2"}"#)?["department"] == .null)
        try c.fails(#"r3 RELATE {"$id":"Department/1","relationship":"name","add":["Employee/2"]}"#, "TYPE")
        try c.fails(#"r4 RELATE {"$id":"Department/1","relationship":"employees","add":["Company/1"]}"#, "TYPE")
        try c.ok("f REFRESH")
        #expect(try c.ok("ch CHANGES")?["updated"]?.arrayValue?.isEmpty == false)
        try c.ok("rb ROLLBACK")
        #expect(try c.ok("ch2 CHANGES")?["hasChanges"] == false)
        #expect(try c.ok(#"g4 GET {"$id":"Employee/2"}"#)?["department"] == "Department/1")
    }

    @Test("Contexts: open with a parent and a merge policy, save into the parent, close; NO_SUCH_CONTEXT, LIMIT, BAD_REQUEST")
    func contexts() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(limits: ["contextsPerConnection": 3, "pendingObjectsPerContext": 5])
        try keeld.start()
        let c = try keeld.connect()
        #expect(try c.ok(#"o1 CONTEXT.OPEN {"name":"bg","parent":"main","mergePolicy":"objectTrumps"}"#) == ["context": "bg"])
        try c.ok(#"i INSERT {"entity":"Company","values":{"name":"Acme"},"context":"bg"}"#)
        #expect(try c.ok("m CHANGES")?["hasChanges"] == false, "main does not see bg's pending insert")
        let childSave = try #require(try c.ok(#"s1 SAVE {"context":"bg"}"#))
        #expect(childSave["inserted"] == 1 && childSave["txn"] == .null, "a child saves into its parent, not the store")
        #expect(try c.ok("m2 CHANGES")?["inserted"] == ["Company/1"])
        #expect(try c.ok("s2 SAVE")?["txn"] == 1)

        try c.ok(#"o2 CONTEXT.OPEN {"name":"other"}"#)
        try c.fails(#"o3 CONTEXT.OPEN {"name":"third"}"#, "LIMIT")
        try c.fails(#"o4 CONTEXT.OPEN {"name":"bg"}"#, "BAD_REQUEST")
        try c.fails(#"o5 CONTEXT.OPEN {"name":"x","parent":"nope"}"#, "NO_SUCH_CONTEXT")
        try c.fails(#"o6 CONTEXT.OPEN {"name":"x","mergePolicy":"whatever"}"#, "BAD_REQUEST")
        try c.fails(#"g GET {"$id":"Company/1","context":"nope"}"#, "NO_SUCH_CONTEXT")
        try c.fails(#"cl0 CONTEXT.CLOSE {"context":"main"}"#, "BAD_REQUEST")
        try c.fails(#"cl1 CONTEXT.CLOSE {"context":"nope"}"#, "NO_SUCH_CONTEXT")
        try c.ok(#"cl2 CONTEXT.CLOSE {"context":"other"}"#)
        try c.fails(#"g2 GET {"$id":"Company/1","context":"other"}"#, "NO_SUCH_CONTEXT")
        #expect(try c.ok(#"g3 GET {"$id":"Company/1","context":"bg"}"#)?["name"] == "Acme")

        // Pending objects per context.
        for i in 0..<5 { try c.ok(#"p\#(i) INSERT {"entity":"Company","values":{"name":"C\#(i)"}}"#) }
        try c.fails(#"p5 INSERT {"entity":"Company","values":{"name":"C5"}}"#, "LIMIT")
        #expect(try c.ok("ch CHANGES")?["inserted"]?.arrayValue?.count == 5)
    }

    @Test("A save that meets another connection's change since its snapshot is CONFLICT under merge policy error")
    func conflict() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let a = try keeld.connect()
        let b = try keeld.connect()
        try a.ok(#"i INSERT {"entity":"Company","values":{"name":"Acme"}}"#)
        try a.ok("s SAVE")
        try a.ok("r REFRESH")
        #expect(try a.ok(#"g GET {"$id":"Company/1"}"#)?["$version"] == 1)
        try b.ok(#"u UPDATE {"$id":"Company/1","values":{"registrationNumber":7}}"#)
        try b.ok("s SAVE")
        try a.ok(#"u UPDATE {"$id":"Company/1","values":{"registrationNumber":8}}"#)
        let conflict = try a.fails("s2 SAVE", "CONFLICT")
        #expect(conflict.finalLine.contains("Company/1"))
        try a.ok("rb ROLLBACK")
        #expect(try a.ok(#"g2 GET {"$id":"Company/1"}"#)?["registrationNumber"] == 7)
    }

    @Test("FETCH results (objects, ids, dictionaries, count), limit and offset, include; COUNT; EXPLAIN; the request errors")
    func fetch() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        try c.ok(#"co INSERT {"entity":"Company","values":{"name":"Acme"}}"#)
        for i in 1...5 {
            try c.ok(#"e\#(i) INSERT {"entity":"Employee","values":{"name":"E\#(i)","age":\#(20 + i),"salary":"1","company":"Company/1"}}"#)
        }
        try c.ok(#"st INSERT {"entity":"Student","values":{"name":"S","grade":3}}"#)
        try c.ok("s SAVE")
        try c.ok(#"x INSERT {"entity":"Employee","values":{"name":"Pending","salary":"1"}}"#)
        try c.ok(#"d DELETE {"$id":"Employee/1"}"#)

        let all = try c.request(#"f1 FETCH {"entity":"Person"}"#)
        #expect(all.rows.count == 6 && all.payload == ["count": 6], "pending insert matches, pending delete does not")
        let employees = try c.request(#"f2 FETCH {"entity":"Person","includeSubentities":false}"#)
        #expect(employees.rows.isEmpty)
        let ids = try c.request(#"f3 FETCH {"entity":"Employee","result":"ids","limit":2,"offset":1}"#)
        #expect(ids.rows == [["$id": "Employee/3"], ["$id": "Employee/4"]])
        let dicts = try c.request(#"f4 FETCH {"entity":"Employee","result":"dictionaries","properties":["name","age"],"limit":1}"#)
        #expect(dicts.rows == [["name": "E2", "age": 22]])
        #expect(try c.ok(#"f5 FETCH {"entity":"Employee","result":"count","offset":4}"#) == ["count": 1])
        let included = try c.request(#"f6 FETCH {"entity":"Employee","include":["company"],"limit":1}"#)
        #expect(included.rows.first?["company"]?["name"] == "Acme")
        #expect(try c.ok(#"n1 COUNT {"entity":"Employee"}"#) == ["count": 5])
        #expect(try c.ok(#"n2 COUNT {"entity":"Employee","limit":2}"#) == ["count": 2])
        #expect(try c.ok(#"n3 COUNT {"entity":"Employee","predicate":"FALSEPREDICATE"}"#) == ["count": 0])
        #expect(try c.ok(#"n4 COUNT {"entity":"Employee","predicate":"TRUEPREDICATE"}"#) == ["count": 5])
        let plan = try #require(try c.ok(#"x1 EXPLAIN {"entity":"Employee"}"#))
        #expect(plan["plan"]?.stringValue?.hasPrefix("SCAN Employee") == true && plan["access"] == "scan" && plan["indexes"] == [])

        try c.fails(#"b1 FETCH {"entity":"Nope"}"#, "NO_SUCH_ENTITY")
        try c.fails(#"b2 FETCH {"entity":"Employee","result":"rows"}"#, "BAD_REQUEST")
        try c.fails(#"b3 FETCH {"entity":"Employee","result":"dictionaries","properties":["nope"]}"#, "NO_SUCH_PROPERTY")
        try c.fails(#"b4 FETCH {"entity":"Employee","limit":-1}"#, "BAD_REQUEST")
        try c.fails(#"b6 COUNT {"entity":"Employee","include":["nope"]}"#, "NO_SUCH_PROPERTY")
        try c.fails(#"b7 EXPLAIN {"entity":"Nope"}"#, "NO_SUCH_ENTITY")
        try c.fails(#"b5 FETCH {"entity":"Employee","context":"nope"}"#, "NO_SUCH_CONTEXT")
    }

    @Test("FETCH, COUNT and EXPLAIN with predicates (args, vars, key paths, pending changes) and sort descriptors")
    func predicatesAndSort() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        try c.ok(#"a BATCH.INSERT {"entity":"Company","objects":[{"name":"Acme"},{"name":"Beta"}]}"#)
        try c.ok(#"b BATCH.INSERT {"entity":"Employee","objects":[{"name":"kim","age":30,"salary":"10","company":"Company/1"},{"name":"Lee","age":40,"salary":"12.5","company":"Company/2"},{"name":"abe","age":25,"salary":"7"}]}"#)
        try c.ok(#"i INSERT {"entity":"Employee","values":{"name":"Zed","age":50,"salary":"1","company":"Company/1"}}"#)
        let filtered = try c.request(#"f1 FETCH {"entity":"Employee","predicate":"age >= $MIN AND company.name BEGINSWITH[c] %@","args":["ac"],"vars":{"MIN":26},"result":"ids"}"#)
        #expect(filtered.rows == [["$id": "Employee/1"], ["$id": "Employee/4"]], "the pending insert matches through its pending relationship")
        let sorted = try c.request(#"f2 FETCH {"entity":"Person","sort":[{"key":"name","caseInsensitive":true}],"result":"dictionaries","properties":["name"]}"#)
        #expect(sorted.rows.map { $0["name"]?.stringValue ?? "" } == ["abe", "kim", "Lee", "Zed"])
        let byCompany = try c.request(#"f3 FETCH {"entity":"Employee","sort":[{"key":"company.name","ascending":false},{"key":"age"}],"result":"ids","limit":2,"offset":1}"#)
        #expect(byCompany.rows == [["$id": "Employee/1"], ["$id": "Employee/4"]], "Beta, Acme (30, 50), nil last when descending")
        #expect(byCompany.payload == ["count": 2])
        #expect(try c.ok(#"n COUNT {"entity":"Employee","predicate":"salary > 8"}"#) == ["count": 2])
        let plan = try #require(try c.ok(#"x EXPLAIN {"entity":"Employee","predicate":"age > 3","sort":[{"key":"name"}]}"#))
        let words = plan["plan"]?.stringValue ?? ""
        #expect(words.contains("filter: age > 3") && words.contains("sort:"), "\(words)")
        let bad = try c.fails(#"e1 FETCH {"entity":"Employee","predicate":"age >>> 3"}"#, "PREDICATE")
        #expect(bad.finalLine.contains(#""position":5"#))
        try c.fails(#"e2 COUNT {"entity":"Employee","predicate":"nope == 3"}"#, "PREDICATE")
        try c.fails(#"e3 FETCH {"entity":"Employee","sort":[{"key":"nope"}]}"#, "NO_SUCH_PROPERTY")
        try c.fails(#"e4 FETCH {"entity":"Employee","sort":[7]}"#, "BAD_REQUEST")
        #expect(try c.request(#"e4b FETCH {"entity":"Employee","sort":["name"],"result":"ids"}"#).rows.count == 4, "a bare key sorts ascending")
        try c.fails(#"e5 FETCH {"entity":"Employee","predicate":"name == %@"}"#, "PREDICATE")
        // Batches with predicates.
        #expect(try c.ok(#"u BATCH.UPDATE {"entity":"Employee","predicate":"company == nil","values":{"age":26}}"#)?["updated"] == 1)
        #expect(try c.ok(#"d BATCH.DELETE {"entity":"Employee","predicate":"company.name == %@","args":["Beta"]}"#)?["deleted"] == 1)
    }
}
