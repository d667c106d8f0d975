// Damage in the middle of the log against a torn tail (LogScanner.swift, "Damage, not a torn
// tail"): a frame that fails its checksum with frames after it that record later transactions as
// durable fails the open with CORRUPT (nothing written); the same damage where nothing after it
// had been made durable is a torn write and recovery ends there; `salvageLog` keeps what is before
// the damage and clears what is after it. Also: a committed frame naming a page beyond its page
// count, and a page count past what the files hold, are CORRUPT (a forged frame once sized the
// page table by a page number of 2^32 − 1 and crashed the open).
//
// The fixture is TornLogTailTests': five durable transactions (each its own fdatasync), none
// checkpointed; the frames are walked by the documented layout.

import Testing

@testable import KeelStorage

@Suite("Log damage: refused when later frames were durable, a torn tail otherwise")
struct LogDamageTests {
    typealias Fixture = TornLogTailTests.Fixture
    static let logPath = testStorePath + "-wal"

    static func options(_ fs: any FileSystem, salvage: Bool = false) -> StoreOptions {
        var options = TornLogTailTests.options(fs, compress: false)
        options.salvageLog = salvage
        return options
    }

    /// The fixture's files with one payload byte of `frame` flipped.
    static func flipped(_ fixture: Fixture, frame: TornLogTailTests.Frame) -> [String: Bytes] {
        var files = fixture.files
        let at = frame.start + LogFormat.frameHeaderSize + (frame.end - frame.start - LogFormat.frameHeaderSize) / 2
        files[logPath]![at] ^= 0x01
        return files
    }

    /// The first frame of fixture transaction `i` (1...5).
    static func firstFrame(of i: Int, in fixture: Fixture) throws -> TornLogTailTests.Frame {
        try #require(fixture.frames.first { $0.start >= fixture.ends[i - 1] })
    }

    @Test("every frame records what was durable when it was written: the transaction synced before it")
    func durableLag() throws {
        let fixture = try TornLogTailTests.makeFixture(compress: false)
        for frame in fixture.frames {
            let head = fixture.log[frame.start..<(frame.start + LogFormat.frameHeaderSize)].withUnsafeBytes { LogFormat.FrameHeader.decode($0) }
            // Each transaction was its own fdatasync, so the one before it was durable.
            #expect(head.durableThrough == TransactionID(head.transaction.rawValue - 1), "frame at \(frame.start) of \(head.transaction)")
        }
    }

    @Test("a damaged frame with durable frames after it fails the open with CORRUPT at its offset, writing nothing")
    func damageBeforeDurableFrames() throws {
        let fixture = try TornLogTailTests.makeFixture(compress: false)
        for i in 1...4 {
            let frame = try Self.firstFrame(of: i, in: fixture)
            let files = Self.flipped(fixture, frame: frame)
            let fs = InMemoryFileSystem(files: files)
            do {
                let store = try Store.open(at: testStorePath, options: Self.options(fs), logger: quietLogger)
                try? store.close()
                Issue.record("transaction \(i) damaged: the open succeeded")
            } catch {
                #expect(error.code == .corrupt, "transaction \(i): \(error)")
                #expect(error.logPosition == LogPosition(UInt64(frame.start)), "transaction \(i): \(error)")
                #expect(error.path == Self.logPath)
                #expect(error.message.contains("keelctl salvage"), "\(error.message)")
            }
            let unchanged = KeelStorageTests.files(of: fs) == files  // (compared apart: a failure would print every byte)
            #expect(unchanged, "transaction \(i): a refused open wrote nothing (I15)")
        }
    }

    @Test("a damaged frame with nothing durable after it is a torn write: recovery ends before it")
    func damageInTheLastTransaction() throws {
        let fixture = try TornLogTailTests.makeFixture(compress: false)
        // The last transaction has three frames: the first damaged, the other two intact (a
        // power cut that kept later sectors of an unsynced write and lost an earlier one).
        let frame = try Self.firstFrame(of: 5, in: fixture)
        let fs = InMemoryFileSystem(files: Self.flipped(fixture, frame: frame))
        let store = try Store.open(at: testStorePath, options: Self.options(fs), logger: quietLogger)
        defer { try? store.close() }
        try expectContents(of: store, equal: fixture.states[4], "the last transaction's first frame damaged")
        #expect(store.logDamage == nil)
        try expectVerifies(store, "after a torn last transaction")
    }

