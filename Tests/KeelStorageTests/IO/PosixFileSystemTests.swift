import Dispatch
import Glibc
import Synchronization
import Testing

@testable import KeelStorage

@Suite("PosixFileSystem: real files in a temporary directory")
struct PosixFileSystemTests {
    let fs = PosixFileSystem()

    @Test("bytes written, synced and closed read back the same after reopening read-only")
    func roundTrip() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/data"
            let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let file = try fs.open(path, options: .createIfNeeded)
            try file.write(bytes: bytes, at: 0)
            try file.write(bytes: [9, 9, 9], at: 20_000)  // sparse: a hole of zeros before it
            try file.sync()
            #expect(try file.size() == 20_003)
            try file.close()
            try fs.syncDirectory(dir)

            let again = try fs.open(path, options: .readOnly)
            let all = try again.readAll()
            #expect(Array(all[..<10_000]) == bytes)
            #expect(all[10_000..<20_000].allSatisfy { $0 == 0 })
            #expect(Array(all[20_000...]) == [9, 9, 9])
            try again.close()
        }
    }

    @Test("a read that reaches the end of the file is short, and a read past it returns nothing")
    func shortReadAtEnd() throws {
        try withTemporaryDirectory { dir in
            let file = try fs.open(dir + "/f", options: .createIfNeeded)
            try file.write(bytes: Array(0..<10), at: 0)
            #expect(try file.read(count: 16, at: 4) == [4, 5, 6, 7, 8, 9])
            #expect(try file.read(count: 16, at: 10) == [])
            #expect(try file.read(count: 16, at: 1_000) == [])
            try file.close()
        }
    }

    @Test("startWriteback of written ranges changes nothing visible; read-only files ignore it, closed files refuse it")
    func startWriteback() throws {
        try withTemporaryDirectory { dir in
            let file = try fs.open(dir + "/f", options: .createIfNeeded)
            let bytes = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            try file.write(bytes: bytes, at: 0)
            try file.startWriteback(offset: 0, length: 1 << 20)
            try file.startWriteback(offset: 1 << 20, length: 2 << 20)
            try file.startWriteback(offset: 3 << 20, length: 1 << 20)  // past the end: nothing to write
            try file.startWriteback(offset: 0, length: 0)
            try file.sync()
            #expect(try file.size() == UInt64(bytes.count))
            #expect(try file.readAll() == bytes)
            try file.close()
            #expect((#expect(throws: StorageError.self) { try file.startWriteback(offset: 0, length: 4096) })?.code == .closed)

            let readOnly = try fs.open(dir + "/f", options: .readOnly)
            try readOnly.startWriteback(offset: 0, length: 4096)
            #expect(try readOnly.readAll() == bytes)
            try readOnly.close()
        }
    }

    @Test("allocate grows the size without changing the bytes already there, and never shrinks")
    func allocateGrows() throws {
        try withTemporaryDirectory { dir in
            let file = try fs.open(dir + "/f", options: .createIfNeeded)
            try file.write(bytes: [1, 2, 3], at: 0)
            try file.allocate(offset: 0, length: 8192)
            #expect(try file.size() == 8192)
            let all = try file.readAll()
            #expect(Array(all[..<3]) == [1, 2, 3])
            #expect(all[3...].allSatisfy { $0 == 0 })
            try file.allocate(offset: 0, length: 100)
            #expect(try file.size() == 8192)
            try file.close()
        }
    }

    @Test("the zero-fill fallback of allocate extends in 1 MiB chunks and leaves existing bytes alone")
    func zeroFillFallback() throws {
        try withTemporaryDirectory { dir in
            let file = try fs.openFile(dir + "/f", options: .createIfNeeded)
            try file.write(bytes: [7, 7, 7, 7], at: 0)
            let length = UInt64(PosixFile.zeroFillChunk + PosixFile.zeroFillChunk / 2)
            try file.allocateByZeroFill(offset: 2, length: length)
            #expect(try file.size() == 2 + length)
            let all = try file.readAll()
            #expect(Array(all[..<4]) == [7, 7, 7, 7])
            #expect(all[4...].allSatisfy { $0 == 0 })
            try file.close()
        }
    }

    @Test("truncate shrinks and grows the file; grown bytes read as zeros")
    func truncate() throws {
        try withTemporaryDirectory { dir in
            let file = try fs.open(dir + "/f", options: .createIfNeeded)
            try file.write(bytes: Array(1...100), at: 0)
            try file.truncate(to: 10)
            #expect(try file.readAll() == Array(1...10))
            try file.truncate(to: 20)
            #expect(try file.readAll() == Array(1...10) + [UInt8](repeating: 0, count: 10))
            try file.close()
        }
    }

    @Test("rename replaces the target, remove deletes, and both report a missing source clearly")
    func renameAndRemove() throws {
        try withTemporaryDirectory { dir in
            for (name, byte) in [("a", UInt8(1)), ("b", UInt8(2))] {
                let file = try fs.open(dir + "/" + name, options: .createIfNeeded)
                try file.write(bytes: [byte], at: 0)
                try file.close()
            }
            try fs.rename(dir + "/a", to: dir + "/b")
            #expect(!fs.fileExists(dir + "/a"))
            let b = try fs.open(dir + "/b", options: .readOnly)
            #expect(try b.readAll() == [1])
            try b.close()
            try fs.syncDirectory(dir)

            try fs.remove(dir + "/b")
            #expect(!fs.fileExists(dir + "/b"))
            let renameError = #expect(throws: StorageError.self) { try fs.rename(dir + "/a", to: dir + "/c") }
            #expect(renameError?.errno == ENOENT)
            let removeError = #expect(throws: StorageError.self) { try fs.remove(dir + "/b") }
            #expect(removeError?.errno == ENOENT)
            #expect(removeError?.path == dir + "/b")
        }
    }

    @Test("syncDirectory succeeds on a directory and fails with ENOENT on a missing one")
    func syncDirectory() throws {
        try withTemporaryDirectory { dir in
            try fs.syncDirectory(dir)
            let error = #expect(throws: StorageError.self) { try fs.syncDirectory(dir + "/missing") }
            #expect(error?.code == .io)
            #expect(error?.errno == ENOENT)
        }
    }

    @Test("a file opened read-only refuses writes, truncation and allocation and stays unchanged")
    func readOnlyRefusesWrites() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/f"
            let writer = try fs.open(path, options: .createIfNeeded)
            try writer.write(bytes: [1, 2, 3], at: 0)
            try writer.close()

            let file = try fs.open(path, options: .readOnly)
            let write = #expect(throws: StorageError.self) { try file.write(bytes: [9], at: 0) }
            #expect(write?.code == .readOnly)
            let truncate = #expect(throws: StorageError.self) { try file.truncate(to: 0) }
            #expect(truncate?.code == .readOnly)
            let allocate = #expect(throws: StorageError.self) { try file.allocate(offset: 0, length: 4096) }
            #expect(allocate?.code == .readOnly)
            #expect(try file.readAll() == [1, 2, 3])
            try file.close()
        }
    }

    @Test("exclusive creation of an existing file fails with EEXIST; plain creation keeps its bytes")
    func exclusiveCreate() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/f"
            let first = try fs.open(path, options: FileOpenOptions(create: true, exclusive: true))
            try first.write(bytes: [5, 6], at: 0)
            try first.close()
            let error = #expect(throws: StorageError.self) {
                _ = try fs.open(path, options: FileOpenOptions(create: true, exclusive: true))
            }
            #expect(error?.code == .io)
            #expect(error?.errno == EEXIST)
            let again = try fs.open(path, options: .createIfNeeded)
            #expect(try again.readAll() == [5, 6])
            try again.close()
        }
    }

    @Test("opening a missing file without create says 'no such file' with errno and path")
    func missingFile() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/missing"
            let error = #expect(throws: StorageError.self) { _ = try fs.open(path, options: .readWrite) }
            #expect(error?.code == .io)
            #expect(error?.errno == ENOENT)
            #expect(error?.path == path)
            #expect(error?.message.contains("no such file") == true)
            #expect(!fs.fileExists(path))
        }
    }

    @Test("close is idempotent in effect: a second close and any later call throw .closed")
    func closeTwice() throws {
        try withTemporaryDirectory { dir in
            let file = try fs.open(dir + "/f", options: .createIfNeeded)
            try file.close()
            #expect((#expect(throws: StorageError.self) { try file.close() })?.code == .closed)
            #expect((#expect(throws: StorageError.self) { _ = try file.read(count: 1, at: 0) })?.code == .closed)
            #expect((#expect(throws: StorageError.self) { try file.write(bytes: [1], at: 0) })?.code == .closed)
            #expect((#expect(throws: StorageError.self) { try file.sync() })?.code == .closed)
            #expect((#expect(throws: StorageError.self) { _ = try file.size() })?.code == .closed)
        }
    }

    @Test("closing while a call is in flight closes the descriptor only when that call returns")
    func closeDuringCall() throws {
        try withTemporaryDirectory { dir in
            let file = try fs.openFile(dir + "/f", options: .createIfNeeded)
            try file.write(bytes: [1, 2, 3], at: 0)
            try file.withDescriptor("test") { (fd) throws(StorageError) in
                try file.close()
                #expect(file.isDescriptorOpen)
                var byte: UInt8 = 0
                #expect(pread(fd, &byte, 1, 1) == 1)
                #expect(byte == 2)
                #expect((#expect(throws: StorageError.self) { _ = try file.size() })?.code == .closed)
            }
            #expect(!file.isDescriptorOpen)
        }
    }

    @Test("threads reading while another closes get the right bytes or .closed, never another file's")
    func concurrentClose() throws {
        try withTemporaryDirectory { dir in
            let bytes = (0..<4096).map { UInt8(truncatingIfNeeded: $0) }
            let file = try fs.openFile(dir + "/f", options: .createIfNeeded)
            try file.write(bytes: bytes, at: 0)
            let wrong = Mutex(0)
            DispatchQueue.concurrentPerform(iterations: 5) { t in
                if t == 0 {
                    usleep(2_000)
                    try? file.close()
                    return
                }
                for _ in 0..<2_000 {
                    do {
                        if try file.read(count: 4096, at: 0) != bytes { wrong.withLock { $0 += 1 } }
                    } catch let error as StorageError where error.code == .closed {
                        break
                    } catch {
                        wrong.withLock { $0 += 1 }
                    }
                }
            }
            #expect(wrong.withLock { $0 } == 0)
            #expect(!file.isDescriptorOpen)
        }
    }

    @Test("createDirectory makes every missing parent, succeeds again, and refuses a path through a file")
    func createDirectory() throws {
        try withTemporaryDirectory { dir in
            let nested = dir + "/a/b/c"
            try fs.createDirectory(nested)
            #expect(fs.isDirectory(nested))
            try fs.createDirectory(nested)
            let file = try fs.open(dir + "/plain", options: .createIfNeeded)
            try file.close()
            #expect(throws: StorageError.self) { try fs.createDirectory(dir + "/plain") }
            #expect(throws: StorageError.self) { try fs.createDirectory(dir + "/plain/sub") }
        }
    }

    @Test("availableBytes reports free space for a directory and for a file not yet created")
    func availableBytes() throws {
        try withTemporaryDirectory { dir in
            let free = try #require(fs.availableBytes(at: dir))
            #expect(free > 0)
            #expect(fs.availableBytes(at: dir + "/not-yet") != nil)
            #expect(fs.availableBytes(at: dir + "/no/such/dir/file") == nil)
        }
    }

    @Test(
        "errno maps to the documented codes",
        arguments: [
            (ENOSPC, false, StorageError.Code.diskFull), (EDQUOT, true, .diskFull), (EROFS, false, .readOnly),
            (EACCES, true, .readOnly), (EACCES, false, .io), (EPERM, true, .readOnly), (EIO, true, .io),
            (ENOENT, false, .io),
        ])
    func errnoMapping(code: Int32, writing: Bool, expected: StorageError.Code) {
        let error = StorageError.posix(code, "op", path: "/x", writing: writing)
        #expect(error.code == expected)
        #expect(error.errno == code)
        #expect(error.path == "/x")
        #expect(error.message.contains(String(cString: strerror(code))))
    }
}
