// Torn log tail: the log of an open store (synced, not checkpointed) is cut, or overwritten with
// zeros, 0xFF or random bytes, from every byte of its last two transactions to its end. Recovery
// must stop exactly at the last transaction whose frames are all intact (I2, I3): every earlier
// transaction present, the damaged ones absent, verify clean — and a commit made after such a
// recovery must survive a further reopen (stale bytes after the new end are never replayed).
//
// The last two transactions are one single-frame transaction and one three-frame transaction,
// so cuts fall inside a frame, between frames of one transaction and between transactions.
// Default run: with LZ4-compressed frames, truncation at every byte of the last two transactions;
// for the other damages, and for uncompressed (page-sized) frames, every byte of each frame
// header, the first and last 64 bytes of each payload, and every 13th (compressed) or 61st
// (uncompressed) byte between. KEEL_SLOW_TESTS=1 tries every damage at every byte.

import Testing

@testable import KeelStorage

@Suite("Torn log tail: recovery stops exactly at the last complete commit")
struct TornLogTailTests {
    /// How the tail is damaged from an offset on.
    enum Damage: String, CaseIterable {
        case truncate, zeros, ones, random
    }

    /// A frame found by walking the log with the layout of Docs/FileFormat.md.
    struct Frame {
        var start: Int
        var end: Int
        var transaction: UInt64
        var isCommit: Bool
    }

    /// A store's files after five committed transactions, with each transaction's log end.
    struct Fixture {
        var files: [String: Bytes]
        /// states[i]: contents after transactions 1...i (states[0]: the new store, no trees).
        var states: [StoreContents]
        /// ends[i]: the log offset just past transaction i's commit frame (ends[0]: 64, the header).
        var ends: [Int]
        var frames: [Frame]
        var log: Bytes { files[testStorePath + "-wal"]! }  // safe: the fixture always has a log
    }

    static func options(_ fs: any FileSystem, compress: Bool) -> StoreOptions {
        var options = testOptions(fs, syncMode: .full)
        options.checkpointThresholdBytes = 1 << 30  // nothing is checkpointed: every commit stays in the log
        options.compressLog = compress
        return options
    }

    static func makeFixture(compress: Bool) throws -> Fixture {
        let fs = InMemoryFileSystem()
        let store = try Store.open(at: testStorePath, options: options(fs, compress: compress), logger: quietLogger)
        defer { try? store.close() }
        var states = [try contents(of: store)]
        var ends = [Int(try store.statistics().logFrameBytes) + LogFormat.headerSize]
        func commit(_ body: (WriteTransaction) throws -> Void) throws {
            try store.write(body)
            states.append(try contents(of: store))
            ends.append(Int(try store.statistics().logFrameBytes) + LogFormat.headerSize)
        }
        try commit { txn in
            for name in ["a", "b", "c"] {
                let tree = try txn.createTree(name)
                for i in 0..<20 { try tree.put(key: numberedKey(i), value: taggedValue(key: numberedKey(i), version: 1)) }
            }
        }
        try commit { txn in try txn.tree("a")!.put(key: numberedKey(100), value: randomBytes(5_000, seed: 2)) }
        try commit { txn in try txn.tree("b")!.delete(key: numberedKey(3)) }
        // The last two: one frame (one leaf), then three frames (a leaf in each tree).
        try commit { txn in try txn.tree("a")!.put(key: numberedKey(5), value: taggedValue(key: numberedKey(5), version: 4)) }
        try commit { txn in
            for name in ["a", "b", "c"] {
                try txn.tree(name)!.put(key: numberedKey(6), value: taggedValue(key: numberedKey(6), version: 5))
            }
        }
        var fixture = Fixture(files: files(of: fs), states: states, ends: ends, frames: [])

        // Walk the frames by the documented layout and check it against the recorded ends.
        let log = fixture.log
        var position = LogFormat.headerSize
        while position < ends[5] {
            let field = { (offset: Int, size: Int) -> UInt64 in
                (0..<size).reduce(UInt64(0)) { $0 | UInt64(log[position + offset + $1]) << (8 * UInt64($1)) }
            }
            let stored = Int(field(8, 4))
            let frame = Frame(
                start: position, end: position + LogFormat.frameHeaderSize + stored, transaction: field(16, 8),
                isCommit: field(4, 2) & 2 != 0)
            fixture.frames.append(frame)
            position = frame.end
        }
        try #require(position == ends[5], "frames walked by the documented layout end at \(position), the store says \(ends[5])")
        for i in 1...5 {
            let last = try #require(fixture.frames.last { $0.end <= ends[i] })
            #expect(last.end == ends[i] && last.isCommit, "transaction \(i) does not end in a commit frame at \(ends[i])")
        }
        #expect(fixture.frames.filter { $0.start >= ends[3] }.count == 4, "the last two transactions should have 1 + 3 frames")
        return fixture
    }

