// I/O errors outside a commit: at every write and fsync of a checkpoint (the store turns
// read-only, loses nothing, and recovers on reopen: I6, I8), at every read while opening a
// store whose log holds commits (the open fails instead of skipping data), at a page read in a
// read transaction, and a disk that is really full (InMemoryFileSystem capacity): the commit
// fails with DISK_FULL, nothing is lost, and the store goes on once there is room again.

import Testing

@testable import KeelStorage

@Suite("I/O errors in checkpoints, recovery reads and on a full disk")
struct IOErrorCheckpointTests {
    /// Baseline plus one more commit, all in the log (no checkpoint yet).
    static func prepare(_ faults: FaultInjectingFileSystem) throws -> Store {
        let store = try IOWorkload.open(faults)
        try IOWorkload.commitBaseline(store)
        try IOWorkload.commitTarget(store, large: true)
        return store
    }

    static func countCheckpoint() throws -> (before: [FileOperationKind: Int], during: [FileOperationKind: Int]) {
        let faults = FaultInjectingFileSystem(wrapping: InMemoryFileSystem())
        let store = try prepare(faults)
        var before: [FileOperationKind: Int] = [:]
        for kind in FileOperationKind.allCases { before[kind] = faults.operationCount(of: kind) }
        let report = try store.checkpoint()
        #expect(report.logReset && report.pagesWritten > 0)
        var during: [FileOperationKind: Int] = [:]
        for kind in FileOperationKind.allCases { during[kind] = faults.operationCount(of: kind) - before[kind]! }
        try store.close()
        return (before, during)
    }

    @Test("I6 I8: EIO or ENOSPC at any write or fsync of a checkpoint turns the store read-only; nothing committed is lost",
          arguments: [FileOperationKind.write, .sync])
    func failedCheckpoint(kind: FileOperationKind) throws {
        let (before, during) = try Self.countCheckpoint()
        print("[IOErrorCheckpointTests] checkpoint: \(during.filter { $0.value > 0 })")
        #expect(during[kind]! >= 2, "a checkpoint writes (and syncs) the page file and the log header")
        for index in 1...during[kind]! {
            for failure in IOErrorTests.failures {
                let context = "\(kind) #\(index) of a checkpoint fails with \(failure)"
                let memory = InMemoryFileSystem()
                let faults = FaultInjectingFileSystem(wrapping: memory)
                let store = try Self.prepare(faults)
                faults.fail(kind, at: before[kind]! + index, with: failure)
                let error = expectStorageError(.readOnly, comment: context) { try store.checkpoint() }
                #expect(faults.triggeredFaults == 1, "\(context): the fault did not fire")
                #expect(error?.message.contains("read-only") == true, "\(context): \(String(describing: error))")
                #expect((error?.cause as? StorageError)?.code == IOErrorTests.code(failure), "\(context): the cause")
                faults.removeAllFaults()
                expectStorageError(.readOnly, comment: "\(context): a write after it") { try IOWorkload.commitLater(store) }
                let expected = try IOWorkload.target(large: true)
                try expectContents(of: store, equal: expected, "\(context): reads after the failed checkpoint")
                try expectVerifies(store, context)
                try store.close()
                try IOWorkload.reopenWithoutFaults(memory, allowed: [expected], context)
            }
        }
    }

