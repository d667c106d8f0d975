// I/O errors during a commit: EIO and ENOSPC at every write, allocation and fsync a commit makes,
// plus short writes. The commit fails with a clear error; the store stays readable and loses
// nothing committed before. After a failed write or allocation (no fsync failed) the store goes
// on and later commits succeed once the fault is gone (I14: the failed commit left no trace).
// After a failed fsync the store refuses every write with `.readOnly` naming fail-stop, while
// reads keep working (I6). Every case ends by reopening the files without faults and verifying.
// Checkpoint and read faults, and a really full disk, are in IOErrorCheckpointTests.swift.

import Glibc
import Testing

@testable import KeelStorage

/// The store and workload the I/O-error suites share.
enum IOWorkload {
    static func options(_ fs: any FileSystem) -> StoreOptions {
        var options = testOptions(fs, syncMode: .full)
        options.checkpointThresholdBytes = 1 << 30  // no automatic checkpoint inside a commit
        return options
    }

    static func open(_ fs: any FileSystem) throws -> Store {
        try Store.open(at: testStorePath, options: options(fs), logger: quietLogger)
    }

    /// Three committed transactions: the data that must never be lost.
    static func commitBaseline(_ store: Store) throws {
        try store.write { txn in
            let a = try txn.createTree("a")
            for i in 0..<50 { try a.put(key: numberedKey(i), value: taggedValue(key: numberedKey(i), version: 1)) }
        }
        try store.write { txn in
            let b = try txn.createTree("b")
            try b.put(key: Array("big".utf8), value: randomBytes(9_000, seed: 7))
        }
        try store.write { txn in
            for i in 0..<50 where i % 3 == 0 { try txn.tree("a")!.delete(key: numberedKey(i)) }
        }
    }

    static func baseline() throws -> StoreContents { try baselineFixture.get() }
    private static let baselineFixture = Fixture<StoreContents> {
        let store = try open(InMemoryFileSystem())
        defer { try? store.close() }
        try commitBaseline(store)
        return try contents(of: store)
    }

    /// The commit under test. `large` appends more than the log's 64 KiB preallocation step, so
    /// the log must grow (allocate) during the commit.
    static func commitTarget(_ store: Store, large: Bool) throws {
        try store.write { txn in
            let a = try txn.tree("a")!
            for i in 100..<110 { try a.put(key: numberedKey(i), value: taggedValue(key: numberedKey(i), version: 2)) }
            if large {
                let b = try txn.tree("b")!
                for i in 0..<8 { try b.put(key: numberedKey(i, prefix: "large"), value: randomBytes(12_000, seed: UInt64(i))) }
            }
        }
    }

    /// The contents after the baseline and the target commit.
    static func target(large: Bool) throws -> StoreContents { try (large ? targetLarge : targetSmall).get() }
    private static let targetSmall = Fixture<StoreContents> { try makeTarget(large: false) }
    private static let targetLarge = Fixture<StoreContents> { try makeTarget(large: true) }

    private static func makeTarget(large: Bool) throws -> StoreContents {
        let store = try open(InMemoryFileSystem())
        defer { try? store.close() }
        try commitBaseline(store)
        try commitTarget(store, large: large)
        return try contents(of: store)
    }

    /// A commit after the failure, when the store may still write.
    static func commitLater(_ store: Store) throws {
        try store.write { txn in try txn.tree("a")!.put(key: Array("later".utf8), value: Array("after the fault".utf8)) }
    }

    static func withLater(_ state: StoreContents) -> StoreContents {
        var state = state
        state["a"]![Array("later".utf8)] = Array("after the fault".utf8)
        return state
    }

    /// Operation counts by kind before and after the target commit, in a run without faults.
    static func countTarget(large: Bool) throws -> (before: [FileOperationKind: Int], during: [FileOperationKind: Int]) {
        let faults = FaultInjectingFileSystem(wrapping: InMemoryFileSystem())
        let store = try open(faults)
        try commitBaseline(store)
        var before: [FileOperationKind: Int] = [:]
        for kind in FileOperationKind.allCases { before[kind] = faults.operationCount(of: kind) }
        try commitTarget(store, large: large)
        var during: [FileOperationKind: Int] = [:]
        for kind in FileOperationKind.allCases { during[kind] = faults.operationCount(of: kind) - before[kind]! }
        try store.close()
        return (before, during)
    }

