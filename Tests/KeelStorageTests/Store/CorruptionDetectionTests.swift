// Bit flips: random bits flipped in random pages of the page file (after a checkpoint) and in
// random log frames (before one). Never a crash, never a silently wrong value (I3):
// - a flip in page 0 fails the open (CORRUPT naming page 0, or NOT_A_STORE / UNSUPPORTED_VERSION
//   when it hits the magic, version or page size); a flip in any other page lets the store open,
//   every value reads back either unchanged or the read throws CORRUPT naming that page, and
//   verify reports a fault naming it (every page of the fixture is reachable: none is free);
// - verify reads pages from disk, so it finds a flip made under an open store whose cache still
//   holds the good copy, in the page file and in the log;
// - a flip in a log frame stops recovery at that frame: the store recovers exactly the
//   transactions before the damaged one (I2), and verifies clean.
// Seeded (printed); KEEL_SLOW_TESTS=1 runs ten times as many flips.

import Testing

@testable import KeelStorage

@Suite("Bit flips in pages and log frames are detected, never trusted")
struct CorruptionDetectionTests {
    static let logPath = testStorePath + "-wal"
    static let pageSize = 4096

    /// A checkpointed store with three trees (several levels, overflow chains) and no free page.
    static func checkpointed() throws -> (files: [String: Bytes], contents: StoreContents) { try checkpointedFixture.get() }
    private static let checkpointedFixture = Fixture<([String: Bytes], StoreContents)> {
        let memory = InMemoryFileSystem()
        let store = try openTestStore(memory)
        try store.write { txn in
            let small = try txn.createTree("small")
            for i in 0..<1_500 { try small.put(key: numberedKey(i), value: taggedValue(key: numberedKey(i), version: 1, length: 30 + i % 90)) }
            let large = try txn.createTree("large")
            for i in 0..<12 { try large.put(key: numberedKey(i), value: randomBytes(3_000 + i * 700, seed: UInt64(i))) }
            _ = try txn.createTree("empty")
        }
        let report = try store.verify()
        try #require(report.isClean && report.freePages == 0, "the fixture must be clean with no free page: \(report)")
        let expected = try contents(of: store)
        try store.close()
        return (files(of: memory), expected)
    }

    static func flip(_ bytes: inout Bytes, bit: Int) { bytes[bit / 8] ^= UInt8(1) << UInt8(bit % 8) }

