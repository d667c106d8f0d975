// The page cache stays within its budget without sweeping quadratically: a commit much larger
// than the cache holds all its pages while they enter the cache, so no sweep can free anything
// until the commit returns. Before the fix each added page swept the whole ring (a 1M-key bulk
// insert took minutes instead of seconds); now sweep work is linear in the pages added.

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
}