    /// Reopens a copy of the files, without faults (the original may still be open); the contents
    /// must be one of `allowed`; verify must be clean.
    static func reopenWithoutFaults(_ memory: InMemoryFileSystem, allowed: [StoreContents], _ context: String,
                                    sourceLocation: SourceLocation = #_sourceLocation) throws {
        let store = try open(InMemoryFileSystem(files: files(of: memory)))
        defer { try? store.close() }
        let actual = try contents(of: store)
        let known = allowed.contains(actual)
        #expect(known, "\(context): after reopening without faults: \(describeDifference(actual, allowed[0]))",
                sourceLocation: sourceLocation)
        try expectVerifies(store, "\(context): after reopening without faults", sourceLocation: sourceLocation)
    }
}

@Suite("I/O errors in a commit: a clear error, nothing committed lost, fail-stop after a failed fsync")
struct IOErrorTests {
    static let failures: [FaultInjectingFileSystem.Failure] = [.io, .diskFull]

    static func code(_ failure: FaultInjectingFileSystem.Failure) -> StorageError.Code {
        failure == .io ? .io : .diskFull
    }

    @Test("the commit under test makes writes, one log fsync, and (large) a log allocation", arguments: [false, true])
    func commitOperations(large: Bool) throws {
        let (_, during) = try IOWorkload.countTarget(large: large)
        print("[IOErrorTests] \(large ? "large" : "small") commit: \(during.filter { $0.value > 0 })")
        #expect(during[.write]! >= 1)
        #expect(during[.sync] == 1, "sync mode full: exactly one fdatasync acknowledges a lone commit (I1)")
        #expect(large ? during[.allocate]! >= 1 : during[.allocate] == 0)
    }

    @Test("I14: EIO or ENOSPC at any write or allocation of a commit fails it cleanly; the store goes on",
          arguments: [FileOperationKind.write, .allocate], [false, true])
    func failedWrite(kind: FileOperationKind, large: Bool) throws {
        let (before, during) = try IOWorkload.countTarget(large: large)
        guard during[kind]! > 0 else { return }  // a small commit allocates nothing
        for index in 1...during[kind]! {
            for failure in Self.failures {
                let context = "\(kind) #\(index) of a \(large ? "large" : "small") commit fails with \(failure)"
                let memory = InMemoryFileSystem()
                let faults = FaultInjectingFileSystem(wrapping: memory)
                let store = try IOWorkload.open(faults)
                try IOWorkload.commitBaseline(store)
                faults.fail(kind, at: before[kind]! + index, with: failure)

                let error = expectStorageError(Self.code(failure), comment: context) { try IOWorkload.commitTarget(store, large: large) }
                #expect(faults.triggeredFaults == 1, "\(context): the fault did not fire")
                #expect(error?.errno == (failure == .io ? EIO : ENOSPC), "\(context): errno of \(String(describing: error))")
                #expect(error?.path?.hasSuffix("-wal") == true, "\(context): the error names the log: \(String(describing: error))")
                #expect(error?.message.isEmpty == false)

                // Readable, nothing lost, nothing of the failed commit visible (I14).
                try expectContents(of: store, equal: try IOWorkload.baseline(), "\(context): contents after the failed commit")
                #expect(try store.statistics().writeRefusal == nil, "\(context): a failed write is not a failed fsync; no fail-stop")
                // The fault is gone: the next commits succeed, the same one included.
                try IOWorkload.commitLater(store)
                try IOWorkload.commitTarget(store, large: large)
                let expected = IOWorkload.withLater(try IOWorkload.target(large: large))
                try expectContents(of: store, equal: expected, "\(context): commits after the fault")
                try expectVerifies(store, "\(context)")
                try store.close()
                try IOWorkload.reopenWithoutFaults(memory, allowed: [expected], "\(context)")
            }
        }
    }

