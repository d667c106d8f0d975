import Glibc
import Testing

@testable import KeelStorage

@Suite("CrashSimulatingFileSystem: what survives a power cut")
struct CrashSimulatingFileSystemTests {
    static let sector = CrashSimulatingFileSystem.sectorSize
    /// The modes, with torn under several seeds.
    static let crashes: [(CrashMode, UInt64)] = [(.drop, 0), (.keep, 0)] + (1...8).map { (.torn, $0) }

    /// A file at /d/f holding `bytes`, created, synced and its directory synced: fully durable.
    func durableFile(_ bytes: [UInt8]) throws -> (CrashSimulatingFileSystem, any StorageFile) {
        let fs = CrashSimulatingFileSystem()
        let file = try fs.open("/d/f", options: .createIfNeeded)
        try file.write(bytes: bytes, at: 0)
        try file.sync()
        try fs.syncDirectory("/d")
        return (fs, file)
    }

    @Test("synced data in a synced directory survives every mode and seed", arguments: crashes)
    func syncedSurvives(mode: CrashMode, seed: UInt64) throws {
        let bytes = (0..<5_000).map { UInt8(truncatingIfNeeded: $0) }
        let (fs, file) = try durableFile(bytes)
        try file.write(bytes: [1, 2, 3], at: 10_000)  // unsynced: may or may not survive
        let image = fs.crashedImage(mode: mode, seed: seed)
        let after = try #require(image.contents(of: "/d/f"))
        #expect(Array(after.prefix(5_000)) == bytes)
        #expect(image.paths == ["/d/f"])
    }

    @Test("unsynced writes and size changes are dropped in drop mode and kept in keep mode")
    func dropAndKeep() throws {
        let (fs, file) = try durableFile([1, 1, 1, 1])
        try file.write(bytes: [2, 2], at: 1)
        try file.write(bytes: [3], at: 6)
        #expect(fs.crashedImage(mode: .drop).contents(of: "/d/f") == [1, 1, 1, 1])
        #expect(fs.crashedImage(mode: .keep).contents(of: "/d/f") == [1, 2, 2, 1, 0, 0, 3])
        try file.truncate(to: 2)
        try file.allocate(offset: 0, length: 3)
        #expect(fs.crashedImage(mode: .drop).contents(of: "/d/f") == [1, 1, 1, 1])
        #expect(fs.crashedImage(mode: .keep).contents(of: "/d/f") == [1, 2, 0])
        try file.sync()
        #expect(fs.crashedImage(mode: .drop).contents(of: "/d/f") == [1, 2, 0])
    }

    @Test("torn mode keeps whole sectors and drops others, the same way for the same seed")
    func tornSectors() throws {
        let sectors = 64
        let old = [UInt8](repeating: 0xAA, count: sectors * Self.sector)
        let new = [UInt8](repeating: 0x55, count: sectors * Self.sector)
        let (fs, file) = try durableFile(old)
        try file.write(bytes: new, at: 0)

        var images: [[UInt8]] = []
        for seed: UInt64 in 1...4 {
            let image = try #require(fs.crashedImage(mode: .torn, seed: seed).contents(of: "/d/f"))
            #expect(image.count == old.count)
            var kept = 0
            for s in 0..<sectors {
                let piece = image[(s * Self.sector)..<((s + 1) * Self.sector)]
                let isNew = piece.allSatisfy { $0 == 0x55 }
                #expect(isNew || piece.allSatisfy { $0 == 0xAA }, "sector \(s) is mixed")
                if isNew { kept += 1 }
            }
            #expect(kept > 0 && kept < sectors, "seed \(seed) kept \(kept) of \(sectors) sectors")
            #expect(fs.crashedImage(mode: .torn, seed: seed).contents(of: "/d/f") == image)
            images.append(image)
        }
        #expect(Set(images).count > 1, "different seeds tear differently")
    }

    @Test("an unaligned torn write is cut at the file's 512-byte boundaries")
    func tornUnaligned() throws {
        let (fs, file) = try durableFile([UInt8](repeating: 0, count: 4 * Self.sector))
        try file.write(bytes: [UInt8](repeating: 1, count: 1_000), at: 100)  // pieces 100..<512, 512..<1024, 1024..<1100
        var seen: Set<[Bool]> = []
        for seed: UInt64 in 0..<32 {
            let image = try #require(fs.crashedImage(mode: .torn, seed: seed).contents(of: "/d/f"))
            #expect(image[..<100].allSatisfy { $0 == 0 })
            #expect(image[1100...].allSatisfy { $0 == 0 })
            let pieces = [100..<512, 512..<1024, 1024..<1100].map { range -> Bool in
                let slice = image[range]
                #expect(slice.allSatisfy { $0 == 1 } || slice.allSatisfy { $0 == 0 }, "piece \(range) is mixed")
                return slice.first == 1
            }
            seen.insert(pieces)
        }
        #expect(seen.count > 2)
    }

    @Test("a created and synced file whose directory was never synced is gone in drop mode")
    func creationNeedsDirectorySync() throws {
        let fs = CrashSimulatingFileSystem()
        let file = try fs.open("/d/new", options: .createIfNeeded)
        try file.write(bytes: [7], at: 0)
        try file.sync()
        try fs.syncDirectory("/other")
        #expect(fs.crashedImage(mode: .drop).paths == [])
        #expect(fs.crashedImage(mode: .keep).contents(of: "/d/new") == [7])
        try fs.syncDirectory("/d/")
        #expect(fs.crashedImage(mode: .drop).contents(of: "/d/new") == [7])
    }

