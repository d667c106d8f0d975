// A checkpoint copies from the cached buffers its work list names without retaining them
// (`PageTable.checkpointWork`, Performance.md round cascade6): while it copies, the page table's
// sweep must keep every log version's buffer (`logVersionsPinned`), or a reader's page read that
// evicts one hands its memory to the next read (the table's spares) and the checkpoint writes
// another page's bytes into the page file. Here: the table's sweep with the pin set and cleared,
// and a store whose checkpoint, in the middle of its copy, meets readers that push the cache far
// past its budget.

import Foundation
import Synchronization
import Testing

@testable import KeelStorage

@Suite("A checkpoint's unretained work list")
struct CheckpointPinTests {
    static let pageSize = 4096

    @Test("while log versions are pinned the sweep evicts only page-file copies; unpinned it evicts log versions again")
    func sweepKeepsPinnedLogVersions() {
        var table = PageTable(budgetBytes: 8 * Self.pageSize, pageSize: Self.pageSize)
        // Eight log versions fill the budget; their buffers are held by the table alone.
        for page in 0..<8 {
            let buffer = PageTableCheckpointTests.marked(page: UInt32(page), sequence: UInt64(page + 1))
            let ref = LogFrameReference(
                offset: LogPosition(UInt64(page + 1) * 4128), storedLength: UInt32(Self.pageSize), compressed: false,
                previousChecksum: 0, checksum: UInt32(page))
            table.addVersion(PageNumber(UInt32(page)), sequence: FrameSequence(UInt64(page + 1)), frame: ref, buffer: buffer)
        }
        let work = table.checkpointWork(target: FrameSequence(8), backfilled: FrameSequence(0))
        #expect(work.count == 8 && work.allSatisfy { $0.bytes != nil })
        table.logVersionsPinned = true
        // Page-file copies of 40 other pages, read while the checkpoint copies: each one puts the
        // cache over budget and sweeps.
        for page in 100..<140 {
            _ = table.cache(PageTableCheckpointTests.marked(page: UInt32(page), sequence: 0), page: PageNumber(UInt32(page)), sequence: .pageFile)
        }
        for item in work {
            guard case .buffer(let b) = table.find(item.page.rawValue, at: FrameSequence(8)) else {
                Issue.record("page \(item.page.rawValue): its log version was evicted while pinned")
                continue
            }
            #expect(UnsafeRawPointer(b.pointer) == item.bytes, "page \(item.page.rawValue): another buffer")
            #expect(PageTableCheckpointTests.mark(item.bytes!) == (item.page.rawValue, UInt64(item.page.rawValue + 1)))
        }
        // Unpinned, the next reads sweep log versions out like any other buffer.
        table.logVersionsPinned = false
        for page in 200..<240 {
            _ = table.cache(PageTableCheckpointTests.marked(page: UInt32(page), sequence: 0), page: PageNumber(UInt32(page)), sequence: .pageFile)
        }
        #expect(table.cachedBytes <= table.budgetBytes)
        var logCached = 0
        for page in 0..<8 {
            if case .buffer = table.find(UInt32(page), at: FrameSequence(8)) { logCached += 1 }
        }
        #expect(logCached < 8, "no log version was evicted once unpinned")
    }

    @Test("readers that overrun the cache during a checkpoint's copy do not change what it writes", .timeLimit(.minutes(2)))
    func readersDuringCopy() throws {
        let hook = CopyHook()
        var options = StoreOptions()
        options.fileSystem = FaultInjectingFileSystem(wrapping: InMemoryFileSystem()) { path in
            if path.hasSuffix("-wal") { hook.logRead() }
        }
        options.syncMode = .normal
        options.cacheSizeBytes = 48 * Self.pageSize
        options.checkpointThresholdBytes = 1 << 40  // checkpoints only when the test asks
        let path = "/db/pin.keel"
        let store = try Store.open(at: path, options: options)
        // "other" lives in the page file: reading it all later overruns the cache several times.
        try store.write { txn in
            let tree = try txn.createTree("other")
            for i in 0..<6_000 { try tree.put(key: key(i), value: value("other", i, 0)) }
        }
        try store.checkpoint()
        // "t" in the log: far more pages than the cache holds, so the checkpoint finds some of its
        // versions cached (copied unretained) and some not (read from the log: the hook).
        try store.write { txn in
            let tree = try txn.createTree("t")
            for i in 0..<4_000 { try tree.put(key: key(i), value: value("t", i, 0)) }
        }
        try store.write { txn in
            let tree = try #require(try txn.tree("t"))
            for i in stride(from: 0, to: 4_000, by: 3) { try tree.put(key: key(i), value: value("t", i, 1)) }
        }
        // At the checkpoint's first log read (mid-copy, on its own thread), a reader reads all of
        // "other" twice: hundreds of page-file reads through a 48-page cache.
        hook.arm {
            for _ in 0..<2 {
                try store.read { txn in
                    let tree = try #require(try txn.tree("other"))
                    for i in stride(from: 0, to: 6_000, by: 5) { #expect(try tree.get(key(i)) == value("other", i, 0)) }
                }
            }
        }
        let report = try store.checkpoint()
        #expect(report.logReset)
        #expect(hook.fired, "the checkpoint read no log frame: every version was cached")
        let evictions = try store.statistics().cacheEvictions
        #expect(evictions > 100, "the readers did not overrun the cache")
        try store.close()

        // Reopened (nothing left in the log), every page comes from the page file the checkpoint wrote.
        let reopened = try Store.open(at: path, options: options)
        defer { try? reopened.close() }
        let verify = try reopened.verify()
        #expect(verify.isClean, "\(verify)")
        try reopened.read { txn in
            let tree = try #require(try txn.tree("t"))
            for i in 0..<4_000 { #expect(try tree.get(key(i)) == value("t", i, i % 3 == 0 ? 1 : 0), "key \(i)") }
        }
    }
}

private func value(_ tree: String, _ i: Int, _ round: Int) -> [UInt8] {
    Array("\(tree) \(i) round \(round) ".utf8) + [UInt8](repeating: UInt8((i &* 7 &+ round) % 251), count: 90)
}

private func key(_ i: Int) -> [UInt8] { Array(String(format: "k%05d", i).utf8) }

/// Runs an action once, at the first log read after it is armed, on the reading thread.
private final class CopyHook: Sendable {
    private let state = Mutex<(action: (@Sendable () throws -> Void)?, running: Bool, fired: Bool)>((nil, false, false))

    func arm(_ action: @escaping @Sendable () throws -> Void) { state.withLock { $0.action = action } }

    var fired: Bool { state.withLock { $0.fired } }

    func logRead() {
        let action: (@Sendable () throws -> Void)? = state.withLock { s in
            guard !s.running, let a = s.action else { return nil }
            s.action = nil
            s.running = true
            return a
        }
        guard let action else { return }
        do { try action() } catch { Issue.record("the reader failed: \(error)") }
        state.withLock {
            $0.running = false
            $0.fired = true
        }
    }
}
