// The store identity that ties a log to its page file (I17; Docs/Decisions/0013-log-store-identity.md):
// a log copied from another store file, or left beside another store's page file, is refused with
// CORRUPT naming both files — read-write, read-only and salvaging — and nothing is written; the
// matching pair opens again with every transaction, and the page file alone opens once the log is
// moved aside. A pair from before identities (0 in both) opens unchecked and gains an identity at
// its first checkpoint, also when a crash cuts that checkpoint anywhere. Compaction keeps the
// identity; a restored backup is a new store with its own, and refuses a leftover log.
//
// Identities are read by the documented layout: page 0 bytes [56, 64), log header bytes [48, 56).

import Testing

@testable import KeelStorage

@Suite("Store identity: a log is replayed only onto its own page file (I17)")
struct LogPairingTests {
    static let logPath = testStorePath + "-wal"
    static let otherPath = "/db/other.keel"

    static func u64(_ bytes: Bytes, at offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }

    /// The store identity page 0 of `pageFile` names.
    static func pageFileIdentity(_ pageFile: Bytes?) -> UInt64? { pageFile.map { u64($0, at: 56) } }
    /// The store identity the header of `log` names.
    static func logIdentity(_ log: Bytes?) -> UInt64? { log.map { u64($0, at: 48) } }

    /// The identities of the store at `path` on `fs`: its page file's and its log's.
    static func identities(_ fs: InMemoryFileSystem, _ path: String = testStorePath) -> (page: UInt64?, log: UInt64?) {
        (pageFileIdentity(fs.contents(of: path)), logIdentity(fs.contents(of: path + "-wal")))
    }