    @Test("salvage keeps the transactions before the damage, and a commit after it survives a reopen")
    func salvage() throws {
        let fixture = try TornLogTailTests.makeFixture(compress: false)
        let frame = try Self.firstFrame(of: 2, in: fixture)
        let fs = InMemoryFileSystem(files: Self.flipped(fixture, frame: frame))
        let store = try Store.open(at: testStorePath, options: Self.options(fs, salvage: true), logger: quietLogger)
        try expectContents(of: store, equal: fixture.states[1], "salvaged at transaction 2")
        let damage = try #require(store.logDamage)
        #expect(damage.contains("damaged at offset \(frame.start)"), "\(damage)")
        try expectVerifies(store, "salvaged")
        let marker = Array("after".utf8)
        try store.write { txn in try txn.tree("a")!.put(key: marker, value: marker) }
        try store.close()
        // Opened as usual: the frames past the damage were cleared, so nothing is found again.
        let again = try Store.open(at: testStorePath, options: Self.options(fs), logger: quietLogger)
        defer { try? again.close() }
        var expected = fixture.states[1]
        expected["a"]![marker] = marker
        try expectContents(of: again, equal: expected, "salvaged, a commit, reopened")
        try expectVerifies(again, "salvaged, a commit, reopened")
    }

    /// The log with frame `index`'s header changed by `edit`, and every checksum from it on
    /// chained again (a forged log: each frame checks out).
    static func forged(_ fixture: Fixture, frame index: Int, _ edit: (inout LogFormat.FrameHeader) -> Void) -> Bytes {
        var log = fixture.log
        let header = log[0..<LogFormat.headerSize].withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 60, as: UInt32.self).littleEndian }
        var previous = index == 0 ? header : fixture.frames[index - 1].checksum(in: log)
        for (k, frame) in fixture.frames.enumerated() where k >= index {
            var head = log[frame.start..<(frame.start + LogFormat.frameHeaderSize)].withUnsafeBytes { LogFormat.FrameHeader.decode($0) }
            if k == index { edit(&head) }
            var fields = Bytes(repeating: 0, count: LogFormat.frameHeaderSize)
            fields.withUnsafeMutableBytes { head.encodeFields(into: $0) }
            let payload = Array(log[(frame.start + LogFormat.frameHeaderSize)..<frame.end])
            let crc = fields.withUnsafeBytes { h in
                payload.withUnsafeBytes { LogFormat.frameChecksum(previous: previous, headerFields: h, offset: LogPosition(UInt64(frame.start)), payload: $0) }
            }
            withUnsafeBytes(of: crc.littleEndian) { fields.replaceSubrange(28..<32, with: $0) }
            log.replaceSubrange(frame.start..<(frame.start + LogFormat.frameHeaderSize), with: fields)
            previous = crc
        }
        return log
    }

    @Test("a forged committed frame naming a page beyond its page count, or a page count past the files, is CORRUPT")
    func impossiblePages() throws {
        let fixture = try TornLogTailTests.makeFixture(compress: false)
        let last = fixture.frames.count - 1
        let cases: [(String, Int, (inout LogFormat.FrameHeader) -> Void, String)] = [
            ("page 2^32 − 1 in the last transaction", last - 1, { $0.page = PageNumber(UInt32.max) }, "beyond its page count"),
            ("a page count of 2^32 − 1 and a page near it", last, { $0.pageCountAfterCommit = UInt32.max; $0.page = PageNumber(UInt32.max - 1) },
             "more than the page file"),
        ]
        for (name, index, edit, expected) in cases {
            var files = fixture.files
            files[Self.logPath] = Self.forged(fixture, frame: index, edit)
            do {
                let store = try Store.open(at: testStorePath, options: Self.options(InMemoryFileSystem(files: files)), logger: quietLogger)
                try? store.close()
                Issue.record("\(name): the open succeeded")
            } catch {
                #expect(error.code == .corrupt && error.message.contains(expected), "\(name): \(error)")
            }
        }
    }
}

extension TornLogTailTests.Frame {
    /// The frame's stored checksum in `log`.
    func checksum(in log: Bytes) -> UInt32 {
        log[(start + 28)..<(start + 32)].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian }
    }
}
