// Pages read a batch at a time (`Pager.readPages`, `ReadPages.pages`): every buffer is the one
// `readPage` gives for its number at the reader's snapshot — cached page-file copies, log
// versions, pages not cached, repeats, a later commit's versions unseen — and a branch among them
// is kept as `page(_:)` keeps it. The page table's hint reads each slot's object addresses as
// bits (no reference taken): they are the slot's own objects. `lookUpEach` through a store (its
// leaves found through the branches first, then read together) finds what a seek finds, with
// few pages cached, and sees its snapshot's tree after a concurrent save split its leaves.

import Testing

@testable import KeelStorage

@Suite("Pages read in batches")
struct PageBatchTests {
    /// A store of one tree "t" (`count` keys, 200-byte values) through a cache of `cachePages`
    /// pages, checkpointed, then `logged` keys rewritten (log versions, not checkpointed).
    func store(count: Int, cachePages: Int, logged: Int) throws -> Store {
        let store = try openTestStore(InMemoryFileSystem()) { options in
            options.cacheSizeBytes = cachePages * 4096
            options.checkpointThresholdBytes = 64 << 20  // the log versions stay in the log
        }
        try store.write { txn in
            let tree = try txn.createTree("t")
            for i in 0..<count { try tree.put(key: numberedKey(i), value: randomBytes(200, seed: UInt64(i))) }
        }
        try store.checkpoint()
        try store.write { txn in
            let tree = try txn.openTree("t")
            for i in stride(from: 0, to: count, by: max(1, count / max(1, logged))).prefix(logged) {
                try tree.put(key: numberedKey(i), value: randomBytes(200, seed: UInt64(i) + 1_000_000))
            }
        }
        return store
    }