    @Test("I6: EIO or ENOSPC at the commit's fsync fails it, and the store turns read-only (fail-stop) but stays readable",
          arguments: [false, true])
    func failedSync(large: Bool) throws {
        let (before, during) = try IOWorkload.countTarget(large: large)
        for index in 1...during[.sync]! {
            for failure in Self.failures {
                let context = "sync #\(index) of a \(large ? "large" : "small") commit fails with \(failure)"
                let memory = InMemoryFileSystem()
                let faults = FaultInjectingFileSystem(wrapping: memory)
                let store = try IOWorkload.open(faults)
                try IOWorkload.commitBaseline(store)
                faults.fail(.sync, at: before[.sync]! + index, with: failure)

                let error = expectStorageError(.readOnly, comment: context) { try IOWorkload.commitTarget(store, large: large) }
                #expect(faults.triggeredFaults == 1, "\(context): the fault did not fire")
                #expect(error?.message.contains("fail-stop") == true, "\(context): \(String(describing: error))")
                #expect((error?.cause as? StorageError)?.code == Self.code(failure), "\(context): the cause is the fsync error")

                // Readers see exactly what was durable: the unsynced commit was never published (I1).
                try expectContents(of: store, equal: try IOWorkload.baseline(), "\(context): contents after the failed fsync")
                // Every later write is refused, even with the disk healthy again: no retried fsync (I6).
                faults.removeAllFaults()
                for attempt in 1...2 {
                    let refusal = expectStorageError(.readOnly, comment: "\(context): write attempt \(attempt)") { try IOWorkload.commitLater(store) }
                    #expect(refusal?.message.contains("fail-stop") == true, "\(context): \(String(describing: refusal))")
                }
                expectStorageError(.readOnly, comment: "\(context): checkpoint") { try store.checkpoint() }
                #expect(try store.statistics().writeRefusal?.contains("fail-stop") == true)
                try expectContents(of: store, equal: try IOWorkload.baseline(), "\(context): reads after refused writes")
                try expectVerifies(store, "\(context)")
                try store.close()
                // The commit's frames reached the (in-memory) file before the failed fsync, so after a
                // reopen it may be there, entirely, or not at all.
                try IOWorkload.reopenWithoutFaults(memory, allowed: [try IOWorkload.baseline(), try IOWorkload.target(large: large)], "\(context)")
            }
        }
    }

    @Test("a short write anywhere in a commit is completed: the commit succeeds and is durable", arguments: [false, true])
    func shortWrites(large: Bool) throws {
        let (before, during) = try IOWorkload.countTarget(large: large)
        for index in 1...during[.write]! {
            let context = "write #\(index) of a \(large ? "large" : "small") commit is short"
            let memory = InMemoryFileSystem()
            let faults = FaultInjectingFileSystem(wrapping: memory)
            let store = try IOWorkload.open(faults)
            try IOWorkload.commitBaseline(store)
            faults.shortWrite(at: before[.write]! + index)
            try IOWorkload.commitTarget(store, large: large)
            #expect(faults.triggeredFaults == 1, "\(context): the short write did not happen")
            try expectContents(of: store, equal: try IOWorkload.target(large: large), "\(context)")
            try store.close()
            try IOWorkload.reopenWithoutFaults(memory, allowed: [try IOWorkload.target(large: large)], "\(context)")
        }
    }

    @Test("I14: a short write followed by EIO leaves half a commit in the log; it is never replayed and later commits overwrite it",
          arguments: [false, true])
    func shortWriteThenFailure(large: Bool) throws {
        let (before, during) = try IOWorkload.countTarget(large: large)
        for index in 1...during[.write]! {
            let context = "write #\(index) of a \(large ? "large" : "small") commit is short, the rest fails"
            let memory = InMemoryFileSystem()
            let faults = FaultInjectingFileSystem(wrapping: memory)
            let store = try IOWorkload.open(faults)
            try IOWorkload.commitBaseline(store)
            faults.shortWrite(at: before[.write]! + index)
            faults.fail(.write, at: before[.write]! + index + 1)  // writeFully's next call, for the rest
            expectStorageError(.io, comment: context) { try IOWorkload.commitTarget(store, large: large) }
            #expect(faults.triggeredFaults == 2, "\(context): both faults should fire")
            try expectContents(of: store, equal: try IOWorkload.baseline(), "\(context)")
            // Reopened right away (the half-written commit is still in the log): it is not applied.
            try IOWorkload.reopenWithoutFaults(memory, allowed: [try IOWorkload.baseline()], "\(context), reopened at once")
            // Or the store goes on: a smaller commit overwrites the half-written one.
            try IOWorkload.commitLater(store)
            try expectContents(of: store, equal: IOWorkload.withLater(try IOWorkload.baseline()), "\(context)")
            try IOWorkload.reopenWithoutFaults(memory, allowed: [IOWorkload.withLater(try IOWorkload.baseline())], "\(context), then a commit")
            try store.close()
        }
    }
}