    @Test("I3: a flipped bit in any page of the page file is reported naming the page; values read back are never wrong")
    func pageFileFlips() throws {
        let seed = testSeed("CorruptionDetectionTests.pageFileFlips")
        var random = SeededRandom(seed: seed)
        let (files, expected) = try Self.checkpointed()
        let pageFile = files[testStorePath]!  // safe: the fixture has a page file
        let pages = pageFile.count / Self.pageSize
        var outcomes: [String: Int] = [:]
        for trial in 0..<(slowTestsEnabled ? 2_000 : 200) {
            // Every few trials page 0, otherwise any page.
            let page = trial % 10 == 0 ? 0 : Int(random.next() % UInt64(pages))
            let bit = page * Self.pageSize * 8 + Int(random.next() % UInt64(Self.pageSize * 8))
            var damaged = pageFile
            Self.flip(&damaged, bit: bit)
            var copy = files
            copy[testStorePath] = damaged
            let context = "seed \(seed), trial \(trial): bit \(bit % (Self.pageSize * 8)) of page \(page) flipped"
            let opened = Result { () throws(StorageError) in try openTestStore(InMemoryFileSystem(files: copy)) }
            let store: Store
            switch opened {
            case .failure(let error):
                #expect(page == 0, "\(context): the open failed: \(error)")
                #expect([.corrupt, .notAStore, .unsupportedVersion].contains(error.code), "\(context): \(error)")
                if error.code == .corrupt { #expect(error.page == .meta, "\(context): the error names page 0: \(error)") }
                outcomes["open refused", default: 0] += 1
                continue
            case .success(let s):
                store = s
                #expect(page != 0, "\(context): the store opened with a damaged page 0")
            }
            defer { try? store.close() }
            // Every value reads back right, or the read throws CORRUPT naming the page.
            do {
                let actual = try contents(of: store)
                expectContents(actual, equal: expected, "\(context): a value read back wrong (I3)")
                outcomes["reads unaffected", default: 0] += 1
            } catch let error as StorageError {
                #expect(error.code == .corrupt && error.page == PageNumber(UInt32(page)), "\(context): \(error)")
                outcomes["read threw CORRUPT", default: 0] += 1
            }
            let report = try store.verify()
            #expect(report.faults.contains { $0.page == PageNumber(UInt32(page)) }, "\(context): verify missed it: \(report)")
            // The pages under a damaged one are not reached: one line says so, not one "leaked"
            // line per page.
            let unreached = report.faults.filter { $0.message.contains("leaked") }
            #expect(unreached.count <= 1 && unreached.allSatisfy { $0.page == nil }, "\(context): \(unreached.count) lines for unreached pages")
            if !unreached.isEmpty { outcomes["pages under the damage unreached", default: 0] += 1 }
        }
        print("[CorruptionDetectionTests] page-file flips: \(outcomes.sorted { $0.key < $1.key })")
    }

    @Test("I3: verify reads from disk: it finds a flip made under an open store whose cache holds the good page")
    func flipUnderAnOpenStore() throws {
        let seed = testSeed("CorruptionDetectionTests.flipUnderAnOpenStore")
        var random = SeededRandom(seed: seed)
        let (files, expected) = try Self.checkpointed()
        let pageFile = files[testStorePath]!  // safe: the fixture has a page file
        for trial in 0..<20 {
            let memory = InMemoryFileSystem(files: files)
            let store = try openTestStore(memory) { $0.cacheSizeBytes = 1 << 30 }  // everything stays cached
            defer { try? store.close() }
            try expectContents(of: store, equal: expected)
            let page = 1 + Int(random.next() % UInt64(pageFile.count / Self.pageSize - 1))
            var damaged = pageFile
            Self.flip(&damaged, bit: page * Self.pageSize * 8 + Int(random.next() % UInt64(Self.pageSize * 8)))
            memory.setContents(damaged, of: testStorePath)
            let context = "seed \(seed), trial \(trial), page \(page)"
            try expectContents(of: store, equal: expected, "\(context): cached reads still serve the good copy")
            let report = try store.verify()
            #expect(report.faults.contains { $0.page == PageNumber(UInt32(page)) }, "\(context): verify missed it: \(report)")
        }
    }

    /// A store whose five transactions are all in the log (no checkpoint), the state after each,
    /// and each transaction's log end.
    static func loggedStore() throws -> (memory: InMemoryFileSystem, store: Store, states: [StoreContents], ends: [Int]) {
        let memory = InMemoryFileSystem()
        let store = try openTestStore(memory) { $0.checkpointThresholdBytes = 1 << 30 }
        var states = [try contents(of: store)]
        var ends = [Int(try store.statistics().logFrameBytes) + LogFormat.headerSize]
        for t in 1...5 {
            try store.write { txn in
                let tree = try txn.openTree("t\(t % 2)")
                for i in 0..<(40 * t) { try tree.put(key: numberedKey(i), value: taggedValue(key: numberedKey(i), version: t, length: 60)) }
                if t == 3 { try tree.put(key: Array("big".utf8), value: randomBytes(7_000, seed: 3)) }
            }
            states.append(try contents(of: store))
            ends.append(Int(try store.statistics().logFrameBytes) + LogFormat.headerSize)
        }
        return (memory, store, states, ends)
    }

    @Test("I2 I3: a flipped bit in a log frame fails the open (CORRUPT at its frame) when later frames were durable, else recovery stops before it")
    func logFrameFlips() throws {
        let seed = testSeed("CorruptionDetectionTests.logFrameFlips")
        var random = SeededRandom(seed: seed)
        let (memory, store, states, ends) = try Self.loggedStore()
        let files = files(of: memory)
        try store.close()
        let log = files[Self.logPath]!  // safe: the store has a log
        var outcomes: [Int: Int] = [:]
        for trial in 0..<(slowTestsEnabled ? 1_000 : 100) {
            let byte = ends[0] + Int(random.next() % UInt64(ends[5] - ends[0]))
            var damaged = log
            Self.flip(&damaged, bit: byte * 8 + Int(random.next() % 8))
            let damagedTransaction = (1...5).first { byte < ends[$0] }!  // safe: byte < ends[5]
            var copy = files
            copy[Self.logPath] = damaged
            let context = "seed \(seed), trial \(trial): log byte \(byte) (transaction \(damagedTransaction)) flipped"
            // Each transaction was its own fdatasync: the frames of the ones after the damaged
            // one record it as durable (LogScanner, "Damage, not a torn tail").
            if damagedTransaction < 5 {
                let error = expectStorageError(.corrupt, comment: context) {
                    _ = try openTestStore(InMemoryFileSystem(files: copy)) { $0.checkpointThresholdBytes = 1 << 30 }
                }
                let at = error.flatMap(\.logPosition).map { Int($0.rawValue) } ?? -1
                #expect((ends[damagedTransaction - 1]..<ends[damagedTransaction]).contains(at), "\(context): named offset \(at)")
                outcomes[-damagedTransaction, default: 0] += 1
                continue
            }
            let reopened = try openTestStore(InMemoryFileSystem(files: copy)) { $0.checkpointThresholdBytes = 1 << 30 }
            let actual = try contents(of: reopened)
            let expected = states[damagedTransaction - 1]
            expectContents(actual, equal: expected, "\(context)")
            try expectVerifies(reopened, context)
            try reopened.close()
            outcomes[damagedTransaction - 1, default: 0] += 1
        }
        print("[CorruptionDetectionTests] log-frame flips: transactions recovered (−n: refused, transaction n damaged) → trials \(outcomes.sorted { $0.key < $1.key })")
    }

    @Test("I3: a flip in a log frame under an open store: verify (reading from disk) names the page")
    func logFlipUnderAnOpenStore() throws {
        let seed = testSeed("CorruptionDetectionTests.logFlipUnderAnOpenStore")
        var random = SeededRandom(seed: seed)
        let (memory, store, _, ends) = try Self.loggedStore()
        defer { try? store.close() }
        let log = try #require(memory.contents(of: Self.logPath))
        // The last transaction's frames hold the newest version of each page they carry.
        var frames: [(start: Int, end: Int, page: UInt32)] = []
        var position = ends[4]
        while position < ends[5] {
            let page = log[position..<(position + 4)].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let stored = log[(position + 8)..<(position + 12)].reversed().reduce(0) { $0 << 8 | Int($1) }
            frames.append((position, position + LogFormat.frameHeaderSize + stored, page))
            position += LogFormat.frameHeaderSize + stored
        }
        let frame = frames[Int(random.next() % UInt64(frames.count))]
        var damaged = log
        Self.flip(&damaged, bit: (frame.start + Int(random.next() % UInt64(frame.end - frame.start))) * 8 + Int(random.next() % 8))
        memory.setContents(damaged, of: Self.logPath)
        let report = try store.verify()
        #expect(report.faults.contains { $0.page == PageNumber(frame.page) },
                "seed \(seed): flip in the frame of page \(frame.page) at log \(frame.start): \(report)")
    }