    @Test("a batch gives each page as readPage gives it: cached, logged, not cached, repeated; a later commit unseen")
    func batchesAsSinglePages() throws {
        let store = try store(count: 4_000, cachePages: 24, logged: 40)
        defer { try? store.close() }
        let pager = try store.pager()
        let pageCount = Int(pager.writer.withLock { $0.meta.pageCount })
        let (id, snapshot, _) = pager.beginRead()
        defer { pager.endRead(id) }
        // The snapshot's bytes of every page, read one at a time before anything changes.
        var before: [[UInt8]] = [[]]
        for n in 1..<pageCount { before.append(Array(try pager.readPage(PageNumber(UInt32(n)), snapshot: snapshot).readOnlyBytes)) }
        // A commit after the snapshot rewrites many pages: the batches must not see it.
        try store.write { txn in
            let tree = try txn.openTree("t")
            for i in stride(from: 0, to: 4_000, by: 7) { try tree.put(key: numberedKey(i), value: randomBytes(300, seed: UInt64(i) + 7)) }
        }
        let pages = ReadPages(pager: pager, snapshot: snapshot)
        var random = SeededRandom(seed: testSeed("batchesAsSinglePages"))
        var logged = 0, cached = 0, uncached = 0
        for round in 0..<400 {
            // 1–12 numbers, some repeated, some next to each other.
            var numbers: [PageNumber] = []
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                let n = Int.random(in: 0..<4, using: &random) == 0 && !numbers.isEmpty
                    ? Int(numbers[numbers.count - 1].rawValue) : Int.random(in: 1..<pageCount, using: &random)
                numbers.append(PageNumber(UInt32(n)))
            }
            for number in numbers {
                let (log, version) = pager.state.withLock { ($0.table.slotObjects(number.rawValue).log, $0.table.find(number.rawValue, at: snapshot)) }
                if log != nil { logged += 1 }
                switch version {
                case .buffer: cached += 1
                case .log, .pageFile: uncached += 1
                }
            }
            // After what the caller already holds: appended, the rest of `out` untouched.
            var out = [PageBuffer.zeroed(size: 4096)]
            let through = round % 2 == 0
            if through { try pages.pages(numbers, into: &out) } else { try pager.readPages(numbers, snapshot: snapshot, into: &out) }
            #expect(out.count == numbers.count + 1, "round \(round)")
            #expect(out[0].readOnlyBytes.allSatisfy { $0 == 0 }, "round \(round): the buffer before the batch")
            for (k, number) in numbers.enumerated() where k + 1 < out.count {
                #expect(Array(out[k + 1].readOnlyBytes) == before[Int(number.rawValue)], "round \(round): page \(number.rawValue)")
            }
        }
        #expect(logged > 0 && cached > 0 && uncached > 0, "logged \(logged), cached \(cached), not cached \(uncached)")
    }

    @Test("a branch read in a batch is kept by the read transaction as a single read keeps it")
    func batchKeepsBranches() throws {
        let store = try store(count: 4_000, cachePages: 4_000, logged: 0)
        defer { try? store.close() }
        let pager = try store.pager()
        let root = try store.read { txn in try #require(try txn.tree("t")).btree.root }
        let (id, snapshot, _) = pager.beginRead()
        defer { pager.endRead(id) }
        let pages = ReadPages(pager: pager, snapshot: snapshot)
        #expect(try pager.readPage(root, snapshot: snapshot).pageType == .branch)
        var out: [PageBuffer] = []
        try pages.pages([root, root], into: &out)
        #expect(pages.keptBranches == 1, "the root branch kept once")
        #expect(try pages.page(root) === out[0], "the kept buffer is the batch's")
    }

    @Test("the page table's hint reads each slot's own objects (no reference taken)")
    func slotObjects() throws {
        #expect(MemoryLayout<PageSlot>.offset(of: \PageSlot.base) == PageTable.baseOffset)
        #expect(MemoryLayout<PageSlot>.offset(of: \PageSlot.log) == PageTable.logOffset)
        #expect(MemoryLayout<PageBuffer?>.size == MemoryLayout<UnsafeRawPointer>.size)
        #expect(MemoryLayout<PageEntry?>.size == MemoryLayout<UnsafeRawPointer>.size)
        let store = try store(count: 2_000, cachePages: 4_000, logged: 30)
        defer { try? store.close() }
        let pager = try store.pager()
        let pageCount = Int(pager.writer.withLock { $0.meta.pageCount })
        let (id, snapshot, _) = pager.beginRead()
        defer { pager.endRead(id) }
        var withBase = 0, withLog = 0
        for n in 1..<pageCount {
            let number = PageNumber(UInt32(n))
            let buffer = try pager.readPage(number, snapshot: snapshot)  // cached now
            let (base, log, version) = pager.state.withLock { s in
                let (base, log) = s.table.slotObjects(number.rawValue)
                return (base, log, s.table.find(number.rawValue, at: snapshot))
            }
            guard case .buffer(let found) = version else {
                Issue.record("page \(n) not cached after its read")
                continue
            }
            #expect(found === buffer)
            if log != nil {
                withLog += 1
            } else {
                #expect(base == UnsafeRawPointer(Unmanaged.passUnretained(buffer.storage).toOpaque()), "page \(n): the slot's page-file copy")
                withBase += 1
            }
        }
        #expect(withBase > 0 && withLog > 0, "pages with a page-file copy \(withBase), with log versions \(withLog)")
        #expect(pager.state.withLock { $0.table.slotObjects(UInt32(pageCount + 10_000)) } == (nil, nil) as (UnsafeRawPointer?, UnsafeRawPointer?))
    }

    /// `lookUpEach` over `targets` through `cursor`: the index and value of each key found.
    func lookedUp(_ cursor: inout Cursor, _ targets: [Int]) throws -> [(Int, [UInt8])] {
        let keys = targets.flatMap { numberedKey($0) }  // 9 bytes each
        var out: [(Int, [UInt8])] = []
        try keys.withUnsafeBytes { all in
            try cursor.lookUpEach(targets.count, key: { UnsafeRawBufferPointer(rebasing: all[(9 * $0)..<(9 * $0 + 9)]) }) { i, value in
                out.append((i, [UInt8](value)))
            }
        }
        return out
    }

    @Test("lookUpEach in a read finds what seeks find, with few pages cached and after a concurrent save split its leaves")
    func lookUpEachAcrossSplits() throws {
        let count = 6_000
        let store = try store(count: count, cachePages: 20, logged: 60)
        defer { try? store.close() }
        var random = SeededRandom(seed: testSeed("lookUpEachAcrossSplits"))
        try store.read { txn in
            let tree = try #require(try txn.tree("t"))
            func expected(_ targets: [Int]) throws -> [(Int, [UInt8])] {
                try targets.enumerated().compactMap { i, t in try tree.get(numberedKey(t)).map { (i, $0) } }
            }
            for round in 0..<40 {
                // Ascending targets (present, absent, repeated, far apart), now and then shuffled.
                var targets: [Int] = []
                var at = Int.random(in: 0..<count, using: &random)
                for _ in 0..<Int.random(in: 0...200, using: &random) {
                    targets.append(at)
                    at += [0, 1, 2, Int.random(in: 3...60, using: &random), Int.random(in: 61...3_000, using: &random)][Int.random(in: 0..<5, using: &random)]
                }
                targets = targets.map { $0 % (count + 200) }.sorted()
                if round % 5 == 4 { targets.shuffle(using: &random) }
                let want = try expected(targets)
                var cursor = try tree.cursor()
                let got = try lookedUp(&cursor, targets)
                #expect(got.map(\.0) == want.map(\.0), "round \(round): \(targets.count) targets")
                #expect(got.map(\.1) == want.map(\.1), "round \(round)")
                #expect(!cursor.isValid)
                if round == 20 {
                    // Another transaction splits most leaves (a key between every two, and longer
                    // values) and commits: this read still sees its own tree.
                    try store.write { w in
                        let t = try w.openTree("t")
                        for i in stride(from: 0, to: count, by: 2) {
                            try t.put(key: numberedKey(i) + [0], value: randomBytes(400, seed: UInt64(i) + 99))
                            try t.put(key: numberedKey(i + 1), value: randomBytes(250, seed: UInt64(i) + 98))
                        }
                    }
                }
            }
        }
        // A new read sees the save: the inserted keys found, the rewritten values new.
        try store.read { txn in
            let tree = try #require(try txn.tree("t"))
            let targets = Array(stride(from: 0, to: count, by: 3))
            var cursor = try tree.cursor()
            let got = try lookedUp(&cursor, targets)
            let want = try targets.enumerated().compactMap { i, t in try tree.get(numberedKey(t)).map { (i, $0) } }
            #expect(got.map(\.0) == want.map(\.0) && got.map(\.1) == want.map(\.1))
            #expect(got.count == targets.count)
            let odd = try #require(got.first { targets[$0.0] % 2 == 1 })
            #expect(odd.1 == randomBytes(250, seed: UInt64(targets[odd.0] - 1) + 98))
        }
    }
}
