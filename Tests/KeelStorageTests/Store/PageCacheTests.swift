// The page cache stays within its budget without sweeping quadratically: a commit much larger
// than the cache holds all its pages while they enter the cache, so no sweep can free anything
// until the commit returns. Before the fix each added page swept the whole ring (a 1M-key bulk
// insert took minutes instead of seconds); now sweep work is linear in the pages added.
// Evicted buffers are reused for later page reads, never one that a transaction still holds; a
// read transaction keeps the branch pages it crossed, and is still cut off by a checkpoint. Its
// table of kept branches (a slot per page number modulo 64) hands back the page asked for when
// pages share a slot, and keeps at most one buffer per slot.

import Testing

@testable import KeelStorage

@Suite("Page cache")
struct PageCacheTests {
    @Test("I16: a commit of many more pages than the cache holds sweeps linearly, then the cache is back within budget")
    func largeCommitSweepsLinearly() throws {
        let fs = InMemoryFileSystem()
        let store = try openTestStore(fs) { options in
            options.cacheSizeBytes = 32 * 4096
            options.checkpointThresholdBytes = 1 << 30
            options.maxLogBytes = 2 << 30
        }
        defer { try? store.close() }
        let pager = try store.pager()
        try store.write { txn in
            let tree = try txn.createTree("t")
            for i in 0..<20_000 { try tree.put(key: numberedKey(i), value: randomBytes(100, seed: UInt64(i))) }
        }
        let (steps, cached, budget) = pager.state.withLock { s in
            (s.table.sweepSteps, s.table.cachedBytes, s.table.budgetBytes)
        }
        let pages = try store.read { txn in try txn.tree("t")!.count() } / 20  // safe: created above
        #expect(cached <= budget, "the cache holds \(cached) bytes over its \(budget)-byte budget after the commit")
        // Linear: a few sweeps of the ring per page added (about 1,000 pages here), far from the
        // ~pages² / 2 = 500,000 steps of one full sweep per page.
        #expect(steps < 40 * UInt64(max(pages, 1_000)), "\(steps) sweep steps for about \(pages) pages")
        #expect(try store.read { txn in try txn.tree("t")?.get(numberedKey(19_999)) } == randomBytes(100, seed: 19_999))
    }