    /// The offsets to damage from: every byte of the last two transactions, or a sample: every
    /// frame-header byte, 64 bytes at both ends of each payload, and every `stride`-th byte between.
    static func offsets(_ fixture: Fixture, exhaustive: Bool, stride step: Int) -> [Int] {
        let range = fixture.ends[3]..<fixture.ends[5]
        if exhaustive { return Array(range) }
        var chosen = Set<Int>()
        for frame in fixture.frames where range.contains(frame.start) {
            let payload = frame.start + LogFormat.frameHeaderSize
            chosen.formUnion(frame.start..<min(frame.end, payload + 64))
            chosen.formUnion(max(payload, frame.end - 64)..<frame.end)
            chosen.formUnion(stride(from: payload, to: frame.end, by: step))
        }
        return chosen.sorted()
    }

    static func damaged(_ log: Bytes, from offset: Int, _ damage: Damage, seed: UInt64) -> Bytes {
        var out = Array(log[..<offset])
        let rest = log.count - offset
        switch damage {
        case .truncate: break
        case .zeros: out += Bytes(repeating: 0, count: rest)
        case .ones: out += Bytes(repeating: 0xFF, count: rest)
        case .random: out += randomBytes(rest, seed: seed)
        }
        return out
    }

    @Test("I2 I3: a log cut or overwritten at any byte of its last two transactions recovers exactly the complete ones",
          arguments: [true, false])
    func everyByteOfTheTail(compressed: Bool) throws {
        let fixture = try Self.makeFixture(compress: compressed)
        let sample = Set(Self.offsets(fixture, exhaustive: slowTestsEnabled, stride: compressed ? 13 : 61))
        let offsets = Self.offsets(fixture, exhaustive: compressed || slowTestsEnabled, stride: 61)
        let logPath = testStorePath + "-wal"
        var outcomes: [Int: Int] = [:]
        for offset in offsets {
            for damage in Damage.allCases where damage == .truncate || sample.contains(offset) {
                let seed = UInt64(offset) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(compressed ? 1 : 2)
                let log = Self.damaged(fixture.log, from: offset, damage, seed: seed)
                // Complete transactions: those whose bytes all precede the first changed byte.
                let firstChanged = (offset..<fixture.log.count).first { $0 >= log.count || log[$0] != fixture.log[$0] } ?? fixture.log.count
                let complete = (0...5).last { fixture.ends[$0] <= firstChanged }!  // safe: ends[0] is the header's end
                outcomes[complete, default: 0] += 1
                var files = fixture.files
                files[logPath] = log
                let fs = InMemoryFileSystem(files: files)
                let context = "compressed \(compressed), \(damage) from log offset \(offset) (seed \(seed)); expected \(complete) transactions"
                let store = try Store.open(at: testStorePath, options: Self.options(fs, compress: compressed), logger: quietLogger)
                let actual = try contents(of: store)
                expectContents(actual, equal: fixture.states[complete], "\(context)")
                try expectVerifies(store, context)
                // Now and then: a commit after recovery overwrites the damaged tail and survives a reopen.
                if offset % 37 == 0 {
                    let marker = Array("new".utf8)
                    try store.write { txn in try txn.tree("a")!.put(key: marker, value: marker) }
                    try store.close()
                    let again = try Store.open(at: testStorePath, options: Self.options(fs, compress: compressed), logger: quietLogger)
                    var expected = fixture.states[complete]
                    expected["a"]![marker] = marker
                    let after = try contents(of: again)
                    expectContents(after, equal: expected, "\(context), then a new commit and reopen")
                    try expectVerifies(again, "\(context), then a new commit and reopen")
                    try again.close()
                }  // otherwise the store is dropped without close: close's checkpoint would only cost time
            }
        }
        // The sweep produced both outcomes: the last transaction lost, and both lost.
        #expect(outcomes[3] != nil && outcomes[4] != nil, "outcomes \(outcomes)")
        print("[TornLogTailTests] compressed \(compressed): \(offsets.count) offsets, \(sample.count) with every damage; complete transactions → cases \(outcomes.sorted { $0.key < $1.key })")
    }

    @Test("I2: the intact log recovers all five transactions, and a cut exactly at a commit boundary keeps that commit")
    func boundaries() throws {
        let fixture = try Self.makeFixture(compress: true)
        let logPath = testStorePath + "-wal"
        for i in 0...5 {
            var files = fixture.files
            files[logPath] = Array(fixture.log[..<fixture.ends[i]])
            let store = try Store.open(at: testStorePath, options: Self.options(InMemoryFileSystem(files: files), compress: true), logger: quietLogger)
            defer { try? store.close() }
            try expectContents(of: store, equal: fixture.states[i], "log cut at the end of transaction \(i)")
            #expect(try store.statistics().lastTransaction == UInt64(i + 1), "the last recovered transaction ID (txn 1 created the catalog)")
            try expectVerifies(store, "log cut at the end of transaction \(i)")
        }
    }
}
