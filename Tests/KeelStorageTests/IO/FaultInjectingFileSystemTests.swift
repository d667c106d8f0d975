import Dispatch
import Glibc
import Synchronization
import Testing

@testable import KeelStorage

@Suite("FaultInjectingFileSystem: EIO, ENOSPC and short writes on chosen operations")
struct FaultInjectingFileSystemTests {
    /// Writes byte `i` at offset `i` for i in 1...count, recording which writes failed.
    func writeEach(_ file: any StorageFile, count: Int) -> [Int: StorageError] {
        var failures: [Int: StorageError] = [:]
        for i in 1...count {
            do { try file.write(bytes: [UInt8(i)], at: UInt64(i)) } catch let error as StorageError {
                failures[i] = error
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
        return failures
    }

    @Test("a .once fault fails exactly the n-th write, which writes nothing; later writes proceed")
    func failOnce() throws {
        let memory = InMemoryFileSystem()
        let fs = FaultInjectingFileSystem(wrapping: memory)
        fs.fail(.write, at: 3)
        let file = try fs.open("/f", options: .createIfNeeded)
        let failures = writeEach(file, count: 5)
        #expect(failures.keys.sorted() == [3])
        #expect(failures[3]?.code == .io)
        #expect(failures[3]?.errno == EIO)
        #expect(failures[3]?.path == "/f")
        #expect(memory.contents(of: "/f") == [0, 1, 2, 0, 4, 5])
        #expect(fs.operationCount(of: .write) == 5)
        #expect(fs.triggeredFaults == 1)
    }

    @Test("a .fromThenOn fault fails the n-th write and every one after it")
    func failFromThenOn() throws {
        let memory = InMemoryFileSystem()
        let fs = FaultInjectingFileSystem(wrapping: memory)
        fs.fail(.write, at: 3, .fromThenOn)
        let file = try fs.open("/f", options: .createIfNeeded)
        #expect(writeEach(file, count: 5).keys.sorted() == [3, 4, 5])
        #expect(memory.contents(of: "/f") == [0, 1, 2])
        fs.removeAllFaults()
        try file.write(bytes: [6], at: 6)
        #expect(memory.contents(of: "/f") == [0, 1, 2, 0, 0, 0, 6])
    }

    @Test("an ENOSPC fault throws diskFull with errno ENOSPC")
    func diskFull() throws {
        let fs = FaultInjectingFileSystem(wrapping: InMemoryFileSystem())
        fs.fail(.allocate, at: 1, with: .diskFull)
        let file = try fs.open("/f", options: .createIfNeeded)
        let error = #expect(throws: StorageError.self) { try file.allocate(offset: 0, length: 4096) }
        #expect(error?.code == .diskFull)
        #expect(error?.errno == ENOSPC)
        #expect(try file.size() == 0)
    }

    @Test("a short write returns the short count and writeFully completes the rest")
    func shortWrite() throws {
        let memory = InMemoryFileSystem()
        let fs = FaultInjectingFileSystem(wrapping: memory)
        fs.shortWrite(at: 1)
        fs.shortWrite(at: 2, bytes: 3)
        let file = try fs.open("/f", options: .createIfNeeded)
        let bytes: [UInt8] = Array(1...10)
        let n = try bytes.withUnsafeBytes { try file.write($0, at: 0) }
        #expect(n == 5)
        #expect(memory.contents(of: "/f") == Array(1...5))
        let m = try bytes.withUnsafeBytes { try file.write($0, at: 100) }
        #expect(m == 3)
        #expect(try file.size() == 103)

        fs.shortWrite(at: 3, bytes: 4, .fromThenOn)
        try file.write(bytes: bytes, at: 200)  // writeFully: 4 + 4 + 2
        #expect(fs.operationCount(of: .write) == 5)
        #expect(memory.contents(of: "/f").map { Array($0[200...]) } == bytes)
    }

    @Test("a write that makes no progress makes writeFully throw instead of looping")
    func zeroByteWrite() throws {
        let fs = FaultInjectingFileSystem(wrapping: InMemoryFileSystem())
        fs.shortWrite(at: 1, bytes: 0, .fromThenOn)
        let file = try fs.open("/f", options: .createIfNeeded)
        let error = #expect(throws: StorageError.self) { try file.write(bytes: [1, 2], at: 0) }
        #expect(error?.code == .io)
        #expect(fs.operationCount(of: .write) == 1)
    }

    @Test("a path suffix narrows both the count and the fault to matching files")
    func pathSuffix() throws {
        let memory = InMemoryFileSystem()
        let fs = FaultInjectingFileSystem(wrapping: memory)
        fs.fail(.write, at: 2, pathSuffix: "-wal")
        let db = try fs.open("/s/db", options: .createIfNeeded)
        let wal = try fs.open("/s/db-wal", options: .createIfNeeded)
        try db.write(bytes: [1], at: 0)
        try wal.write(bytes: [1], at: 0)
        try db.write(bytes: [2], at: 1)
        #expect(throws: StorageError.self) { try wal.write(bytes: [2], at: 1) }
        try db.write(bytes: [3], at: 2)
        try wal.write(bytes: [3], at: 2)
        #expect(memory.contents(of: "/s/db") == [1, 2, 3])
        #expect(memory.contents(of: "/s/db-wal") == [1, 0, 3])
        #expect(fs.operationCount(of: .write) == 6)
        #expect(fs.operationCount(of: .write, pathSuffix: "-wal") == 3)
        #expect(fs.operationCount(of: .write, pathSuffix: "/db") == 3)
    }

    @Test("counting a clean run, then failing each sync in turn, stops the workload at that sync")
    func failEachIndex() throws {
        /// Three small transactions, each a write then a sync.
        func workload(_ fs: FaultInjectingFileSystem) throws {
            let file = try fs.open("/log", options: .createIfNeeded)
            for i in 0..<3 {
                try file.write(bytes: [UInt8(i + 1)], at: UInt64(i))
                try file.sync()
            }
            try file.close()
        }
        let clean = FaultInjectingFileSystem(wrapping: InMemoryFileSystem())
        try workload(clean)
        let syncs = clean.operationCount(of: .sync)
        #expect(syncs == 3)
        for index in 1...syncs {
            let fs = FaultInjectingFileSystem(wrapping: InMemoryFileSystem())
            fs.fail(.sync, at: index)
            let error = #expect(throws: StorageError.self) { try workload(fs) }
            #expect(error?.message.contains("sync #\(index)") == true)
            #expect(fs.operationCount(of: .sync) == index)
            #expect(fs.operationCount(of: .write) == index)
        }
    }

    @Test("every kind of operation can be failed, and the failed call has no effect", arguments: FileOperationKind.allCases)
    func everyKind(_ kind: FileOperationKind) throws {
        let memory = InMemoryFileSystem(files: ["/d/f": [1, 2, 3]])
        let fs = FaultInjectingFileSystem(wrapping: memory)
        let file = try fs.open("/d/f", options: .readWrite)
        fs.fail(kind, at: fs.operationCount(of: kind) + 1)
        let error = #expect(throws: StorageError.self) {
            switch kind {
            case .open: _ = try fs.open("/d/f", options: .readWrite)
            case .read: _ = try file.read(count: 3, at: 0)
            case .write: try file.write(bytes: [9], at: 0)
            case .sync: try file.sync()
            case .truncate: try file.truncate(to: 0)
            case .allocate: try file.allocate(offset: 0, length: 100)
            case .close: try file.close()
            case .rename: try fs.rename("/d/f", to: "/d/g")
            case .remove: try fs.remove("/d/f")
            case .syncDirectory: try fs.syncDirectory("/d")
            case .writeback: try file.startWriteback(offset: 0, length: 3)
            }
        }
        #expect(error?.code == .io)
        #expect(error?.errno == EIO)
        #expect(fs.triggeredFaults == 1)
        #expect(memory.contents(of: "/d/f") == [1, 2, 3])
        #expect(memory.paths == ["/d/f"])
        if kind == .close {
            // close(2) releases the descriptor even when it fails.
            #expect((#expect(throws: StorageError.self) { _ = try file.size() })?.code == .closed)
        } else {
            #expect(try file.size() == 3)
        }
    }

    @Test("counts stay exact when threads write at once")
    func concurrentCounts() throws {
        let fs = FaultInjectingFileSystem(wrapping: InMemoryFileSystem())
        fs.fail(.write, at: 500)
        let file = try fs.open("/f", options: .createIfNeeded)
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for i in 0..<100 {
                do { try file.write(bytes: [1], at: UInt64(t * 100 + i)) } catch { failures.withLock { $0 += 1 } }
            }
        }
        #expect(fs.operationCount(of: .write) == 800)
        #expect(failures.withLock { $0 } == 1)
        #expect(fs.triggeredFaults == 1)
    }
}
