// The backup file (Backup/BackupArchive.swift): a snapshot's trees written and restored give the
// same contents, compacted, while writes go on after the snapshot; every flipped byte and every
// cut is refused before anything of it is trusted; a crash at any operation of a restore leaves
// either no store file or the whole one (I9). And compaction refuses a disk without room for the
// new file, saying how much it needs, and changes nothing.

import Testing

@testable import KeelStorage

@Suite("Backup files: round trip, damage refused, crash-safe restore")
struct BackupArchiveTests {
    /// A backup of `store` as it is now, written to `path` on `fs`.
    static func backup(_ store: Store, to path: String, _ fs: any FileSystem, info: [UInt8] = Array(#"{"test":true}"#.utf8)) throws -> BackupSummary {
        let snapshot = try store.snapshot()
        defer { snapshot.close() }
        let writer = try BackupWriter(creating: path, fileSystem: fs, info: info)
        try writer.add(store: "Main", snapshot: snapshot)
        return try writer.finish()
    }

    /// The whole file at `path`.
    static func bytes(of path: String, _ fs: any FileSystem) throws -> [UInt8] {
        let file = try fs.open(path, options: .readOnly)
        defer { try? file.close() }
        var bytes = [UInt8](repeating: 0, count: Int(try file.size()))
        try bytes.withUnsafeMutableBytes { try file.readFully(into: $0, at: 0) }
        return bytes
    }

    @Test("a backup restores to the snapshot's contents, compacted; writes after the snapshot are not in it")
    func roundTrip() throws {
        let fs = InMemoryFileSystem()
        try withVerifiedStore(fs) { store in
            let expected = try CompactionTests.fillAndThin(store, keys: 6_000)
            let snapshot = try store.snapshot()
            try store.write { txn in try txn.tree("one")!.put(key: Array("later".utf8), value: [1]) }
            let writer = try BackupWriter(creating: "/db/b.keelbackup", fileSystem: fs, info: Array("{}".utf8))
            try writer.add(store: "Main", snapshot: snapshot)
            snapshot.close()
            let summary = try writer.finish()
            #expect(summary.stores.map(\.name) == ["Main"] && summary.trees == 2)
            #expect(summary.entries == UInt64(expected.values.reduce(0) { $0 + $1.count }))
            #expect(try BackupArchive.check(path: "/db/b.keelbackup", fileSystem: fs) == summary)
            try fs.createDirectory("/restored")
            let restored = try Store.restore(backup: "/db/b.keelbackup", into: "/restored", options: testOptions(fs))
            #expect(restored == summary)
            let copy = try openTestStore(fs, at: "/restored/Main.keel")
            defer { try? copy.close() }
            try expectContents(of: copy, equal: expected, "the restored store")
            try expectVerifies(copy, "the restored store")
            #expect(try copy.statistics().freePageCount == 0)
            #expect(!fs.fileExists("/restored/Main.keel.restoring"))
        }
    }

    @Test("flipped bytes and cuts of a backup are refused, never trusted (every byte with KEEL_SLOW_TESTS=1)")
    func damageRefused() throws {
        let fs = InMemoryFileSystem()
        let store = try openTestStore(fs)
        try store.write { txn in
            let tree = try txn.openTree("t")
            for i in 0..<60 { try tree.put(key: numberedKey(i), value: randomBytes(i % 40, seed: UInt64(i))) }
            try tree.put(key: Array("big".utf8), value: [UInt8](repeating: 7, count: 3_000))  // compressed
        }
        _ = try Self.backup(store, to: "/b", fs)
        try store.close()
        let bytes = try Self.bytes(of: "/b", fs)
        func refused(_ damaged: [UInt8], _ what: String) throws {
            let path = "/damaged"
            if fs.fileExists(path) { try fs.remove(path) }
            let out = try fs.open(path, options: .createIfNeeded)
            try damaged.withUnsafeBytes { try out.writeFully($0, at: 0) }
            try out.close()
            do {
                _ = try BackupArchive.check(path: path, fileSystem: fs)
                Issue.record("\(what) was accepted")
            } catch {
                #expect([.corrupt, .notAStore, .unsupportedVersion].contains(error.code), "\(what): \(error)")
            }
        }
        // Every byte of the header and the first blocks, then one in `step`.
        let step = slowTestsEnabled ? 1 : 5
        let positions = bytes.indices.filter { $0 < 96 || $0 % step == 0 }
        for i in positions {
            var damaged = bytes
            damaged[i] ^= UInt8(1 << (i % 8))
            try refused(damaged, "a flip at byte \(i)")
        }
        for length in positions { try refused(Array(bytes[..<length]), "the first \(length) bytes") }
        try refused(bytes + [0], "a byte after the end block")
        print("[BackupArchiveTests] a \(bytes.count)-byte backup: \(positions.count) flips and \(positions.count) cuts refused")
    }

    @Test("I9: a crash at any operation of a restore leaves no store file or the whole one")
    func crashDuringRestore() throws {
        let source = InMemoryFileSystem()
        let store = try openTestStore(source)
        let expected = try CompactionTests.fillAndThin(store, keys: 1_500)
        _ = try Self.backup(store, to: "/b", source)
        try store.close()
        let bytes = try Self.bytes(of: "/b", source)
        func fresh() throws -> CrashSimulatingFileSystem {
            let fs = CrashSimulatingFileSystem(files: ["/b": bytes])
            try fs.createDirectory("/r")
            return fs
        }
        let clean = try fresh()
        let before = clean.operationCount
        _ = try Store.restore(backup: "/b", into: "/r", options: testOptions(clean))
        let operations = clean.operationCount - before
        for k in 1...operations {
            let fs = try fresh()
            fs.crash(after: before + k)
            _ = try? Store.restore(backup: "/b", into: "/r", options: testOptions(fs))
            for mode in CrashMode.allCases {
                let image = fs.crashedImage(mode: mode, seed: UInt64(k))
                guard image.fileExists("/r/Main.keel") else { continue }
                let context = "crash at operation \(k) of \(operations) of a restore, \(mode)"
                let restored = try openTestStore(image, at: "/r/Main.keel")
                try expectContents(of: restored, equal: expected, context)
                try expectVerifies(restored, context)
                try restored.close()
            }
        }
        print("[BackupArchiveTests] crashed a restore of \(operations) operations at each one")
    }

    @Test("compaction refuses a disk without room for the new file, saying how much it needs, and changes nothing")
    func compactionNeedsRoom() throws {
        let fs = InMemoryFileSystem(capacity: 3 << 20)
        let store = try openTestStore(fs)
        defer { try? store.close() }
        try store.write { txn in
            let tree = try txn.openTree("t")
            for i in 0..<1_500 { try tree.put(key: numberedKey(i), value: randomBytes(500, seed: UInt64(i))) }
        }
        let before = try contents(of: store)
        do {
            _ = try store.compact()
            Issue.record("compaction ran without room for the new file")
        } catch {
            #expect(error.code == .diskFull, "\(error)")
            #expect(error.message.hasPrefix("compaction needs about ") && error.message.contains(" free bytes for the new file; "), "\(error)")
        }
        try expectContents(of: store, equal: before, "after the refused compaction")
        try expectVerifies(store, "after the refused compaction")
        #expect(!fs.fileExists(testStorePath + ".compact"))
    }
}
