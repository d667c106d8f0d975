// The page table's two checkpoint passes against a plain model: the work list (every page with a
// log version at or below the target that is newer than what was already copied, that
// version's frame and cached buffer, in page order) and the collapse of the log (each page's
// newest version becomes its page-file copy, the ring and the byte count follow, the cache ends
// within budget). The tables are sparse and dense, with entries at both ends of the slot array,
// versions cached, uncached and recovered, and a budget smaller than the table.

import Testing

@testable import KeelStorage

@Suite("Page table at a checkpoint")
struct PageTableCheckpointTests {
    /// One page's versions as the model keeps them: sequence, frame offset, whether it was cached.
    /// The model holds no buffer (so the table's sweep may evict them); each buffer carries its
    /// page and sequence (0 for a page-file copy) as a mark instead.
    struct ModelVersion {
        var sequence: UInt64
        var offset: UInt64
        var cached: Bool
    }

    static func marked(page: UInt32, sequence: UInt64) -> PageBuffer {
        let b = PageBuffer.zeroed(size: pageSize)
        b.pointer.storeBytes(of: page, toByteOffset: 64, as: UInt32.self)
        b.pointer.storeBytes(of: sequence, toByteOffset: 72, as: UInt64.self)
        return b
    }

    static func mark(_ b: PageBuffer) -> (page: UInt32, sequence: UInt64) { mark(UnsafeRawPointer(b.pointer)) }

    static func mark(_ bytes: UnsafeRawPointer) -> (page: UInt32, sequence: UInt64) {
        (bytes.load(fromByteOffset: 64, as: UInt32.self), bytes.load(fromByteOffset: 72, as: UInt64.self))
    }

    static let pageSize = 4096

    /// Builds a table and its model: `pages` pages out of `slotCount`, each with 1–3 log versions
    /// (some uncached, some recovered), some pages with a cached page-file copy too.
    static func build(slotCount: Int, pages: Int, seed: UInt64, budgetPages: Int)
        -> (PageTable, [UInt32: [ModelVersion]], Set<UInt32>)
    {
        var rng = SeededRandom(seed: seed)
        var table = PageTable(budgetBytes: budgetPages * pageSize, pageSize: pageSize)
        var model: [UInt32: [ModelVersion]] = [:]
        var bases = Set<UInt32>()
        var chosen = Set<UInt32>()
        // Always the first and last slots, so lookaheads meet both ends of the array.
        chosen.insert(0)
        chosen.insert(UInt32(slotCount - 1))
        while chosen.count < pages { chosen.insert(UInt32(rng.next() % UInt64(slotCount))) }
        // Page-file copies first (cached before any log version exists, as a read would).
        for page in chosen.sorted() where rng.next() % 3 == 0 {
            if table.cache(marked(page: page, sequence: 0), page: PageNumber(page), sequence: .pageFile) { bases.insert(page) }
        }
        // Log versions in commit order: sequences ascend across commits, each page at most once
        // per commit.
        var sequence: UInt64 = 0
        for round in 0..<3 {
            for page in chosen.sorted() where round == 0 || rng.next() % 2 == 0 {
                sequence += 1
                let offset = sequence * 4128
                let ref = LogFrameReference(
                    offset: LogPosition(offset), storedLength: UInt32(pageSize), compressed: false,
                    previousChecksum: 0, checksum: UInt32(truncatingIfNeeded: sequence))
                if rng.next() % 5 == 0 {
                    table.addRecoveredVersion(PageNumber(page), sequence: FrameSequence(sequence), frame: ref)
                    model[page, default: []].append(ModelVersion(sequence: sequence, offset: offset, cached: false))
                } else {
                    table.addVersion(
                        PageNumber(page), sequence: FrameSequence(sequence), frame: ref, buffer: marked(page: page, sequence: sequence))
                    model[page, default: []].append(ModelVersion(sequence: sequence, offset: offset, cached: true))
                }
            }
        }
        return (table, model, bases)
    }

    @Test("the work list is the newest version at or below the target, newer than the last copy, page by page",
          arguments: [(64, 60), (5_000, 40), (5_000, 2_000), (20_000, 9_000)])
    func workList(slotCount: Int, pages: Int) {
        let (table, model, _) = Self.build(slotCount: slotCount, pages: pages, seed: UInt64(slotCount * 31 + pages), budgetPages: 1 << 20)
        let maxSequence = model.values.flatMap { $0 }.map(\.sequence).max() ?? 0
        for (target, backfilled) in [(maxSequence, 0), (maxSequence / 2, 0), (maxSequence, maxSequence / 3), (maxSequence / 2, maxSequence / 2)] {
            let work = table.checkpointWork(target: FrameSequence(target), backfilled: FrameSequence(backfilled))
            var expected: [(UInt32, ModelVersion)] = []
            for page in model.keys.sorted() {
                guard let v = model[page]!.last(where: { $0.sequence <= target }), v.sequence > backfilled else { continue }
                expected.append((page, v))
            }
            #expect(work.count == expected.count, "target \(target), backfilled \(backfilled)")
            for (got, (page, v)) in zip(work, expected) {
                #expect(got.page.rawValue == page)
                #expect(got.frame.offset.rawValue == v.offset, "page \(page)")
                if let b = got.bytes {
                    #expect(v.cached && Self.mark(b) == (page, v.sequence), "page \(page): the bytes of another version")
                } else {
                    #expect(!v.cached, "page \(page): its cached version is missing from the work list")
                }
            }
        }
    }

