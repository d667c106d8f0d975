import Dispatch
import Glibc
import Testing

@testable import KeelStorage

@Suite("InMemoryFileSystem: files as byte arrays")
struct InMemoryFileSystemTests {
    @Test("setContents flips bits a handle then reads, and contents shows every write")
    func contentsForTests() throws {
        let fs = InMemoryFileSystem()
        let file = try fs.open("/s/f", options: .createIfNeeded)
        try file.write(bytes: [0b0000_0001, 2, 3], at: 0)
        #expect(fs.contents(of: "/s/f") == [1, 2, 3])
        var bytes = try #require(fs.contents(of: "/s/f"))
        bytes[0] ^= 0b1000_0000
        fs.setContents(bytes, of: "/s/f")
        #expect(try file.readAll() == [0b1000_0001, 2, 3])
        fs.setContents([7], of: "/s/planted")
        #expect(fs.paths == ["/s/f", "/s/planted"])
        #expect(fs.contents(of: "/s/missing") == nil)
        let planted = InMemoryFileSystem(files: ["/a": [1], "/b": [2, 3]])
        #expect(planted.contents(of: "/b") == [2, 3])
        #expect(planted.usedBytes == 3)
    }

    @Test("a write past the capacity fails with diskFull (ENOSPC) and changes nothing")
    func capacity() throws {
        let fs = InMemoryFileSystem(capacity: 100)
        #expect(fs.availableBytes(at: "/x") == 100)
        let file = try fs.open("/f", options: .createIfNeeded)
        try file.write(bytes: [UInt8](repeating: 1, count: 60), at: 0)
        #expect(fs.availableBytes(at: "/x") == 40)
        let error = #expect(throws: StorageError.self) {
            try file.write(bytes: [UInt8](repeating: 2, count: 50), at: 60)
        }
        #expect(error?.code == .diskFull)
        #expect(error?.errno == ENOSPC)
        #expect(try file.size() == 60)
        #expect(fs.contents(of: "/f") == [UInt8](repeating: 1, count: 60))
        // Overwriting in place needs no space; allocating and extending do.
        try file.write(bytes: [UInt8](repeating: 3, count: 60), at: 0)
        #expect((#expect(throws: StorageError.self) { try file.allocate(offset: 0, length: 101) })?.code == .diskFull)
        #expect((#expect(throws: StorageError.self) { try file.truncate(to: 101) })?.code == .diskFull)
        try file.truncate(to: 100)
        #expect(fs.availableBytes(at: "/") == 0)
        try file.truncate(to: 10)
        #expect(fs.availableBytes(at: "/") == 90)
    }

    @Test("removing a file frees its space once the last handle closes")
    func removeFreesSpace() throws {
        let fs = InMemoryFileSystem(capacity: 10)
        let file = try fs.open("/f", options: .createIfNeeded)
        try file.write(bytes: [UInt8](repeating: 1, count: 10), at: 0)
        try fs.remove("/f")
        #expect(fs.usedBytes == 10)
        try file.close()
        #expect(fs.usedBytes == 0)
        let other = try fs.open("/g", options: .createIfNeeded)
        try other.write(bytes: [UInt8](repeating: 2, count: 10), at: 0)
        try fs.rename("/g", to: "/h")
        #expect(fs.usedBytes == 10)
        fs.capacity = nil
        #expect(fs.availableBytes(at: "/") == nil)
    }

    @Test("directories are implicit: any prefix exists and directory calls succeed")
    func implicitDirectories() throws {
        let fs = InMemoryFileSystem()
        #expect(!fs.fileExists("/a/b"))
        try fs.createDirectory("/a/b")
        try fs.syncDirectory("/a/b")
        let file = try fs.open("/a/b/c/file", options: .createIfNeeded)
        try file.close()
        #expect(fs.fileExists("/a/b/c/file"))
        #expect(fs.fileExists("/a/b"))
        #expect(fs.fileExists("/a/b/"))
        #expect(!fs.fileExists("/a/bc"))
    }

    @Test("a wild offset fails with EFBIG instead of allocating the memory")
    func wildOffset() throws {
        let fs = InMemoryFileSystem()
        let file = try fs.open("/f", options: .createIfNeeded)
        let error = #expect(throws: StorageError.self) { try file.write(bytes: [1], at: 1 << 40) }
        #expect(error?.errno == EFBIG)
        #expect(try file.size() == 0)
    }

    @Test("threads writing their own regions at once all land")
    func concurrentWriters() throws {
        let fs = InMemoryFileSystem()
        let file = try fs.open("/f", options: .createIfNeeded)
        let threads = 8
        let perThread = 200
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<perThread {
                let offset = UInt64((i * threads + t) * 4)
                try? file.write(bytes: [UInt8(t), UInt8(t), UInt8(t), UInt8(t)], at: offset)
            }
        }
        let all = try file.readAll()
        #expect(all.count == threads * perThread * 4)
        for slot in 0..<(threads * perThread) {
            #expect(all[(slot * 4)..<(slot * 4 + 4)].allSatisfy { $0 == UInt8(slot % threads) })
        }
    }
}