    @Test("I16: evicted buffers are reused for later reads, never a buffer a transaction still holds")
    func recycledBuffersAreNeverHeldOnes() throws {
        let fs = InMemoryFileSystem()
        let store = try openTestStore(fs) { $0.cacheSizeBytes = 16 * 4096 }
        defer { try? store.close() }
        let count = 3_000
        try store.write { txn in
            let tree = try txn.createTree("t")
            for i in 0..<count { try tree.put(key: numberedKey(i), value: randomBytes(200, seed: UInt64(i))) }
        }
        try store.checkpoint()  // every page now comes from the page file
        let pager = try store.pager()
        let root = try store.read { txn in try #require(try txn.tree("t")).btree.root }
        let (id, snapshot, _) = pager.beginRead()
        defer { pager.endRead(id) }
        // Hold the leaves of a few keys, as a reader in the middle of using them would.
        let pages = ReadPages(pager: pager, snapshot: snapshot)
        var held: [(PageBuffer, Bytes)] = []
        for i in stride(from: 0, to: count, by: 500) {
            let location = try numberedKey(i).withUnsafeBytes { k in try BTree(root: root).locate(k, in: pages) }
            guard case .inline(_, let buffer) = location else {
                Issue.record("key \(i) not found inline")
                continue
            }
            held.append((buffer, Array(buffer.readOnlyBytes)))
        }
        let evictionsBefore = pager.state.withLock { $0.table.evictions }
        // Churn: read every key twice through a cache of 16 pages.
        for _ in 0..<2 {
            try store.read { txn in
                let tree = try #require(try txn.tree("t"))
                for i in 0..<count { #expect(try tree.get(numberedKey(i)) == randomBytes(200, seed: UInt64(i)), "key \(i)") }
            }
        }
        let (evictions, cached, budget, spare) = pager.state.withLock { s in
            (s.table.evictions, s.table.cachedBytes, s.table.budgetBytes, s.table.takeSpare())
        }
        #expect(evictions - evictionsBefore > 100, "the reads evicted \(evictions - evictionsBefore) buffers")
        #expect(spare != nil, "evicted buffers are kept for reuse")
        #expect(cached <= budget, "the cache holds \(cached) bytes over its \(budget)-byte budget")
        for (buffer, bytes) in held {
            #expect(Array(buffer.readOnlyBytes) == bytes, "a held page buffer was overwritten (reused while in use)")
        }
    }

    @Test("I7: a read transaction that kept branch pages is still cut off by a checkpoint on its next lookup")
    func keptBranchesStillCutOff() throws {
        try withVerifiedStore(configure: { $0.maxLogBytes = 256 << 10 }) { store in
            try store.write { txn in
                let tree = try txn.createTree("t")
                for i in 0..<2_000 { try tree.put(key: numberedKey(i), value: randomBytes(100, seed: UInt64(i))) }
            }
            try store.checkpoint()
            let error = try store.read { txn -> StorageError? in
                let tree = try #require(try txn.tree("t"))
                let root = try #require(try txn.readPages.page(tree.btree.root).pageType)
                #expect(root == .branch, "the tree has more than one level")
                #expect(try tree.get(numberedKey(5)) == randomBytes(100, seed: 5))
                for i in 0..<400 {
                    try store.write { w in
                        try w.openTree("t").put(key: numberedKey(10_000 + i), value: randomBytes(2000, seed: UInt64(i)))
                    }
                }
                do {
                    _ = try tree.get(numberedKey(1_500))
                    return nil
                } catch let error as StorageError {
                    return error
                }
            }
            #expect(error?.code == .snapshotTooOld, "\(String(describing: error))")
        }
    }

    @Test("a read transaction's branch table: pages sharing a slot replace each other; every page read is the page asked for")
    func branchTableSlots() throws {
        let fs = InMemoryFileSystem()
        let store = try openTestStore(fs) { $0.cacheSizeBytes = 8 << 20 }
        defer { try? store.close() }
        // 120 trees of a few leaves each under a branch root: more branch pages than the table
        // has slots.
        try store.write { txn in
            for t in 0..<120 {
                let tree = try txn.createTree("t\(t)")
                for i in 0..<12 { try tree.put(key: numberedKey(i), value: randomBytes(1000, seed: UInt64(t * 100 + i))) }
            }
        }
        try store.checkpoint()
        let pager = try store.pager()
        let pageCount = Int(pager.writer.withLock { $0.meta.pageCount })
        let (id, snapshot, _) = pager.beginRead()
        defer { pager.endRead(id) }
        let pages = ReadPages(pager: pager, snapshot: snapshot)
        var random = SeededRandom(seed: testSeed("branchTableSlots"))
        // Every page twice, in a random order: each read must give that page's bytes.
        var order = Array(1..<pageCount) + Array(1..<pageCount)
        order.shuffle(using: &random)
        // One pass over `order`: every page read is that page, a branch still holding its slot is
        // handed back as kept, and the table keeps one buffer per slot in use. Gives the branches.
        func pass(_ label: String) throws -> Set<UInt32> {
            var slotHolder: [Int: UInt32] = [:]  // slot → the branch page last read into it
            var held: [UInt32: PageBuffer] = [:]  // the buffer handed out for that page
            var branches = Set<UInt32>()
            for n in order {
                let number = PageNumber(UInt32(n))
                let expected = try pager.readPage(number, snapshot: snapshot)
                let got = try pages.page(number)
                #expect(Array(got.readOnlyBytes) == Array(expected.readOnlyBytes), "\(label): page \(n)")
                guard got.pageType == .branch else { continue }
                branches.insert(UInt32(n))
                let slot = n & (ReadPages.branchSlots - 1)
                if slotHolder[slot] == UInt32(n), let kept = held[UInt32(n)] {
                    #expect(got === kept, "\(label): branch page \(n) still holds slot \(slot): the kept buffer is handed back")
                }
                slotHolder[slot] = UInt32(n)
                held[UInt32(n)] = got
                #expect(pages.keptBranches == slotHolder.count, "\(label): one kept buffer per slot in use")
            }
            #expect(pages.keptBranches <= ReadPages.branchSlots)
            return branches
        }
        let branches = try pass("first pass")
        #expect(branches.count > ReadPages.branchSlots, "\(branches.count) branch pages: more than the slots, so slots were shared")
        // Emptied (as a snapshot empties its pages between reads): nothing held, and a second pass
        // in another order fills the table again from empty (a slot left naming a released place
        // would hand back another page's buffer, or keep fewer buffers than slots in use).
        #expect(pages.keptBranches > 4, "several slots filled before the reset")
        pages.reset()
        #expect(pages.keptBranches == 0)
        order.shuffle(using: &random)
        #expect(try pass("after the reset") == branches)
    }
}
