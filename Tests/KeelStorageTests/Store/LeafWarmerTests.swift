// The leaf warmer (Store/Tree+Warm.swift): a helper thread that looks up a write transaction's
// sorted keys on its base snapshot so that the leaves they need are cached before the writes get
// there. What it must do: bring exactly those leaves into the shared cache (the writer's lookups
// then miss nothing), stay within its lead of the writer, skip what the writer has passed, end
// when told, and start only for a write transaction with enough keys.

import Glibc
import Testing

@testable import KeelStorage

@Suite("Leaf warmer")
struct LeafWarmerTests {
    /// A store of 20,000 keys with 120-byte values (~700 leaves), checkpointed and reopened so
    /// that nothing is cached, with a cache that holds all of it.
    private func coldStore(_ fs: InMemoryFileSystem, create: Bool = true) throws -> Store {
        if create {
            let store = try openTestStore(fs) { $0.cacheSizeBytes = 4096 * 4096 }
            try store.write { txn in
                let tree = try txn.createTree("t")
                for i in 0..<20_000 { try tree.put(key: numberedKey(i), value: randomBytes(120, seed: UInt64(i))) }
            }
            try store.checkpoint()
            try store.close()
        }
        return try openTestStore(fs) { $0.cacheSizeBytes = 4096 * 4096 }
    }

    /// Every 7th key (2,858 keys), in one byte buffer with spans, as the object layer passes them.
    private func keyList(step: Int = 7, count: Int = 20_000) -> (bytes: [UInt8], spans: [(start: Int32, count: Int32)]) {
        var bytes: [UInt8] = []
        var spans: [(start: Int32, count: Int32)] = []
        for i in stride(from: 0, to: count, by: step) {
            let key = numberedKey(i)
            spans.append((Int32(bytes.count), Int32(key.count)))
            bytes.append(contentsOf: key)
        }
        return (bytes, spans)
    }

    private func misses(_ store: Store) throws -> UInt64 { try store.pager().state.withLock { $0.table.misses } }

    /// Looks every listed key up through the write transaction; returns the cache misses it took.
    private func lookUpAll(_ store: Store, _ tree: Tree, _ list: (bytes: [UInt8], spans: [(start: Int32, count: Int32)])) throws -> UInt64 {
        let before = try misses(store)
        for span in list.spans {
            let key = Array(list.bytes[Int(span.start)..<Int(span.start + span.count)])
            let i = Int(String(decoding: key.dropFirst(), as: UTF8.self))!
            #expect(try tree.get(key) == randomBytes(120, seed: UInt64(i)), "key \(i)")
        }
        return try misses(store) - before
    }

