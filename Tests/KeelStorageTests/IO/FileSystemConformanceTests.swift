// Semantics every FileSystem must share, run against the real file system, the in-memory one
// and the live view of the crash-simulating one.

import Glibc
import Testing

@testable import KeelStorage

/// The file systems the conformance suite runs against.
enum FileSystemUnderTest: String, CaseIterable, CustomTestStringConvertible {
    case posix, inMemory, crashSimulating

    var testDescription: String { rawValue }

    /// Runs `body` with a fresh, empty file system of this kind and a directory to work in.
    func with(_ body: (any FileSystem, String) throws -> Void) throws {
        switch self {
        case .posix: try withTemporaryDirectory { try body(PosixFileSystem(), $0) }
        case .inMemory: try body(InMemoryFileSystem(), "/mem")
        case .crashSimulating: try body(CrashSimulatingFileSystem(), "/crash")
        }
    }
}

@Suite("FileSystem conformance: POSIX, in-memory and crash-simulating behave alike")
struct FileSystemConformanceTests {
    @Test("writes past the end zero-fill the gap, and reads are short only at the end", arguments: FileSystemUnderTest.allCases)
    func sparseWritesAndShortReads(_ kind: FileSystemUnderTest) throws {
        try kind.with { fs, dir in
            let file = try fs.open(dir + "/f", options: .createIfNeeded)
            try file.write(bytes: [1, 2], at: 0)
            try file.write(bytes: [3], at: 6)
            #expect(try file.size() == 7)
            #expect(try file.readAll() == [1, 2, 0, 0, 0, 0, 3])
            #expect(try file.read(count: 10, at: 5) == [0, 3])
            #expect(try file.read(count: 10, at: 7) == [])
            #expect(try file.read(count: 10, at: 99) == [])
            var buffer = [UInt8](repeating: 0, count: 4)
            let error = #expect(throws: StorageError.self) {
                try buffer.withUnsafeMutableBytes { try file.readFully(into: $0, at: 5) }
            }
            #expect(error?.code == .corrupt)
            try file.close()
        }
    }

    @Test("a gathered write puts exactly the pieces' concatenation at its offset (more pieces than one pwritev takes)",
          arguments: FileSystemUnderTest.allCases)
    func gatheredWrite(_ kind: FileSystemUnderTest) throws {
        try kind.with { fs, dir in
            let file = try fs.open(dir + "/f", options: .createIfNeeded)
            try file.write(bytes: [UInt8](repeating: 0xEE, count: 100), at: 0)
            // 2,500 pieces of 0 to 40 bytes (empty ones included), past PosixFile.maxVectors.
            var random = SeededRandom(seed: 7)
            let pieces: [[UInt8]] = (0..<2_500).map { i in
                (0..<Int(random.next() % 41)).map { UInt8(truncatingIfNeeded: i &+ $0) }
            }
            let joined = pieces.flatMap { $0 }
            let pointers = pieces.map { p in
                let b = UnsafeMutableRawBufferPointer.allocate(byteCount: max(p.count, 1), alignment: 1)
                b.copyBytes(from: p)
                return b
            }
            defer { for b in pointers { b.deallocate() } }
            let views = zip(pointers, pieces).map { UnsafeRawBufferPointer(rebasing: $0.0[..<$0.1.count]) }
            try file.writeFully(gathering: views, at: 60)
            #expect(try file.size() == UInt64(60 + joined.count))
            #expect(try file.readAll() == [UInt8](repeating: 0xEE, count: 60) + joined)
            try file.writeFully(gathering: [], at: 5)
            #expect(try file.size() == UInt64(60 + joined.count), "no pieces: nothing written")
            try file.close()
        }
    }

    @Test("truncate cuts and zero-extends; allocate grows without changing bytes", arguments: FileSystemUnderTest.allCases)
    func truncateAndAllocate(_ kind: FileSystemUnderTest) throws {
        try kind.with { fs, dir in
            let file = try fs.open(dir + "/f", options: .createIfNeeded)
            try file.write(bytes: Array(1...8), at: 0)
            try file.truncate(to: 3)
            #expect(try file.readAll() == [1, 2, 3])
            try file.truncate(to: 5)
            #expect(try file.readAll() == [1, 2, 3, 0, 0])
            try file.allocate(offset: 4, length: 6)
            #expect(try file.readAll() == [1, 2, 3, 0, 0, 0, 0, 0, 0, 0])
            try file.allocate(offset: 0, length: 2)
            #expect(try file.size() == 10)
            try file.close()
        }
    }

    @Test("rename replaces the target and an open handle follows its file", arguments: FileSystemUnderTest.allCases)
    func renameKeepsHandles(_ kind: FileSystemUnderTest) throws {
        try kind.with { fs, dir in
            let a = try fs.open(dir + "/a", options: .createIfNeeded)
            try a.write(bytes: [1], at: 0)
            let b = try fs.open(dir + "/b", options: .createIfNeeded)
            try b.write(bytes: [2, 2], at: 0)
            try b.close()
            try fs.rename(dir + "/a", to: dir + "/b")
            try fs.syncDirectory(dir)
            #expect(!fs.fileExists(dir + "/a"))
            #expect(fs.fileExists(dir + "/b"))
            try a.write(bytes: [9], at: 1)  // the handle now writes the file named b
            try a.close()
            let reopened = try fs.open(dir + "/b", options: .readOnly)
            #expect(try reopened.readAll() == [1, 9])
            try reopened.close()
        }
    }

    @Test("a removed file stays usable through a handle opened before", arguments: FileSystemUnderTest.allCases)
    func removeWhileOpen(_ kind: FileSystemUnderTest) throws {
        try kind.with { fs, dir in
            let file = try fs.open(dir + "/f", options: .createIfNeeded)
            try file.write(bytes: [4, 5], at: 0)
            try fs.remove(dir + "/f")
            #expect(!fs.fileExists(dir + "/f"))
            try file.write(bytes: [6], at: 2)
            #expect(try file.readAll() == [4, 5, 6])
            try file.close()
            #expect((#expect(throws: StorageError.self) { try fs.remove(dir + "/f") })?.errno == ENOENT)
        }
    }

    @Test("missing files, exclusive creation and read-only handles fail with the same errors", arguments: FileSystemUnderTest.allCases)
    func sameErrors(_ kind: FileSystemUnderTest) throws {
        try kind.with { fs, dir in
            let missing = #expect(throws: StorageError.self) { _ = try fs.open(dir + "/none", options: .readWrite) }
            #expect(missing?.code == .io)
            #expect(missing?.errno == ENOENT)
            #expect(missing?.path == dir + "/none")
            #expect(missing?.message.contains("no such file") == true)

            let file = try fs.open(dir + "/f", options: FileOpenOptions(create: true, exclusive: true))
            try file.close()
            let exists = #expect(throws: StorageError.self) {
                _ = try fs.open(dir + "/f", options: FileOpenOptions(create: true, exclusive: true))
            }
            #expect(exists?.errno == EEXIST)

            let reader = try fs.open(dir + "/f", options: .readOnly)
            #expect((#expect(throws: StorageError.self) { try reader.write(bytes: [1], at: 0) })?.code == .readOnly)
            #expect(try reader.size() == 0)
            try reader.close()
            #expect((#expect(throws: StorageError.self) { try reader.close() })?.code == .closed)
            #expect((#expect(throws: StorageError.self) { _ = try reader.size() })?.code == .closed)

            let rename = #expect(throws: StorageError.self) { try fs.rename(dir + "/none", to: dir + "/x") }
            #expect(rename?.errno == ENOENT)
        }
    }
}