    @Test("rename and remove become durable only when their directory is synced")
    func renameNeedsDirectorySync() throws {
        let fs = CrashSimulatingFileSystem(files: ["/d/a": [1], "/d/b": [2], "/d/c": [3]])
        try fs.rename("/d/a", to: "/d/b")
        try fs.remove("/d/c")
        #expect(!fs.fileExists("/d/a"))
        let before = fs.crashedImage(mode: .drop)
        #expect(before.paths == ["/d/a", "/d/b", "/d/c"])
        #expect(before.contents(of: "/d/b") == [2])
        #expect(fs.crashedImage(mode: .keep).paths == ["/d/b"])
        try fs.syncDirectory("/d")
        let after = fs.crashedImage(mode: .drop)
        #expect(after.paths == ["/d/b"])
        #expect(after.contents(of: "/d/b") == [1])
    }

    @Test("torn mode applies each unsynced directory change or not, reproducibly by seed")
    func tornDirectoryChanges() throws {
        let fs = CrashSimulatingFileSystem()
        for i in 0..<16 {
            let file = try fs.open("/d/f\(i)", options: .createIfNeeded)
            try file.write(bytes: [UInt8(i)], at: 0)
            try file.sync()
            try file.close()
        }
        var outcomes: Set<[String]> = []
        for seed: UInt64 in 1...4 {
            let image = fs.crashedImage(mode: .torn, seed: seed)
            #expect(image.paths.count > 0 && image.paths.count < 16, "seed \(seed): \(image.paths.count) files")
            for path in image.paths {
                #expect(image.contents(of: path) == [UInt8(path.dropFirst(4)) ?? 255])
            }
            #expect(fs.crashedImage(mode: .torn, seed: seed).paths == image.paths)
            outcomes.insert(image.paths)
        }
        #expect(outcomes.count > 1)
    }

    @Test("after crash(after: n) the n-th operation and all later ones throw and change nothing")
    func armedCrash() throws {
        let fs = CrashSimulatingFileSystem()
        let file = try fs.open("/d/f", options: .createIfNeeded)  // 1
        try file.write(bytes: [1], at: 0)  // 2
        #expect(fs.operationCount == 2)
        fs.crash(after: 4)
        try file.sync()  // 3
        #expect(!fs.isCrashed)
        let error = #expect(throws: StorageError.self) { try file.write(bytes: [2], at: 1) }  // 4
        #expect(error?.code == .io)
        #expect(error?.message.contains("simulated crash") == true)
        #expect(fs.crashedAtOperation == 4)
        #expect(throws: StorageError.self) { _ = try file.read(count: 1, at: 0) }
        #expect(throws: StorageError.self) { _ = try file.size() }
        #expect(throws: StorageError.self) { try file.sync() }
        #expect(throws: StorageError.self) { try fs.syncDirectory("/d") }
        #expect(throws: StorageError.self) { try fs.createDirectory("/e") }
        #expect(throws: StorageError.self) { _ = try fs.open("/d/g", options: .createIfNeeded) }
        #expect(fs.operationCount == 8)  // size() and createDirectory are not counted operations
        #expect(fs.crashedImage(mode: .keep).contents(of: "/d/f") == [1])
        #expect(fs.crashedImage(mode: .drop).paths == [])
    }

    @Test("crashing at every operation of a workload leaves exactly the transactions synced before it")
    func crashAtEveryOperation() throws {
        /// Appends three one-byte records, syncing after each; returns how many syncs succeeded.
        func workload(_ fs: CrashSimulatingFileSystem) -> Int {
            var synced = 0
            do {
                let file = try fs.open("/d/log", options: .createIfNeeded)
                try file.sync()
                try fs.syncDirectory("/d")
                for i in 0..<3 {
                    try file.write(bytes: [UInt8(i + 1)], at: UInt64(i))
                    try file.sync()
                    synced += 1
                }
                try file.close()
            } catch {}
            return synced
        }
        let clean = CrashSimulatingFileSystem()
        #expect(workload(clean) == 3)
        let total = clean.operationCount
        #expect(total == 10)
        for n in 1...(total + 1) {
            let fs = CrashSimulatingFileSystem()
            fs.crash(after: n)
            let acknowledged = workload(fs)
            let image = fs.crashedImage(mode: .drop)
            // The log exists durably once the directory sync (operation 3) has run.
            #expect((image.contents(of: "/d/log") != nil) == (n > 3), "crash at \(n)")
            let expected = (0..<acknowledged).map { UInt8($0 + 1) }
            #expect((image.contents(of: "/d/log") ?? []) == expected, "crash at \(n)")
        }
    }

    @Test("a file system started from an image holds its files durably")
    func startingFromImage() throws {
        let image = InMemoryFileSystem(files: ["/d/a": [1, 2], "/d/b": []])
        let fs = CrashSimulatingFileSystem(startingFrom: image)
        #expect(fs.contents(of: "/d/a") == [1, 2])
        let again = fs.crashedImage(mode: .drop)
        #expect(again.paths == ["/d/a", "/d/b"])
        #expect(again.contents(of: "/d/a") == [1, 2])
    }

    @Test("a crashed image asked without arming reflects the state at that moment")
    func crashNow() throws {
        let (fs, file) = try durableFile([1])
        let first = fs.crashedImage(mode: .keep)
        try file.write(bytes: [2], at: 0)
        #expect(first.contents(of: "/d/f") == [1])
        #expect(fs.crashedImage(mode: .keep).contents(of: "/d/f") == [2])
        #expect(!fs.isCrashed)
        try file.close()
    }
}
