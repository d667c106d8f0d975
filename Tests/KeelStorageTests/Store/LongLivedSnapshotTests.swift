// `Store.snapshot()`: a snapshot that outlives one closure sees one commit in every read until it
// is closed (I5), does not block the writer, and is cut off by the checkpoint when held past the
// log limit (I7) — what managed-object contexts rely on between their saves. While a snapshot
// keeps the automatic checkpoint from emptying the log, the checkpoint is retried only after the
// log grows by another quarter of the threshold, not after every commit.

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

    @Test("a snapshot's tree roots, looked up once and kept (TreeRoots), stay its commit's while trees grow, are dropped, created and re-created")
    func cachedRoots() throws {
        try withVerifiedStore { store in
            try store.write { txn in
                try txn.createTree("grows").put(key: numberedKey(0), value: [0])
                try txn.createTree("dropped").put(key: numberedKey(0), value: [1])
            }
            let snapshot = try store.snapshot()
            defer { snapshot.close() }
            // What a snapshot's reads see: each tree's count and first value, nil when it has none.
            func seen(_ s: Snapshot) throws -> [[UInt8]?] {
                try s.read { txn in
                    try ["grows", "dropped", "created"].map { name -> [UInt8]? in
                        guard let tree = try txn.tree(name) else { return nil }
                        var cursor = try tree.cursor()
                        guard try cursor.seekFirst() else { return [] }
                        return [UInt8(try tree.count() % 256)] + (try cursor.value())
                    }
                }
            }
            #expect(try seen(snapshot) == [[1, 0], [1, 1], nil])
            for round in 1...3 {
                try store.write { txn in
                    // Enough keys of 200 bytes to split the root each round.
                    for i in 0..<400 { try txn.openTree("grows").put(key: numberedKey(round * 1000 + i), value: [UInt8](repeating: 7, count: 200)) }
                    if round == 1 {
                        try txn.dropTree("dropped")
                        try txn.createTree("created").put(key: numberedKey(0), value: [2])
                    }
                    if round == 2 {
                        // The name again, a new tree (its root wherever the allocator puts it).
                        let again = try txn.createTree("dropped")
                        for i in 0..<3 { try again.put(key: numberedKey(i), value: [9]) }
                    }
                }
                // Twice: the first read may look up, the second reads what was kept.
                #expect(try seen(snapshot) == [[1, 0], [1, 1], nil], "round \(round)")
                #expect(try seen(snapshot) == [[1, 0], [1, 1], nil], "round \(round), again")
            }
            let fresh = try store.snapshot()
            defer { fresh.close() }
            #expect(try seen(fresh) == [[UInt8(1201 % 256), 0], [3, 9], [1, 2]])
            // Past the limit of kept names, lookups still answer (from the catalog each time).
            let names = (0..<(TreeRoots.limit + 50)).map { "absent-\($0)" }
            for _ in 0..<2 {
                #expect(try fresh.read { txn in try names.allSatisfy { try txn.tree($0) == nil } })
                #expect(try seen(fresh) == [[UInt8(1201 % 256), 0], [3, 9], [1, 2]])
            }
        }
    }

    @Test("TreeRoots: names of one length told apart, in its list and past it, absent names kept as absent, a kept root replaced")
    func rootsListAndRest() {
        let roots = TreeRoots()
        // Equal UTF-8 lengths throughout (and one name a prefix-sharing twin of another), so a
        // search by length alone, or a list entry answering for another name, gives a wrong root.
        let names = (0..<(TreeRoots.listed * 2 + 3)).map { "idx/E.f\($0 < 10 ? "0" : "")\($0)" }
        #expect(Set(names.map(\.utf8.count)).count == 1)
        func root(_ i: Int) -> PageNumber? { i % 5 == 4 ? nil : PageNumber(UInt32(100 + i)) }
        for name in names { #expect(roots[name] == nil) }
        for (i, name) in names.enumerated() { roots[name] = .some(root(i)) }
        #expect(roots.kept == names.count)
        for (i, name) in names.enumerated().reversed() {
            #expect(roots[name] == .some(root(i)), "\(name)")
        }
        #expect(roots["idx/E.f99"] == nil)  // same length, never looked up
        #expect(roots["idx/E.f0"] == nil)  // a kept name's prefix
        // A name kept again (in the list and in the dictionary) takes the new root, not a second entry.
        roots[names[1]] = .some(PageNumber(7))
        roots[names[TreeRoots.listed + 1]] = .some(PageNumber(8))
        #expect(roots.kept == names.count)
        #expect(roots[names[1]] == .some(PageNumber(7)) && roots[names[TreeRoots.listed + 1]] == .some(PageNumber(8)))
        #expect(roots[names[0]] == .some(root(0)) && roots[names[2]] == .some(root(2)))
    }

    @Test("a snapshot's reads find each of many trees of equal-length names, the list's and the dictionary's, as its commit has them")
    func manyCachedRoots() throws {
        try withVerifiedStore { store in
            let names = (0..<(TreeRoots.listed + 6)).map { "tree-\($0 < 10 ? "0" : "")\($0)" }
            try store.write { txn in
                for (i, name) in names.enumerated() where i % 4 != 3 {
                    try txn.createTree(name).put(key: numberedKey(0), value: [UInt8(i)])
                }
            }
            let snapshot = try store.snapshot()
            defer { snapshot.close() }
            // Each tree's first value (its position), nil for the names with no tree.
            let expected = names.indices.map { $0 % 4 == 3 ? nil : [UInt8($0)] }
            func seen(_ order: [String]) throws -> [[UInt8]?] {
                try snapshot.read { txn in
                    try order.map { name -> [UInt8]? in try txn.tree(name)?.get(numberedKey(0)) }
                }
            }
            #expect(try seen(names) == expected)
            // A later commit creates the missing trees and changes the others: the snapshot's
            // kept roots (looked up forward, read back reversed) still answer as its commit had them.
            try store.write { txn in
                for (i, name) in names.enumerated() { try txn.openTree(name).put(key: numberedKey(0), value: [UInt8(200 + i)]) }
            }
            #expect(try seen(names.reversed()) == expected.reversed())
            let fresh = try store.snapshot()
            defer { fresh.close() }
            #expect(try fresh.read { txn in try names.map { try txn.tree($0)?.get(numberedKey(0)) } } == names.indices.map { [UInt8(200 + $0)] })
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

    @Test("I7: while a snapshot holds the log, automatic checkpoints run once per quarter threshold of growth; once it closes the next one empties the log")
    func pacedCheckpoints() throws {
        let threshold: UInt64 = 64 << 10
        try withVerifiedStore(configure: { $0.checkpointThresholdBytes = threshold; $0.compressLog = false }) { store in
            try store.write { txn in _ = try txn.createTree("t") }
            let snapshot = try store.snapshot()
            let before = try store.statistics().checkpoints
            var commits = 0
            // Each commit logs about two 4 KiB pages: grow the log to four times the threshold.
            while try store.statistics().logFrameBytes < 4 * threshold {
                try store.write { txn in try txn.openTree("t").put(key: numberedKey(commits), value: randomBytes(100, seed: UInt64(commits))) }
                commits += 1
            }
            let held = try store.statistics()
            // Past the threshold every commit used to run one (each with two fsyncs under the
            // writer lock); now one, then one per further quarter of it: (4 - 1) / (1/4) = 12.
            #expect(held.checkpoints - before <= 13, "\(held.checkpoints - before) checkpoints for \(commits) commits")
            #expect(held.checkpoints - before >= 1)
            #expect(held.logFrameBytes > threshold, "the snapshot keeps the log from being emptied")
            #expect(try snapshot.read { try $0.tree("t")?.count() } == 0)
            snapshot.close()
            try store.write { txn in try txn.openTree("t").put(key: numberedKey(commits), value: [1]) }
            let after = try store.statistics()
            #expect(after.logFrameBytes == 0, "with no reader left, the next commit's checkpoint empties the log")
            #expect(try store.read { try $0.tree("t")?.count() } == commits + 1)
        }
    }

    /// Tree `t`: 2,000 keys of 100 bytes (`randomBytes(100, seed: i)`), a branch root over dozens
    /// of leaves, so its reads keep branch pages.
    static func writeBranchTree(_ store: Store) throws {
        try store.write { txn in
            let tree = try txn.createTree("t")
            for i in 0..<2_000 { try tree.put(key: numberedKey(i), value: randomBytes(100, seed: UInt64(i))) }
        }
    }

    @Test("a snapshot's reads share one ReadPages, emptied at each read's end (no buffer held between reads); a read whose transaction or cursor outlives it keeps its own")
    func reusedReadPages() throws {
        try withVerifiedStore { store in
            try Self.writeBranchTree(store)
            try store.write { txn in try txn.createTree("u").put(key: numberedKey(0), value: [1]) }
            let snapshot = try store.snapshot()
            defer { snapshot.close() }
            #expect(snapshot.sparePages == nil, "no read yet")
            // The pages a read ran on, and how many branches it kept by its end.
            func read(_ keys: [Int], tree: String = "t") throws -> (ObjectIdentifier, Int, [[UInt8]?]) {
                try snapshot.read { txn in
                    let t = try #require(try txn.tree(tree))
                    let values = try keys.map { try t.get(numberedKey($0)) }
                    return (ObjectIdentifier(txn.readPages), txn.readPages.keptBranches, values)
                }
            }
            let first = try read([5, 1_999])
            #expect(first.1 > 0, "the read kept the root branch")
            #expect(first.2 == [randomBytes(100, seed: 5), randomBytes(100, seed: 1_999)])
            let spare = try #require(snapshot.sparePages)
            #expect(spare.id == first.0 && spare.keptBranches == 0, "kept for the next read, its buffers let go")
            // The next reads run on the same pages, and find every page they ask for (a table
            // emptied of its buffers but not of its slots would hand back a buffer that is gone).
            for round in 0..<3 {
                let keys = (0..<20).map { ($0 * 97 + round * 31) % 2_000 }
                let again = try read(keys)
                #expect(again.0 == first.0, "round \(round): the spare pages reused")
                #expect(again.2 == keys.map { randomBytes(100, seed: UInt64($0)) }, "round \(round)")
                #expect(try read([0], tree: "u").2 == [[1]])
                #expect(snapshot.sparePages?.keptBranches == 0)
            }
            // A transaction kept past its read: that read's pages are not handed to the next one,
            // and the kept transaction stays ended while the next read runs.
            var escaped: ReadTransaction?
            try snapshot.read { escaped = $0 }
            let kept = try #require(escaped)
            #expect(snapshot.sparePages == nil, "pages still referenced are not kept for reuse")
            let next = try snapshot.read { txn in (ObjectIdentifier(txn.readPages), kept.isOpen, txn.isOpen) }
            #expect(next.0 != ObjectIdentifier(kept.readPages) && !next.1 && next.2)
            escaped = nil
            // A cursor kept past its read reads through that read's pages: the same.
            var cursor: Cursor?
            try snapshot.read { txn in cursor = try #require(try txn.tree("t")).cursor() }
            #expect(snapshot.sparePages == nil)
            let afterCursor = try read([7])
            #expect(afterCursor.0 != ObjectIdentifier(try #require(cursor?.read?.source)))
            #expect(afterCursor.2 == [randomBytes(100, seed: 7)])
            cursor = nil
            #expect(snapshot.sparePages?.id == afterCursor.0, "the next read's own pages kept")
            #expect(try read([8]).0 == afterCursor.0)
        }
    }

    @Test("I5: reused pages see the snapshot's commit after later commits and a checkpoint; the next snapshot reads the new commit on pages of its own")
    func reusedReadPagesAcrossCommits() throws {
        try withVerifiedStore { store in
            try Self.writeBranchTree(store)
            try store.checkpoint()
            let snapshot = try store.snapshot()
            defer { snapshot.close() }
            let keys = [0, 3, 999, 1_000, 1_999]
            func values(_ s: Snapshot) throws -> [[UInt8]?] {
                try s.read { txn in try keys.map { try txn.tree("t")?.get(numberedKey($0)) } }
            }
            let old = keys.map { randomBytes(100, seed: UInt64($0)) }
            #expect(try values(snapshot) == old)
            for round in 1...3 {
                // New values for the keys read, and enough new keys to split leaves and branches.
                try store.write { txn in
                    let tree = try txn.openTree("t")
                    for k in keys { try tree.put(key: numberedKey(k), value: [UInt8(round)]) }
                    for i in 0..<600 { try tree.put(key: numberedKey(10_000 * round + i), value: randomBytes(150, seed: UInt64(i))) }
                }
                try store.checkpoint()
                #expect(try values(snapshot) == old, "round \(round): the snapshot's commit")
                #expect(try snapshot.read { try $0.tree("t")?.count() } == 2_000, "round \(round)")
                let fresh = try store.snapshot()
                #expect(try values(fresh) == keys.map { _ in [UInt8(round)] }, "round \(round): the new commit")
                #expect(try fresh.read { try $0.tree("t")?.count() } == 2_000 + 600 * round)
                #expect(fresh.sparePages != nil && fresh.sparePages?.id != snapshot.sparePages?.id)
                fresh.close()
                #expect(fresh.sparePages == nil, "closing lets the pages go")
                #expect(try values(snapshot) == old, "round \(round), again")
            }
        }
    }
}
