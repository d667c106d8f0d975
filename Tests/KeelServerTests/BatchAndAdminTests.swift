// BATCH.*, STATS and the admin commands against a real keeld; and the dispatch table covering
// every command of the protocol's table.

import Foundation
import KeelModel
import KeelProtocol
@testable import KeelServer
import Testing

@Suite("Batches and administration")
struct BatchAndAdminTests {
    @Test("BATCH.INSERT, BATCH.UPDATE and BATCH.DELETE: one transaction each, validated, delete rules applied")
    func batches() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        #expect(try c.ok(#"b1 BATCH.INSERT {"entity":"Company","objects":[{"name":"A"},{"name":"B"}]}"#)
            == ["inserted": 2, "first": "Company/1", "txn": 1])
        #expect(try c.ok(#"b2 BATCH.INSERT {"entity":"Employee","objects":[{"name":"Kim","salary":"1","company":"Company/1"},{"name":"Lee","salary":"2","company":"Company/1"}]}"#)?["inserted"] == 2)
        #expect(try c.ok(#"b3 BATCH.INSERT {"entity":"Company","objects":[]}"#) == ["inserted": 0, "first": .null, "txn": .null])
        // Validation fails the whole batch: nothing written.
        try c.fails(#"b4 BATCH.INSERT {"entity":"Employee","objects":[{"name":"ok","salary":"1"},{"name":"no salary"}]}"#, "VALIDATION")
        try c.fails(#"b5 BATCH.INSERT {"entity":"Company","objects":[{"name":"A"}]}"#, "CONSTRAINT")
        try c.fails(#"b6 BATCH.INSERT {"entity":"Company","objects":[{"name":7}]}"#, "TYPE")
        try c.fails(#"b7 BATCH.INSERT {"entity":"Company","objects":[{"nope":7}]}"#, "NO_SUCH_PROPERTY")
        try c.fails(#"b8 BATCH.INSERT {"entity":"Nope","objects":[]}"#, "NO_SUCH_ENTITY")
        try c.fails(#"b9 BATCH.INSERT {"entity":"Person","objects":[{}]}"#, "BAD_REQUEST")
        #expect(try c.ok(#"n COUNT {"entity":"Employee"}"#) == ["count": 2])

        #expect(try c.ok(#"u1 BATCH.UPDATE {"entity":"Person","values":{"age":44}}"#) == ["updated": 2, "txn": 3])
        try c.ok("r REFRESH")
        #expect(try c.ok(#"g GET {"$id":"Employee/2"}"#)?["age"] == 44)
        try c.fails(#"u2 BATCH.UPDATE {"entity":"Employee","values":{"age":999}}"#, "VALIDATION")
        #expect(try c.ok(#"u3 BATCH.UPDATE {"entity":"Employee","predicate":"FALSEPREDICATE","values":{"age":1}}"#)?["updated"] == 0)

        // Company.employees cascades.
        let deleted = try #require(try c.ok(#"d1 BATCH.DELETE {"entity":"Company","predicate":"TRUEPREDICATE"}"#))
        #expect(deleted["deleted"] == 4)
        try c.ok("r2 REFRESH")
        #expect(try c.ok(#"n2 COUNT {"entity":"Person"}"#) == ["count": 0])
    }

    @Test("A predicate this build cannot evaluate is refused with PREDICATE, never ignored")
    func predicates() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        try c.ok(#"b BATCH.INSERT {"entity":"Company","objects":[{"name":"A"},{"name":"B"}]}"#)
        for line in [
            #"f FETCH {"entity":"Company","predicate":"name == 'A'"}"#,
            #"n COUNT {"entity":"Company","predicate":"name == 'A'"}"#,
            #"u BATCH.UPDATE {"entity":"Company","predicate":"name == 'A'","values":{"registrationNumber":1}}"#,
            #"d BATCH.DELETE {"entity":"Company","predicate":"name == 'A'"}"#,
        ] {
            let reply = try c.request(line)
            if reply.isOK {
                // The predicate engine is in this build: it must have filtered.
                let count = reply.payload?["count"] ?? reply.payload?["updated"] ?? reply.payload?["deleted"]
                #expect(count == 1 || reply.rows.count == 1, "\(line) → \(reply.finalLine)")
            } else {
                #expect(reply.errorCode == "PREDICATE", "\(line) → \(reply.finalLine)")
                #expect(reply.finalLine.contains("\"position\""))
            }
        }
    }

    @Test("STATS counts objects per entity and reports files and the last txn; CHECKPOINT; VERIFY; COMPACT and BACKUP say what is missing")
    func admin() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        try c.ok(#"b BATCH.INSERT {"entity":"Company","objects":[{"name":"A"},{"name":"B"}]}"#)
        try c.ok(#"b2 BATCH.INSERT {"entity":"Feedback","objects":[{"bookUUID":"00000000-0000-0000-0000-000000000001"}]}"#)
        let stats = try #require(try c.ok("s STATS"))
        #expect(stats["objects"]?["Company"] == 2 && stats["objects"]?["Feedback"] == 1 && stats["objects"]?["Employee"] == 0)
        #expect(stats["objects"]?["Person"] == nil, "abstract entities hold no objects of their own")
        #expect(stats["totalObjects"] == 3 && stats["lastTxn"] == 2)
        #expect((stats["files"]?["Default"]?["pageFileBytes"]?.intValue ?? 0) > 0)
        #expect(stats["files"]?["Feedback"] != nil)
        try c.ok("cp CHECKPOINT")
        #expect(try c.ok("v VERIFY")?["ok"] == true)
        #expect(try c.fails("co COMPACT", "BAD_REQUEST").errorMessage?.contains("not available") == true)
        #expect(try c.fails(#"bk BACKUP {"path":"b1"}"#, "BAD_REQUEST").errorMessage?.contains("not available") == true)
    }

    @Test("Every command of the protocol's table is dispatched: answered on the connection or by a session handler")
    func dispatchCoversTheTable() {
        for command in CommandTable.all {
            let handled = ConnectionCommands.names.contains(command.name) || Session.handlers[command.name] != nil
            #expect(handled, "\(command.name) has no handler")
        }
        #expect(Set(Session.handlers.keys).isSubset(of: Set(CommandTable.all.map(\.name))))
        #expect(ConnectionCommands.names == ["HELLO", "PING", "QUIT", "MODEL"], "only these are answered without a store")
    }
}
