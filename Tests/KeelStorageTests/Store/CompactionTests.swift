// Compaction: after deleting 90% of the keys, `compact()` shrinks the page file (more than 3×, and
// to within 3× of the live bytes; the benchmark holds the 1.1× target), keeps every remaining
// key and value, leaves no free page and verifies clean, also after a reopen. A reader holding a
// snapshot during compaction keeps reading it. A crash at every file operation of a compaction
// (drop, keep and torn) leaves a store that holds every key either way (I9), verifies clean, and
// compacts again.

import Testing

@testable import KeelStorage

@Suite("Compaction: smaller, identical, and crash-safe at every operation (I9)")
struct CompactionTests {
    /// Fills two trees, then deletes about 90% of the keys; returns what remains.
    static func fillAndThin(_ store: Store, keys: Int) throws -> StoreContents {
        var model: StoreContents = ["one": [:], "two": [:]]
        for chunk in stride(from: 0, to: keys, by: 2_000) {
            try store.write { txn in
                let one = try txn.openTree("one")
                let two = try txn.openTree("two")
                for i in chunk..<min(keys, chunk + 2_000) {
                    let key = Array(numberedKey(i).suffix(8)) + randomBytes(8, seed: UInt64(i))  // 16-byte keys
                    let value = randomBytes(100, seed: UInt64(i) &* 31)
                    let tree = i % 4 == 0 ? two : one
                    try tree.put(key: key, value: value)
                    model[tree.name]![key] = value
                    if i % 97 == 0 {  // some overflow values too
                        let big = randomBytes(5_000, seed: UInt64(i) &* 7)
                        try tree.put(key: key, value: big)
                        model[tree.name]![key] = big
                    }
                }
            }
        }
        try store.write { txn in
            for name in ["one", "two"] {
                let tree = try txn.tree(name)!
                for (n, key) in model[name]!.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }).enumerated() where n % 10 != 0 {
                    try tree.delete(key: key)
                    model[name]![key] = nil
                }
            }
        }
        return model
    }

    static func liveBytes(_ contents: StoreContents) -> Int {
        contents.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.key.count + $1.value.count } }
    }

    @Test("after deleting 90% of the keys, compaction shrinks the page file and keeps every key and value", arguments: [false, true])
    func shrinks(realFiles: Bool) throws {
        let keys = slowTestsEnabled ? 100_000 : (realFiles ? 8_000 : 20_000)
        let body = { (fs: any FileSystem, path: String) throws in
            try withVerifiedStore(fs, at: path) { store in
                let expected = try Self.fillAndThin(store, keys: keys)
                #expect(try store.statistics().freePageCount > 0, "deleting 90% should free pages")
                let report = try store.compact()
                print("[CompactionTests] \(realFiles ? "real files" : "in memory"), \(keys) keys: \(report)")
                #expect(report.pageFileBytesAfter * 3 < report.pageFileBytesBefore, "the page file should shrink more than 3×: \(report)")
                #expect(report.pageFileBytesAfter <= UInt64(3 * Self.liveBytes(expected)), "after: \(report.pageFileBytesAfter), live \(Self.liveBytes(expected))")
                #expect(report.bytesAfter < report.bytesBefore)
                #expect(report.trees == 2 && report.entries == expected.values.reduce(0) { $0 + $1.count })
                #expect(try store.statistics().freePageCount == 0, "no free page after compaction")
                try expectContents(of: store, equal: expected, "after compaction")
                // The compacted store takes writes and keeps them.
                try store.write { txn in try txn.tree("one")!.put(key: Array("after".utf8), value: [1, 2, 3]) }
                try store.close()
                let reopened = try openTestStore(fs, at: path)
                defer { try? reopened.close() }
                var withWrite = expected
                withWrite["one"]![Array("after".utf8)] = [1, 2, 3]
                try expectContents(of: reopened, equal: withWrite, "after compaction, a write and a reopen")
            }
        }
        if realFiles {
            try withTemporaryDirectory { try body(PosixFileSystem(), $0 + "/compact.keel") }
        } else {
            let memory = InMemoryFileSystem()
            try body(memory, testStorePath)
            #expect(memory.paths == [testStorePath, testStorePath + "-wal"], "compaction left files behind: \(memory.paths)")
        }
    }

    @Test("I5 I9: a reader holding a snapshot across a compaction keeps reading it; writers continue on the new file")
    func readerAcrossCompaction() throws {
        try withVerifiedStore { store in
            let expected = try Self.fillAndThin(store, keys: 4_000)
            try store.read { txn in
                let before = try contents(of: txn)
                expectContents(before, equal: expected, "before compaction")
                _ = try store.compact()
                try store.write { w in try w.tree("two")!.put(key: Array("new".utf8), value: [9]) }
                expectContents(try contents(of: txn), equal: expected, "the old snapshot after compaction and a write")
            }
            var withWrite = expected
            withWrite["two"]![Array("new".utf8)] = [9]
            try expectContents(of: store, equal: withWrite, "a new reader after compaction")
        }
    }

    /// A store with frames still in its log (dropped without close), as files.
    static func crashFixture() throws -> (files: [String: Bytes], contents: StoreContents) { try crashFixtureValue.get() }
    private static let crashFixtureValue = Fixture<([String: Bytes], StoreContents)> {
        let fs = CrashSimulatingFileSystem()
        let store = try openTestStore(fs)
        let expected = try fillAndThin(store, keys: 600)
        try store.write { txn in try txn.tree("one")!.put(key: Array("in the log".utf8), value: [7]) }
        var contents = expected
        contents["one"]![Array("in the log".utf8)] = [7]
        let image = fs.crashedImage(mode: .keep)
        return (files(of: image), contents)
    }

    @Test("I9: a crash at any operation of a compaction leaves a complete store holding every key", arguments: CrashMode.allCases)
    func crashDuringCompaction(mode: CrashMode) throws {
        let (files, expected) = try Self.crashFixture()
        // A clean run counts the operations of open and of compaction.
        let clean = CrashSimulatingFileSystem(files: files)
        let store = try openTestStore(clean)
        let opened = clean.operationCount
        _ = try store.compact()
        let compaction = clean.operationCount - opened
        try store.close()
        #expect(compaction >= 10, "compaction should make many operations, made \(compaction)")
        var succeeded: [Int] = []
        for k in 1...(compaction + 1) {
            let fs = CrashSimulatingFileSystem(files: files)
            let store = try openTestStore(fs)
            #expect(fs.operationCount == opened, "the open should make the same operations every time")
            fs.crash(after: opened + k)
            if (try? store.compact()) != nil, k <= compaction { succeeded.append(k) }
            try? store.close()
            let seed = UInt64(k) &* 0x9E37_79B9_7F4A_7C15
            let image = fs.crashedImage(mode: mode, seed: seed)
            let context = "crash at operation \(k) of \(compaction) of a compaction, \(mode)\(mode == .torn ? ", seed \(seed)" : ""), files \(image.paths)"
            let recovered = try openTestStore(image)
            try expectContents(of: recovered, equal: expected, context)
            try expectVerifies(recovered, context)
            // Leftovers of the interrupted compaction do not stop the next one.
            _ = try recovered.compact()
            try expectContents(of: recovered, equal: expected, "\(context), compacted again")
            try recovered.close()
            let again = try openTestStore(image)
            try expectContents(of: again, equal: expected, "\(context), compacted again and reopened")
            try expectVerifies(again, "\(context), compacted again and reopened")
            try again.close()
        }
        // A crash interrupts the compaction at every operation except the last two: the old
        // pager's file closes as compaction returns, whose errors do not matter (the new file is
        // in place). Reporting success after a failed step before that would be a bug.
        #expect(succeeded.allSatisfy { $0 > compaction - 2 }, "compaction reported success although it crashed at operations \(succeeded)")
        print("[CompactionTests] \(mode): crashed a compaction of \(compaction) operations at each one")
    }
}