    @Test("collapsing the log makes each page's newest version its page-file copy, and the cache ends within budget",
          arguments: [(64, 60, 1 << 20), (5_000, 2_000, 1 << 20), (20_000, 9_000, 1 << 20), (20_000, 9_000, 500)])
    func collapse(slotCount: Int, pages: Int, budgetPages: Int) {
        var (table, model, bases) = Self.build(slotCount: slotCount, pages: pages, seed: UInt64(slotCount + pages), budgetPages: budgetPages)
        table.collapseLog()
        #expect(table.cachedBytes == table.cachedPageCount * Self.pageSize)
        #expect(table.cachedBytes <= table.budgetBytes)
        var cached = 0
        let unbounded = budgetPages >= 1 << 20
        for page in Set(model.keys).union(bases).sorted() {
            #expect(table.logEntry(page) == nil, "page \(page) still has log versions")
            let newest = model[page]?.last
            switch table.find(page, at: FrameSequence(UInt64.max)) {
            case .buffer(let b):
                cached += 1
                // The newest version's buffer, or for a page without log versions its own copy.
                #expect(Self.mark(b) == (page, newest?.sequence ?? 0), "page \(page): the cached copy is not its newest version")
                if let newest { #expect(newest.cached, "page \(page): a version that was never cached") }
            case .pageFile:
                // Uncached: the newest version was not cached, or (small budget) the sweep evicted it.
                if unbounded { #expect(newest.map { !$0.cached } ?? !bases.contains(page), "page \(page): a cached copy was dropped without need") }
            case .log:
                Issue.record("page \(page) is still found in the log")
            }
        }
        if unbounded {
            let expected = model.values.filter { $0.last!.cached }.count + bases.filter { model[$0] == nil }.count
            #expect(cached == expected)
        }
        #expect(cached <= table.cachedPageCount)
    }

    @Test("cached page-file copies through caching past the budget (held buffers kept, found as themselves), dropBase and the log's collapse (each page its own buffer)")
    func baseCopies() {
        var rng = SeededRandom(seed: 7)
        var table = PageTable(budgetBytes: 40 * Self.pageSize, pageSize: Self.pageSize)
        var held: [UInt32: PageBuffer] = [:]  // buffers a "transaction" still holds: never evicted (I16)
        for round in 0..<6 {
            for _ in 0..<60 {
                let page = UInt32(rng.next() % 150)
                let b = Self.marked(page: page, sequence: 0)
                if table.cache(b, page: PageNumber(page), sequence: .pageFile), rng.next() % 4 == 0 { held[page] = b }
            }
            for page in held.keys {
                // A held copy stays cached, found with its own bytes.
                guard case .buffer(let b) = table.find(page, at: FrameSequence(UInt64.max)) else {
                    Issue.record("round \(round): page \(page), held, was evicted")
                    continue
                }
                #expect(b === held[page], "round \(round): page \(page)")
            }
            // Dropped copies are gone whoever holds them (a checkpoint rewrote those pages).
            let dropped = (0..<10).map { _ in PageNumber(UInt32(rng.next() % 150)) }
            table.dropBase(of: dropped)
            for page in dropped { held[page.rawValue] = nil }
            if round % 2 == 1 { held.removeAll() }
        }
        // Log versions collapsed onto pages with and without a page-file copy.
        for page in UInt32(0)..<150 where page % 3 == 0 {
            let ref = LogFrameReference(
                offset: LogPosition(UInt64(page) * 4128), storedLength: UInt32(Self.pageSize), compressed: false,
                previousChecksum: 0, checksum: page)
            table.addVersion(PageNumber(page), sequence: FrameSequence(UInt64(page) + 1), frame: ref, buffer: Self.marked(page: page, sequence: UInt64(page) + 1))
        }
        table.collapseLog()
        for page in UInt32(0)..<150 {
            if case .buffer(let b) = table.find(page, at: FrameSequence(UInt64.max)) {
                #expect(Self.mark(b).page == page, "page \(page): another page's buffer")
            }
        }
    }
}