    @Test("the helper caches the leaves of every listed key: the writer's lookups then miss none")
    func warmsEveryLeaf() throws {
        let fs = InMemoryFileSystem()
        let list = keyList()
        // Without a warmer, the same lookups on a cold store miss hundreds of leaves (the control).
        do {
            let store = try coldStore(fs)
            let missed = try store.write { txn in try lookUpAll(store, try #require(try txn.tree("t")), list) }
            #expect(missed > 300, "a cold store missed only \(missed) pages")
            try store.close()
        }
        let store = try coldStore(fs, create: false)
        defer { try? store.close() }
        try store.write { txn in
            let tree = try #require(try txn.tree("t"))
            let before = try misses(store)
            let warmer = try #require(tree.warmLeaves(bytes: list.bytes, spans: list.spans, lead: list.spans.count))
            warmer.waitUntilIdle()
            #expect(warmer.keysLookedUp == list.spans.count)
            let warmed = try misses(store) - before
            #expect(warmed > 300, "the helper read only \(warmed) pages")
            #expect(try lookUpAll(store, tree, list) == 0, "the writer still missed pages the helper should have cached")
            warmer.finish()
        }
        try expectVerifies(store, "after warming")
    }

    @Test("the helper stays within its lead of the writer and skips the keys the writer has passed")
    func pacing() throws {
        let store = try withWarmer(step: 10, lead: 10) { _, warmer, list in  // 2,000 keys
            // The writer at key 0: the helper looks up keys 0...10 and waits.
            try waitFor { warmer.keysLookedUp >= 11 }
            usleep(50_000)
            #expect(warmer.keysLookedUp == 11, "looked up \(warmer.keysLookedUp) keys with a lead of 10")
            // The writer jumps to key 1,000: the helper skips to it and looks up 1,000...1,010.
            warmer.advance(to: 1_000)
            try waitFor { warmer.keysLookedUp >= 22 }
            usleep(50_000)
            #expect(warmer.keysLookedUp == 22, "looked up \(warmer.keysLookedUp) keys after the jump")
            // The writer is past the end: the helper ends on its own.
            warmer.advance(to: list.spans.count)
            warmer.waitUntilIdle()
            #expect(warmer.keysLookedUp == 22)
            warmer.finish()  // idempotent after the join
        }
        try store.close()
    }

    @Test("finish stops a helper that is still going; no helper for few keys or in a read transaction")
    func finishAndLimits() throws {
        let store = try withWarmer(step: 1, lead: 100) { tree, warmer, _ in  // 20,000 keys
            try waitFor { warmer.keysLookedUp >= 101 }
            warmer.finish()  // the helper waits at its lead: finish must end it
            let after = warmer.keysLookedUp
            usleep(20_000)
            #expect(warmer.keysLookedUp == after && after <= 101)
            let few = keyList(step: 20_000 / (LeafWarmer.minimumKeys - 1) + 1)
            #expect(few.spans.count < LeafWarmer.minimumKeys)
            #expect(tree.warmLeaves(bytes: few.bytes, spans: few.spans) == nil)
        }
        defer { try? store.close() }
        try store.read { txn in
            let tree = try #require(try txn.tree("t"))
            let list = keyList(step: 1)
            #expect(tree.warmLeaves(bytes: list.bytes, spans: list.spans) == nil)
        }
    }

    @Test("warming while the transaction deletes half the keys (merges and shares) leaves a tree that verifies, also after reopen")
    func warmingUnderDeletes() throws {
        let fs = InMemoryFileSystem()
        let list = keyList(step: 2)  // 10,000 keys
        do {
            let store = try coldStore(fs)
            try store.write { txn in
                let tree = try #require(try txn.tree("t"))
                let warmer = try #require(tree.warmLeaves(bytes: list.bytes, spans: list.spans, lead: 64))
                for (i, span) in list.spans.enumerated() {
                    warmer.advance(to: i)
                    #expect(try tree.delete(key: Array(list.bytes[Int(span.start)..<Int(span.start + span.count)])))
                }
                warmer.finish()
                #expect(try tree.count() == 10_000)
            }
            try expectVerifies(store, "after the deletes")
            try store.close()
        }
        let store = try openTestStore(fs)
        defer { try? store.close() }
        try expectVerifies(store, "after reopen")
        try store.read { txn in
            let tree = try #require(try txn.tree("t"))
            #expect(try tree.count() == 10_000)
            #expect(try tree.get(numberedKey(2)) == nil)
            #expect(try tree.get(numberedKey(3)) == randomBytes(120, seed: 3))
        }
    }

    /// Runs `body` in a write transaction on a cold store with a warmer over every `step`-th key
    /// at `lead`; returns the store, open.
    private func withWarmer(
        step: Int, lead: Int, _ body: (Tree, LeafWarmer, (bytes: [UInt8], spans: [(start: Int32, count: Int32)])) throws -> Void
    ) throws -> Store {
        let store = try coldStore(InMemoryFileSystem())
        let list = keyList(step: step)
        try store.write { txn in
            let tree = try #require(try txn.tree("t"))
            try body(tree, try #require(tree.warmLeaves(bytes: list.bytes, spans: list.spans, lead: lead)), list)
        }
        return store
    }

    private func waitFor(_ condition: () -> Bool) throws {
        for _ in 0..<2_000 where !condition() { usleep(1_000) }
        #expect(condition(), "timed out")
    }
}