    /// A flipped bit anywhere in the 64-byte log header, with committed transactions in the log:
    /// the open refuses with CORRUPT naming the log (the header is rewritten only in place, in one
    /// sector, after a checkpoint, so damage there is not a torn write) and writes nothing; it must
    /// never open as of the last checkpoint and silently drop the logged commits (the behaviour
    /// before main's 6d1b3d2). Moving the log aside, as the message advises, opens the store as of
    /// its last checkpoint.
    @Test("I1 I3 I15: a flipped bit in the log header refuses the open instead of discarding committed transactions")
    func logHeaderFlip() throws {
        let (memory, store, states, _) = try Self.loggedStore()
        let files = files(of: memory)
        try store.close()
        let log = files[Self.logPath]!  // safe: the store has a log
        for bit in 0..<(LogFormat.headerSize * 8) where slowTestsEnabled || bit % 3 == 0 {
            var damaged = log
            Self.flip(&damaged, bit: bit)
            var copy = files
            copy[Self.logPath] = damaged
            let context = "log header bit \(bit) flipped, five committed transactions in the log"
            let disk = InMemoryFileSystem(files: copy)
            let opened = Result { () throws(StorageError) in try openTestStore(disk) }
            switch opened {
            case .failure(let error):
                #expect(error.code == .corrupt && error.path == Self.logPath, "\(context): \(error)")
            case .success(let reopened):
                let actual = try contents(of: reopened)
                Issue.record("\(context): the open succeeded: \(describeDifference(actual, states[5]))")
                try? reopened.close()
            }
            #expect(disk.paths == copy.keys.sorted() && copy.allSatisfy { disk.contents(of: $0.key) == $0.value },
                    "\(context): the refused open changed the files (I15)")
        }
        // The advice in the message: without the log the store opens as of its last checkpoint.
        let withoutLog = InMemoryFileSystem(files: [testStorePath: files[testStorePath]!])  // safe: the store has a page file
        let aside = try openTestStore(withoutLog)
        try expectContents(of: aside, equal: states[0], "the log moved aside")
        try expectVerifies(aside, "the log moved aside")
        try aside.close()
    }
}