    /// The files of a cleanly closed store as a build from before store identities left them:
    /// 0 in page 0 (its checksum recomputed) and in the log header (its CRC recomputed). The close
    /// reset the log, so no frame chains from the header's checksum: none is lost by the new CRC.
    static func oldFormat(_ files: [String: Bytes], path: String = testStorePath) throws -> [String: Bytes] {
        var out = files
        out[path] = OpenValidationTests.resealedPage0(try #require(files[path])) { $0.replaceSubrange(56..<64, with: Bytes(repeating: 0, count: 8)) }
        var log = try #require(files[path + "-wal"])
        log.replaceSubrange(48..<56, with: Bytes(repeating: 0, count: 8))
        let crc = log[0..<60].withUnsafeBytes { CRC32C.checksum($0) }
        log.replaceSubrange(60..<64, with: withUnsafeBytes(of: crc.littleEndian) { Array($0) })
        out[path + "-wal"] = log
        return out
    }

    /// Options that leave commits in the log (no automatic checkpoint).
    static func options(_ fs: any FileSystem) -> StoreOptions {
        var options = testOptions(fs)
        options.checkpointThresholdBytes = 1 << 30
        return options
    }

    /// Two stores of one folder, `testStorePath` (tree "a") and `otherPath` (tree "b"), 20 keys
    /// each; `closed`: cleanly closed (logs of just a header), else dropped with every commit
    /// still in the log.
    static func twoStores(closed: Bool) throws -> [String: Bytes] {
        let fs = InMemoryFileSystem()
        for (path, tree) in [(testStorePath, "a"), (otherPath, "b")] {
            let store = try Store.open(at: path, options: options(fs), logger: quietLogger)
            for i in 0..<20 {
                try store.write { txn in try txn.openTree(tree).put(key: numberedKey(i), value: taggedValue(key: numberedKey(i), version: 1)) }
            }
            if closed { try store.close() }
        }
        return files(of: fs)
    }

    @Test("a log copied from another store file of the folder is refused with CORRUPT naming both files, writing nothing; so is a page file copied under another's log")
    func foreignLogRefused() throws {
        for closed in [false, true] {
            let files = try Self.twoStores(closed: closed)
            let own = try #require(files[Self.logPath])
            let other = try #require(files[Self.otherPath + "-wal"])
            if !closed { try #require(own.count > 4096 && other.count > 4096, "the logs hold the commits") }
            let a = Self.pageFileIdentity(files[testStorePath]), b = Self.pageFileIdentity(files[Self.otherPath])
            #expect(a != 0 && b != 0 && a != b, "each store has its own identity")
            #expect(Self.logIdentity(own) == a && Self.logIdentity(other) == b, "each log names its page file's")
            let what = closed ? "closed (header-only logs)" : "commits in the logs"

            // The other store's log beside this page file.
            let copiedLog = [testStorePath: files[testStorePath]!, Self.logPath: other]
            let error = OpenValidationTests.expectRefused(copiedLog, .corrupt, context: "another store's log, \(what)")
            #expect(error?.path == Self.logPath, "\(String(describing: error))")
            #expect(error?.message.contains("belongs to another store file") == true, "\(String(describing: error))")
            #expect(error?.message.contains(Self.logPath) == true && error?.message.contains(testStorePath) == true,
                    "the message names both files: \(String(describing: error))")
            // The other store's page file under this log.
            let copiedPageFile = [testStorePath: files[Self.otherPath]!, Self.logPath: own]
            OpenValidationTests.expectRefused(copiedPageFile, .corrupt, context: "another store's page file, \(what)")

            // Salvaging does not take it either.
            var salvage = testOptions(InMemoryFileSystem(files: copiedLog))
            salvage.salvageLog = true
            expectStorageError(.corrupt, comment: "salvaging another store's log, \(what)") {
                _ = try Store.open(at: testStorePath, options: salvage, logger: quietLogger)
            }

            // The way out: the matching pair opens with every transaction; the page file alone
            // (the log moved aside) opens as of its last checkpoint, with nothing of the other store.
            let pair = try Store.open(at: testStorePath, options: Self.options(InMemoryFileSystem(files: files)), logger: quietLogger)
            #expect(try contents(of: pair) == ["a": Dictionary(uniqueKeysWithValues: (0..<20).map { (numberedKey($0), taggedValue(key: numberedKey($0), version: 1)) })])
            try pair.close()
            let alone = try Store.open(at: testStorePath, options: Self.options(InMemoryFileSystem(files: [testStorePath: files[testStorePath]!])), logger: quietLogger)
            #expect(try contents(of: alone)["b"] == nil)
            try expectVerifies(alone, "the page file alone, \(what)")
            try alone.close()
        }
    }

    @Test("a bit flipped in page 0's store identity is damage to page 0, not another store's log: CORRUPT naming page 0, nothing replayed or written")
    func flippedIdentityIsPageZeroDamage() throws {
        for closed in [false, true] {
            let files = try Self.twoStores(closed: closed)
            var page0 = try #require(files[testStorePath])
            page0[57] ^= 0x10
            let damaged = [testStorePath: page0, Self.logPath: files[Self.logPath]!]
            let error = OpenValidationTests.expectRefused(damaged, .corrupt, context: "identity bit flipped, closed: \(closed)")
            #expect(error?.path == testStorePath, "\(String(describing: error))")
            #expect(error?.page == .meta, "\(String(describing: error))")
            #expect(error?.message.contains("page 0") == true && error?.message.contains("fails its checksum") == true, "\(String(describing: error))")
            #expect(error?.message.contains("belongs to another store file") == false, "\(String(describing: error))")
            // Resealed (its checksum made to match), the changed identity names another store:
            // that is the foreign-log refusal.
            let resealed = [testStorePath: OpenValidationTests.resealedPage0(page0) { _ in }, Self.logPath: files[Self.logPath]!]
            let foreign = OpenValidationTests.expectRefused(resealed, .corrupt, context: "identity changed and resealed, closed: \(closed)")
            #expect(foreign?.message.contains("belongs to another store file") == true, "\(String(describing: foreign))")
        }
    }

    @Test("a pair from before store identities opens unchecked, and its first checkpoint gives page file and log one identity; then another's log is refused")
    func oldPairGainsIdentity() throws {
        let made = InMemoryFileSystem()
        let store = try openTestStore(made)
        try store.write { txn in
            let tree = try txn.createTree("t")
            for i in 0..<200 { try tree.put(key: numberedKey(i), value: taggedValue(key: numberedKey(i), version: 1, length: 100)) }
        }
        try store.close()
        let old = try Self.oldFormat(files(of: made))
        let fs = InMemoryFileSystem(files: old)
        #expect(Self.identities(fs) == (0, 0))

        let reopened = try Store.open(at: testStorePath, options: Self.options(fs), logger: quietLogger)
        try reopened.write { txn in try txn.tree("t")!.put(key: numberedKey(1), value: taggedValue(key: numberedKey(1), version: 2)) }
        #expect(Self.identities(fs) == (0, 0), "nothing is assigned before a checkpoint")
        let report = try reopened.checkpoint()
        #expect(report.logReset)
        let (page, log) = Self.identities(fs)
        #expect(page != 0 && page == log, "after the checkpoint: page file \(String(describing: page)), log \(String(describing: log))")
        try expectVerifies(reopened, "after the checkpoint")
        try reopened.close()
        #expect(Self.identities(fs) == (page, log), "the identity stays")

        let again = try Store.open(at: testStorePath, options: Self.options(fs), logger: quietLogger)
        let t = try #require(try contents(of: again)["t"])
        #expect(t.count == 200 && t[numberedKey(1)] == taggedValue(key: numberedKey(1), version: 2) && t[numberedKey(2)] == taggedValue(key: numberedKey(2), version: 1, length: 100))
        try again.close()

        // Protected now: another store's log beside it is refused.
        let other = InMemoryFileSystem()
        try openTestStore(other).close()
        var mixed = files(of: fs)
        mixed[Self.logPath] = other.contents(of: Self.logPath)
        OpenValidationTests.expectRefused(mixed, .corrupt, context: "another store's log beside the upgraded page file")
    }

    @Test("compaction keeps the store identity (and gives one to a store from before identities); the pair opens after it")
    func compactionKeepsIdentity() throws {
        for old in [false, true] {
            let made = InMemoryFileSystem()
            let store = try openTestStore(made)
            let expected = try CompactionTests.fillAndThin(store, keys: 3_000)
            try store.close()
            let fs = InMemoryFileSystem(files: old ? try Self.oldFormat(files(of: made)) : files(of: made))
            let before = Self.identities(fs)
            #expect(before.page == before.log && (before.page == 0) == old)

            let reopened = try openTestStore(fs)
            _ = try reopened.compact()
            let after = Self.identities(fs)
            #expect(after.page != 0 && after.page == after.log, "old \(old): \(after)")
            if !old { #expect(after.page == before.page, "compaction keeps the identity") }
            try reopened.write { txn in try txn.tree("one")!.put(key: Array("after".utf8), value: [1]) }
            try reopened.close(checkpoint: false)  // the commit stays in the log, replayed at the next open

            let again = try openTestStore(fs)
            var want = expected
            want["one"]![Array("after".utf8)] = [1]
            try expectContents(of: again, equal: want, "old \(old): after compaction and reopen")
            try expectVerifies(again, "old \(old): after compaction")
            try again.close()
        }
    }

    @Test("a restored backup is a new store with its own identity, which its log takes; the source's log beside it is refused; a leftover log refuses the restore")
    func restoreIdentity() throws {
        let fs = InMemoryFileSystem()
        let source = try openTestStore(fs)
        try source.write { txn in try txn.openTree("t").put(key: [1], value: [1]) }
        _ = try BackupArchiveTests.backup(source, to: "/db/b.keelbackup", fs)
        try source.close()
        let sourceIdentity = try #require(Self.identities(fs).page)

        try fs.createDirectory("/restored")
        _ = try Store.restore(backup: "/db/b.keelbackup", into: "/restored", options: testOptions(fs))
        let restoredPath = "/restored/Main.keel"
        let restored = try #require(Self.pageFileIdentity(fs.contents(of: restoredPath)))
        #expect(restored != 0 && restored != sourceIdentity, "the restored store has its own identity")
        #expect(!fs.fileExists(restoredPath + "-wal"), "restored without a log")
        let copy = try openTestStore(fs, at: restoredPath)
        #expect(try contents(of: copy) == ["t": [[1]: [1]]])
        try copy.close()
        #expect(Self.identities(fs, restoredPath) == (restored, restored), "its first open made a log naming it")

        // The source's log copied beside the restored page file is another store's.
        let restoredFiles = [testStorePath: fs.contents(of: restoredPath)!, Self.logPath: fs.contents(of: Self.logPath)!]
        OpenValidationTests.expectRefused(restoredFiles, .corrupt, context: "the source's log beside the restored page file")

        // A log left in the folder by a store that was there refuses the restore; it stays as it was.
        try fs.remove(restoredPath)
        let leftover = fs.contents(of: restoredPath + "-wal")
        let error = expectStorageError(.invalidArgument) {
            _ = try Store.restore(backup: "/db/b.keelbackup", into: "/restored", options: testOptions(fs))
        }
        #expect(error?.message.contains("Main.keel-wal exists") == true, "\(String(describing: error))")
        #expect(!fs.fileExists(restoredPath) && !fs.fileExists(restoredPath + ".restoring"))
        #expect(fs.contents(of: restoredPath + "-wal") == leftover)
    }

    @Test("I17: a store from before identities, crashed at every operation of the open, commits and checkpoints that give it one: it reopens with every acknowledged commit, and its next checkpoint pairs the files",
          arguments: CrashMode.allCases)
    func upgradeCrashes(mode: CrashMode) throws {
        let made = InMemoryFileSystem()
        let store = try openTestStore(made)
        try store.write { txn in
            let tree = try txn.createTree("t")
            for i in 0..<50 { try tree.put(key: numberedKey(i), value: taggedValue(key: numberedKey(i), version: 0)) }
        }
        try store.close()
        let old = try Self.oldFormat(files(of: made))

        /// Opens the old store, commits three transactions around a checkpoint, closes; returns
        /// how many commits were acknowledged.
        func workload(_ fs: any FileSystem) -> Int {
            var acknowledged = 0
            do {
                let store = try Store.open(at: testStorePath, options: Self.options(fs), logger: quietLogger)
                for i in 1...3 {
                    try store.write { txn in try txn.tree("t")!.put(key: numberedKey(i), value: taggedValue(key: numberedKey(i), version: i)) }
                    acknowledged = i
                    if i == 2 { try store.checkpoint() }
                }
                try store.close()
            } catch {}
            return acknowledged
        }
        let clean = CrashSimulatingFileSystem(files: old)
        #expect(workload(clean) == 3)
        let n = clean.operationCount
        #expect(n >= 20, "the workload makes \(n) file operations")
        print("[LogPairingTests] \(mode): \(n + 1) crash points")
        for k in 1...(n + 1) {
            let fs = CrashSimulatingFileSystem(files: old)
            fs.crash(after: k)
            let acknowledged = workload(fs)
            let image = fs.crashedImage(mode: mode, seed: CrashWorkload.tornSeed(k))
            let context = "crash at operation \(k) of \(n), \(mode), acknowledged \(acknowledged)"
            let store: Store
            do {
                store = try Store.open(at: testStorePath, options: Self.options(image), logger: quietLogger)
            } catch {
                Issue.record("\(context): reopening failed: \(error)")
                continue
            }
            let t = try #require(try contents(of: store)["t"], "\(context)")
            let applied = (1...3).filter { t[numberedKey($0)] == taggedValue(key: numberedKey($0), version: $0) }
            #expect(applied == Array((1...3).prefix(applied.count)) && applied.count >= acknowledged && applied.count <= acknowledged + 1,
                    "\(context): commits recovered \(applied)")
            #expect(t.count == 50, "\(context)")
            try expectVerifies(store, context)
            try store.checkpoint()
            let (page, log) = Self.identities(image)
            #expect(page != 0 && page == log, "\(context): after a checkpoint, page file \(String(describing: page)), log \(String(describing: log))")
            try store.close()
            let again = try Store.open(at: testStorePath, options: Self.options(image), logger: quietLogger)
            try again.close()
        }
    }
}
