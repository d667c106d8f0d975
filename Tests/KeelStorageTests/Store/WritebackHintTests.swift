// Writeback hints (`StorageFile.startWriteback`): a commit larger than one log chunk starts
// writeback of each full chunk as it is written, so the commit's fdatasync waits for less;
// checkpoints give none (measured slower: Performance.md, round cascade2). They are hints:
// they change no durability rule, so a crash anywhere is what it was without them
// (CrashRecoveryTests crash at every operation; the crash-simulating file takes no hint and its
// torn mode already lets any unsynced write survive). What is checked here: where hints are
// given and where not (small commits, checkpoints, sync mode off), and that a hint that fails
// (writeback already failed: EIO, ENOSPC) is handled like the write it follows: the commit fails
// cleanly and the store goes on (I14).

import Glibc
import Testing

@testable import KeelStorage

@Suite("Writeback hints: large commits start the log's writeback early; a failed hint is a failed write")
struct WritebackHintTests {
    static let logSuffix = "-wal"
    static let pageFileSuffix = ".keel"

    /// No automatic checkpoint: the tests run them.
    static func open(_ fs: any FileSystem, syncMode: SyncMode = .full) throws -> Store {
        try openTestStore(fs, syncMode: syncMode) { $0.checkpointThresholdBytes = 1 << 30 }
    }

    static func commitBaseline(_ store: Store) throws {
        try store.write { txn in
            let t = try txn.createTree("w")
            for i in 0..<40 { try t.put(key: numberedKey(i), value: taggedValue(key: numberedKey(i), version: 1)) }
        }
    }

    /// About 3 MiB of incompressible pages in one commit: three log chunks, three MiB of copies.
    static func commitLarge(_ store: Store) throws {
        try store.write { txn in
            let t = try txn.tree("w")!
            for i in 0..<96 { try t.put(key: numberedKey(i, prefix: "big"), value: randomBytes(30_000, seed: UInt64(i) &+ 11)) }
        }
    }

    static func commitSmall(_ store: Store) throws {
        try store.write { txn in try txn.tree("w")!.put(key: Array("small".utf8), value: Array("one page".utf8)) }
    }

    static let expected = Fixture<StoreContents> {
        let store = try open(InMemoryFileSystem())
        defer { try? store.close() }
        try commitBaseline(store)
        try commitLarge(store)
        return try contents(of: store)
    }

    static let baseline = Fixture<StoreContents> {
        let store = try open(InMemoryFileSystem())
        defer { try? store.close() }
        try commitBaseline(store)
        return try contents(of: store)
    }

    @Test("a large commit hints each full log chunk but the last; small commits and checkpoints none")
    func hintsWhereExpected() throws {
        let faults = FaultInjectingFileSystem(wrapping: InMemoryFileSystem())
        let store = try Self.open(faults)
        try Self.commitBaseline(store)
        try Self.commitSmall(store)
        #expect(faults.operationCount(of: .writeback) == 0, "commits within one chunk give no hint")
        try Self.commitLarge(store)
        let logHints = faults.operationCount(of: .writeback, pathSuffix: Self.logSuffix)
        let frameBytes = try store.statistics().logFrameBytes
        let fullChunks = Int(frameBytes) / WriteAheadLog.chunkBytes
        #expect(logHints >= 2, "about 3 MiB of frames: the full chunks but the last are hinted (\(logHints))")
        #expect(logHints <= fullChunks, "at most one hint per full chunk (\(logHints) for \(frameBytes) bytes)")
        #expect(faults.operationCount(of: .writeback, pathSuffix: Self.pageFileSuffix) == 0, "commits never write the page file")
        let report = try store.checkpoint()
        #expect(report.logReset && report.pagesWritten > 700)
        #expect(faults.operationCount(of: .writeback) == logHints, "a checkpoint leaves writeback to its fsync")
        var expected = try Self.expected.get()
        expected["w"]![Array("small".utf8)] = Array("one page".utf8)
        try expectContents(of: store, equal: expected, "after the checkpoint")
        try store.close()
    }

    @Test("sync mode off gives no hint (no fdatasync follows to profit from it)")
    func noHintsWithoutSync() throws {
        let faults = FaultInjectingFileSystem(wrapping: InMemoryFileSystem())
        let store = try Self.open(faults, syncMode: .off)
        try Self.commitBaseline(store)
        try Self.commitLarge(store)
        try store.checkpoint()
        #expect(faults.operationCount(of: .writeback) == 0)
        try expectContents(of: store, equal: try Self.expected.get(), "sync mode off")
        try store.close()
    }

    /// Counts the hints of the large commit, in a run without faults.
    static func countHints() throws -> (before: Int, commit: Int) {
        let faults = FaultInjectingFileSystem(wrapping: InMemoryFileSystem())
        let store = try open(faults)
        defer { try? store.close() }
        try commitBaseline(store)
        let before = faults.operationCount(of: .writeback)
        try commitLarge(store)
        return (before, faults.operationCount(of: .writeback) - before)
    }

    @Test("I14: EIO or ENOSPC at any writeback hint of a commit fails it cleanly; the store goes on")
    func failedCommitHint() throws {
        let (before, commit) = try Self.countHints()
        #expect(commit >= 2)
        for index in 1...commit {
            for failure in IOErrorTests.failures {
                let context = "writeback hint #\(index) of the large commit fails with \(failure)"
                let memory = InMemoryFileSystem()
                let faults = FaultInjectingFileSystem(wrapping: memory)
                let store = try Self.open(faults)
                try Self.commitBaseline(store)
                faults.fail(.writeback, at: before + index, with: failure)
                let error = expectStorageError(IOErrorTests.code(failure), comment: context) { try Self.commitLarge(store) }
                #expect(faults.triggeredFaults == 1, "\(context): the fault did not fire")
                #expect(error?.path?.hasSuffix(Self.logSuffix) == true, "\(context): names the log: \(String(describing: error))")
                try expectContents(of: store, equal: try Self.baseline.get(), "\(context): nothing of the failed commit")
                #expect(try store.statistics().writeRefusal == nil, "\(context): a failed hint is a failed write, not a failed fsync")
                try Self.commitLarge(store)
                try expectContents(of: store, equal: try Self.expected.get(), "\(context): the commit again")
                try expectVerifies(store, context)
                try store.close()
                try IOWorkload.reopenWithoutFaults(memory, allowed: [try Self.expected.get()], context)
            }
        }
    }

    @Test("on real files: large commits with hints and a checkpoint read back the same after reopening")
    func realFiles() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/store.keel"
            var options = testOptions(PosixFileSystem(), syncMode: .full)
            options.checkpointThresholdBytes = 1 << 30
            let store = try Store.open(at: path, options: options, logger: quietLogger)
            try Self.commitBaseline(store)
            try Self.commitLarge(store)
            let report = try store.checkpoint()
            #expect(report.logReset && report.pagesWritten > 700)
            try Self.commitLarge(store)  // the same values again, through the reset log
            try store.close()
            let again = try Store.open(at: path, options: options, logger: quietLogger)
            try expectContents(of: again, equal: try Self.expected.get(), "after reopening")
            try expectVerifies(again, "after reopening")
            try again.close()
        }
    }
}
