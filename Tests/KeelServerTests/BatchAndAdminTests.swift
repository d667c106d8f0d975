// BATCH.*, STATS and the admin commands against a real keeld; and the dispatch table covering
// every command of the protocol's table.

import Foundation
import KeelModel
import KeelProtocol
@testable import KeelServer
import KeelTestSupport
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
        // Nothing matched: nothing written, no transaction (the next save takes txn 4).
        #expect(try c.ok(#"u3 BATCH.UPDATE {"entity":"Employee","predicate":"FALSEPREDICATE","values":{"age":1}}"#) == ["updated": 0, "txn": .null])
        #expect(try c.ok(#"d0 BATCH.DELETE {"entity":"Employee","predicate":"age > 1000"}"#) == ["deleted": 0, "txn": .null])
        // A relationship set by a batch changes the inverses too; "updated" counts the objects
        // the predicate matched (one here), not Company/1 and Company/2, whose employees changed.
        let moved = try #require(try c.ok(#"u4 BATCH.UPDATE {"entity":"Employee","predicate":"name == 'Kim'","values":{"company":"Company/2"}}"#))
        #expect(moved["updated"] == 1, "\(moved)")
        #expect(moved["txn"] == 4, "\(moved)")
        try c.ok("r1 REFRESH")
        #expect(try c.ok(#"g2 GET {"$id":"Company/2"}"#)?["employees"] == ["Employee/1"])

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

    @Test("STATS reports objects per entity, files, pages and cache per store file and the last txn; CHECKPOINT; VERIFY; COMPACT; BACKUP refusals")
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
        let primary = try #require(stats["files"]?["Default"])
        #expect((primary["pageFileBytes"]?.intValue ?? 0) > 0 && (primary["pagesUsed"]?.intValue ?? 0) > 0)
        #expect(primary["pagesFree"]?.intValue != nil && primary["cacheHits"]?.intValue != nil && primary["pageSize"]?.intValue != nil)
        #expect(stats["files"]?["Feedback"]?["pagesUsed"] != nil)
        #expect(stats["pagesUsed"]?.intValue != nil && stats["cacheHits"]?.intValue != nil && stats["unavailable"] == nil)
        try c.ok("cp CHECKPOINT")
        let verified = try #require(try c.ok("v VERIFY"))
        #expect(verified["ok"] == true && (verified["pages"]?.intValue ?? 0) > 0)

        // Free pages to give back: delete most of what a batch wrote.
        let many = (0..<300).map { #"{"name":"C\#($0)","website":"https://example.com/\#(String(repeating: "x", count: 200))"}"# }
        try c.ok(#"m BATCH.INSERT {"entity":"Company","objects":[\#(many.joined(separator: ","))]}"#)
        try c.ok(#"md BATCH.DELETE {"entity":"Company","predicate":"name BEGINSWITH 'C'"}"#)
        try c.ok("cp2 CHECKPOINT")
        let compacted = try #require(try c.ok("co COMPACT"))
        let before = compacted["bytesBefore"]?.intValue ?? 0
        let after = compacted["bytesAfter"]?.intValue ?? 0
        #expect(before > 0 && after > 0 && after < before, "\(compacted)")
        #expect(try c.ok("s2 STATS")?["files"]?["Default"]?["pagesFree"] == 0)
        #expect(try c.ok(#"n COUNT {"entity":"Company"}"#) == ["count": 2])
        #expect(try c.ok("v2 VERIFY")?["ok"] == true)

        #expect((try c.ok(#"bk BACKUP {"path":"first"}"#)?["bytes"]?.intValue ?? 0) > 0)
        try c.fails(#"bk2 BACKUP {"path":"first"}"#, "BAD_REQUEST")
        for bad in ["../out", "/tmp/out", "a/../../out", "", "./x", "x.partial"] {
            try c.fails(#"bk3 BACKUP {"path":"\#(bad)"}"#, "BAD_REQUEST")
        }
        #expect(try c.ok(#"bk4 BACKUP {"path":"daily/second"}"#)?["bytes"] != nil, "a name may have folders under the backup folder")
        #expect(FileManager.default.fileExists(atPath: keeld.folder + "/backups/daily/second"), "one backup file")
        #expect(!FileManager.default.fileExists(atPath: keeld.folder + "/backups/daily/second.partial"))
        #expect(!FileManager.default.fileExists(atPath: keeld.folder + "/out"))
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