    @Test("an I/O error at any read while opening a store with logged commits fails the open; it never opens with less")
    func failedRecoveryRead() throws {
        let memory = InMemoryFileSystem()
        do {
            let store = try Self.prepare(FaultInjectingFileSystem(wrapping: memory))
            _ = store  // left open: the commits stay in the log, as after a crash
        }
        let image = files(of: memory)
        let counting = FaultInjectingFileSystem(wrapping: InMemoryFileSystem(files: image))
        let clean = try IOWorkload.open(counting)
        let reads = counting.operationCount(of: .read)
        let target = try IOWorkload.target(large: true)
        try expectContents(of: clean, equal: target)
        #expect(reads >= 2, "the open reads page 0 and the log")
        for index in 1...reads {
            let faults = FaultInjectingFileSystem(wrapping: InMemoryFileSystem(files: image))
            faults.fail(.read, at: index)
            let context = "read #\(index) of \(reads) during open fails"
            do {
                let store = try IOWorkload.open(faults)
                // Opening despite a failed read is acceptable only if nothing was skipped.
                let actual = try? contents(of: store)
                Issue.record("\(context): the open succeeded; contents \(actual.map { describeDifference($0, target) } ?? "unreadable")")
            } catch let error as StorageError {
                #expect(error.code == .io, "\(context): \(error)")
            }
            #expect(faults.triggeredFaults == 1, "\(context)")
        }
    }

    @Test("an I/O error reading a page in a read transaction throws .io; the next read works")
    func failedPageRead() throws {
        let memory = InMemoryFileSystem()
        let faults = FaultInjectingFileSystem(wrapping: memory)
        let store = try IOWorkload.open(faults)
        try IOWorkload.commitBaseline(store)
        try store.close()
        // Reopen with a cold cache, then fail the next read of a page.
        let reopened = try IOWorkload.open(faults)
        faults.fail(.read, at: faults.operationCount(of: .read) + 1)
        let error = expectStorageError(.io) { _ = try contents(of: reopened) }
        #expect(error?.path == testStorePath, "the error names the page file: \(String(describing: error))")
        try expectContents(of: reopened, equal: try IOWorkload.baseline(), "the next read transaction works")
        try expectVerifies(reopened, "after a failed page read")
        try reopened.close()
    }

    @Test("a really full disk: the commit fails with DISK_FULL, nothing is lost, and writes resume when there is room")
    func diskFull() throws {
        let memory = InMemoryFileSystem(capacity: 400 << 10)
        let store = try IOWorkload.open(memory)
        var model: [Bytes: Bytes] = [:]
        try store.write { txn in _ = try txn.createTree("fill") }
        var failure: StorageError?
        for i in 0..<100 {
            let key = numberedKey(i)
            let value = randomBytes(20_000, seed: UInt64(i))
            do {
                try store.write { txn in try txn.tree("fill")!.put(key: key, value: value) }
                model[key] = value
            } catch let error as StorageError {
                failure = error
                break
            }
        }
        let error = try #require(failure, "the disk never filled up")
        #expect(error.code == .diskFull, "\(error)")
        #expect(try store.statistics().writeRefusal == nil, "a full disk is not a failed fsync: no fail-stop")
        try expectContents(of: store, equal: ["fill": model], "committed data after DISK_FULL")
        // Room again: writes resume; close checkpoints into the page file.
        memory.capacity = nil
        try store.write { txn in try txn.tree("fill")!.put(key: Array("resumed".utf8), value: [1]) }
        model[Array("resumed".utf8)] = [1]
        try store.close()
        let reopened = try IOWorkload.open(memory)
        defer { try? reopened.close() }
        try expectContents(of: reopened, equal: ["fill": model])
        try expectVerifies(reopened, "after a full disk")
    }

    @Test("close on a full disk fails (its checkpoint cannot grow the page file) and loses nothing")
    func closeOnFullDisk() throws {
        let memory = InMemoryFileSystem()
        let store = try IOWorkload.open(memory)
        try store.write { txn in
            let tree = try txn.createTree("t")
            for i in 0..<40 { try tree.put(key: numberedKey(i), value: randomBytes(3_000, seed: UInt64(i))) }
        }
        let expected = try contents(of: store)
        memory.capacity = memory.usedBytes  // not one byte more
        expectStorageError(.readOnly, .diskFull) { try store.close() }
        memory.capacity = nil
        let reopened = try IOWorkload.open(memory)
        defer { try? reopened.close() }
        try expectContents(of: reopened, equal: expected)
        try expectVerifies(reopened, "after close failed on a full disk")
    }
}
