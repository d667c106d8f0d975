// The store-level and admin calls as methods: what keelctl's --socket mode uses.

import KeelClient
import KeelModel
import KeelTestSupport
import Testing

@Suite("KeelConnection: store-level and admin calls")
struct AdminTests {
    @Test("batch insert, update and delete; stats; explain")
    func batchAndStats() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        let inserted = try await connection.batchInsert(entity: "Company", objects: (0..<10).map { ["name": .string("b\($0)"), "registrationNumber": .int(Int64($0))] })
        #expect(inserted.inserted == 10)
        #expect(inserted.first?.hasPrefix("Company/") == true)
        #expect(inserted.txn != nil)
        let updated = try await connection.batchUpdate(entity: "Company", predicate: "registrationNumber >= %@", args: [5], values: ["website": "https://x.example"])
        #expect(updated.count == 5)
        let deleted = try await connection.batchDelete(entity: "Company", predicate: "registrationNumber < $LIMIT", vars: ["LIMIT": 3])
        #expect(deleted.count == 3)
        #expect(try #require(deleted.txn) > (updated.txn ?? 0))
        let nothing = try await connection.batchDelete(entity: "Company", predicate: "name == 'none'")
        #expect(nothing.count == 0)

        let stats = try await connection.stats()
        #expect(stats.objects["Company"] == 7)
        #expect(stats.totalObjects == 7)
        #expect(stats.lastTxn == nothing.txn ?? deleted.txn)
        #expect(stats.fileBytes > 0)
        #expect(stats.connections >= 1)

        let plan = try await connection.explain(["entity": "Company", "predicate": "name == 'b7'"])
        #expect(plan["plan"]?.stringValue?.isEmpty == false)

        // A required value missing: refused, nothing written.
        let bad = await keelError { _ = try await connection.batchInsert(entity: "Company", objects: [["website": "no name"]]) }
        #expect(bad?.code == .type)
        #expect(bad?.message.contains("name") == true)
        #expect(try await connection.stats().totalObjects == 7)
    }

    @Test("checkpoint, compact, verify and backup, for an admin peer")
    func maintenance() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        _ = try await insertCompanies(connection, count: 2000, padding: 50)
        _ = try await connection.batchDelete(entity: "Company", predicate: "name ENDSWITH '0'")
        try await connection.checkpoint()
        let compacted = try await connection.compact()
        #expect(compacted.bytesBefore > 0 && compacted.bytesAfter > 0)
        let report = try await connection.verify()
        #expect(report["ok"] == true)
        let backup = try await connection.backup(path: "copy-1")
        #expect(backup.bytes > 0)
        #expect(backup.path.hasSuffix("copy-1"))
        let twice = await keelError { _ = try await connection.backup(path: "copy-1") }
        #expect(twice != nil)
        #expect(try await connection.request("COUNT", ["entity": "Company"])?["count"] == 1800)
    }

    @Test("admin calls from a peer that is not an admin fail with PERMISSION")
    func permission() async throws {
        let daemon = try LiveDaemon(["adminUIDs": [Int]()])
        let connection = try await daemon.connect()
        for call in [
            { try await connection.checkpoint() }, { _ = try await connection.compact() }, { _ = try await connection.verify() },
            { _ = try await connection.backup(path: "b") }, { _ = try await connection.pruneHistory(through: 1) },
        ] as [() async throws -> Void] {
            let error = await keelError { try await call() }
            #expect(error?.code == .permission)
        }
        _ = try await connection.stats()
    }
}
