// `Store.snapshot()`: a snapshot that outlives one closure sees one commit in every read until it
// is closed (I5), does not block the writer, and is cut off by the checkpoint when held past the
// log limit (I7) — what managed-object contexts rely on between their saves.

import Testing

@testable import KeelStorage

@Suite("Long-lived snapshots")
struct LongLivedSnapshotTests {
    @Test("I5: every read of a snapshot sees the commit it pinned while the writer moves on")
    func pinned() throws {
        try withVerifiedStore { store in
            try store.write { txn in try txn.createTree("t").put(key: numberedKey(0), value: [1]) }
            let snapshot = try store.snapshot()
            defer { snapshot.close() }
            let pinned = snapshot.transaction
            for i in 1...20 {
                try store.write { txn in
                    try txn.openTree("t").put(key: numberedKey(i), value: [UInt8(i)])
                    _ = try txn.openTree("t").delete(key: numberedKey(0))
                }
                let seen = try snapshot.read { txn in
                    (try txn.tree("t")?.count(), try txn.tree("t")?.get(numberedKey(0)), txn.transaction)
                }
                #expect(seen.0 == 1 && seen.1 == [1] && seen.2 == pinned, "after commit \(i): \(seen)")
            }
            let fresh = try store.snapshot()
            #expect(try fresh.read { try $0.tree("t")?.count() } == 20)
            #expect(fresh.transaction > pinned)
            fresh.close()
            fresh.close()  // idempotent
            #expect(throws: StorageError.self) { try fresh.read { _ in 0 } }
        }
    }

    @Test("I7: a snapshot held past the log limit gets SNAPSHOT_TOO_OLD and the log is reset")
    func tooOld() throws {
        try withVerifiedStore(configure: { $0.maxLogBytes = 256 << 10 }) { store in
            try store.write { txn in _ = try txn.createTree("t") }
            let snapshot = try store.snapshot()
            defer { snapshot.close() }
            for i in 0..<400 {
                try store.write { txn in try txn.openTree("t").put(key: numberedKey(i), value: randomBytes(2000, seed: UInt64(i))) }
            }
            _ = expectStorageError(.snapshotTooOld) { _ = try snapshot.read { try $0.tree("t")?.count() } }
            let replacement = try store.snapshot()
            #expect(try replacement.read { try $0.tree("t")?.count() } == 400)
            replacement.close()
        }
    }
}
