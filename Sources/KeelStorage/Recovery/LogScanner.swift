// Recovery: reading the log at open to find every committed transaction.
//
// Rules (Docs/Invariants.md I2, I3, and Docs/FileFormat.md "Recovery rules"):
// - A log that is shorter than its header or whose header bytes are all zero is empty: the page
//   file alone is the store (a new log's header is written and synced before the store exists).
// - A header that is there but fails its magic or checksum is damage, not a torn write: headers
//   are rewritten only in place, inside one 512-byte sector, and only after the page file was
//   fsynced (I8). The frames after it may hold acknowledged commits, so the open fails with
//   CORRUPT instead of discarding them (SQLite would silently ignore such a log).
// - A header of an unknown format version fails the open (`.unsupportedVersion`).
// - A header naming another store identity than the page file's (both known, ≠ 0) belongs to
//   another store file: the open fails with CORRUPT naming both files before any frame is read,
//   so a log copied or left beside the wrong page file is never replayed onto it (I17). When
//   that page 0 fails its checksum the identity read from it may be the damage: the open fails
//   with CORRUPT naming page 0 instead, still replaying nothing.
// - Frames are read in order from offset 64. The scan stops at the first frame that is short,
//   has a foreign salt, an impossible length, a transaction ID other than the expected one, or a
//   chained checksum that does not match. Frames after the last valid commit frame are ignored:
//   a partial transaction is never applied.
// - Damage, not a torn tail: when the scan stops before the end of the file, the rest is searched
//   for frames of this generation whose chain holds (a frame whose checksum, chained from the
//   stored checksum of the frame before it, matches). If one records (its durable lag,
//   LogFormat.swift) that a transaction after the last one recovered had been fdatasynced before
//   it was written, the bytes the scan stopped at had been durable and were damaged since: the
//   open fails with CORRUPT naming the log offset, rather than drop commits that were
//   acknowledged (SQLite and PostgreSQL end their logs at the first bad frame, whatever follows).
//   Otherwise the stop is in bytes no fdatasync had covered when anything after them was
//   written — a torn write of commits never acknowledged (a power cut may keep a later sector
//   and lose an earlier one) — and recovery ends there. `salvage` (StoreOptions.salvageLog, for
//   `keelctl salvage`) ends there in both cases and reports the damage.
// - A committed frame naming a page at or beyond its transaction's page count is damage (its
//   chain holds, so it is not torn): CORRUPT.
// - An I/O error while reading fails the open: skipping data we could not read would silently
//   lose acknowledged commits.

import Glibc

/// A committed frame found by the scan.
struct RecoveredFrame {
    var page: PageNumber
    var sequence: FrameSequence
    var reference: LogFrameReference
}

/// What the scan found.
struct LogScanResult {
    var header: LogFormat.Header?
    var frames: [RecoveredFrame]
    /// Where the next frame goes, and the chain value it continues from.
    var end: LogPosition
    var lastChecksum: UInt32
    var nextSequence: FrameSequence
    var lastTransaction: TransactionID
    /// The page count of the last committed transaction, if any committed.
    var pageCountAfterLastCommit: UInt32?
    /// Why the scan stopped where it did (for logs and tests).
    var stopReason: String
    /// With `salvage`: the damage recovery stopped at (durable transactions were dropped); nil
    /// when the scan ended at the log's end or at a torn tail.
    var damage: LogDamage?
}

/// Damage in the middle of a log: where the scan stopped, and the frame past it that proves the
/// bytes there had been durable.
struct LogDamage: Equatable {
    /// Where the scan stopped, and why.
    var position: LogPosition
    var reason: String
    /// The last transaction recovered before the damage.
    var lastRecovered: TransactionID
    /// A frame past the damage whose chain holds, and the transaction it records as durable.
    var witness: LogPosition
    var durableThrough: TransactionID

    var message: String {
        "the log is damaged at offset \(position.rawValue) (\(reason)): the frame at offset \(witness.rawValue) was written after an fdatasync had made transactions through \(durableThrough.rawValue) durable, but only those through \(lastRecovered.rawValue) can be read"
    }
}

enum LogScanner {
    /// The refusal of a log whose header names another store identity than its page file's.
    static func foreignLog(_ logPath: String, identity: UInt64, pageFile: (path: String, identity: UInt64)) -> StorageError {
        StorageError(
            .corrupt,
            "the log \(logPath) belongs to another store file: its header names store \(hexIdentity(identity)), but the page file \(pageFile.path) is store \(hexIdentity(pageFile.identity)). Its transactions are not replayed onto this page file. Put back the page file this log belongs to (restore the matching pair of files), or move the log aside to open the page file alone, as of its last checkpoint",
            logPosition: LogPosition(0), path: logPath)
    }

    /// The refusal of a log whose header names another store identity than the one read from a
    /// page 0 that fails its checksum: the identity read may be the damage, so whether the log
    /// belongs to the page file cannot be told.
    static func unpairableLog(_ logPath: String, identity: UInt64, pageFile: (path: String, identity: UInt64)) -> StorageError {
        StorageError(
            .corrupt,
            "page 0 of \(pageFile.path) fails its checksum, and the store identity read from it (\(hexIdentity(pageFile.identity))) is not the one the log \(logPath) names (\(hexIdentity(identity))): whether the log belongs to this page file cannot be told, so its transactions are not replayed. Restore the store from a backup",
            page: .meta, path: pageFile.path)
    }

    /// A store identity as 16 hex digits.
    static func hexIdentity(_ identity: UInt64) -> String {
        let digits = String(identity, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Scans the log of the page file `pageFile` (its path and the store identity its page 0
    /// names, 0 when not known); `pageZeroIsSound` tells, when the log's header names another
    /// identity, whether that page 0 passes its checksum (a refusal then blames the log, else the
    /// damaged page 0); `salvage`: damage ends recovery (reported in the result) instead of
    /// failing it.
    static func scan(
        _ file: any StorageFile, pageSize: Int, pageFile: (path: String, identity: UInt64),
        pageZeroIsSound: () -> Bool = { true }, salvage: Bool = false
    ) throws(StorageError) -> LogScanResult {
        let size = try file.size()
        var headerBytes = [UInt8](repeating: 0, count: LogFormat.headerSize)
        let got = try headerBytes.withMutableBytes { (b) throws(StorageError) in try file.read(into: b, at: 0) }
        let empty = got < LogFormat.headerSize || headerBytes.allSatisfy { $0 == 0 }
        let decoded: LogFormat.Header.DecodeResult =
            empty ? .invalid("no log header") : headerBytes.withUnsafeBytes { LogFormat.Header.decode($0) }
        let header: LogFormat.Header
        switch decoded {
        case .invalid(let why) where !empty:
            throw StorageError(
                .corrupt,
                "the log header is damaged (\(why)); the log may hold committed transactions, so the store is not opened. Restore from a backup, or move the log aside to open the store as of its last checkpoint",
                logPosition: LogPosition(0), path: file.path)
        case .invalid(let why):
            return LogScanResult(
                header: nil, frames: [], end: LogPosition(UInt64(LogFormat.headerSize)), lastChecksum: 0,
                nextSequence: FrameSequence(1), lastTransaction: TransactionID(0), pageCountAfterLastCommit: nil,
                stopReason: why)
        case .unsupportedVersion(let v):
            throw StorageError(
                .unsupportedVersion, "the log was written by format version \(v); this build reads version \(LogFormat.version)",
                path: file.path)
        case .valid(let h):
            header = h
        }
        if header.storeIdentity != 0, pageFile.identity != 0, header.storeIdentity != pageFile.identity {
            guard pageZeroIsSound() else { throw unpairableLog(file.path, identity: header.storeIdentity, pageFile: pageFile) }
            throw foreignLog(file.path, identity: header.storeIdentity, pageFile: pageFile)
        }
        guard Int(header.pageSize) == pageSize else {
            throw StorageError(
                .corrupt, "the log's page size \(header.pageSize) is not the store's \(pageSize): it belongs to another store",
                logPosition: LogPosition(0), path: file.path)
        }

        var reader = SequentialReader(file: file, size: size)
        var committed: [RecoveredFrame] = []
        var pending: [RecoveredFrame] = []
        var position = UInt64(LogFormat.headerSize)
        var chain = header.checksum
        var sequence = header.baseSequence
        var expectedTransaction = header.baseTransaction.next
        // State as of the last commit frame.
        var commitEnd = position
        var commitChain = chain
        var commitSequence = sequence
        var lastTransaction = header.baseTransaction
        var pageCount: UInt32?
        var stopReason = "end of log"

        scanning: while true {
            guard position + UInt64(LogFormat.frameHeaderSize) <= size else {
                stopReason = "end of log"
                break
            }
            let frameHead: LogFormat.FrameHeader
            let headBytes = try reader.bytes(at: position, count: LogFormat.frameHeaderSize)
            frameHead = headBytes.withUnsafeBytes { LogFormat.FrameHeader.decode($0) }
            guard frameHead.salt == header.salt else {
                stopReason = "salt mismatch at \(position)"
                break
            }
            guard frameHead.hasPossibleLength(pageSize: pageSize) else {
                stopReason = "impossible frame length or flags at \(position)"
                break
            }
            guard frameHead.transaction == expectedTransaction else {
                stopReason = "unexpected \(frameHead.transaction) at \(position)"
                break
            }
            let payloadEnd = position + UInt64(LogFormat.frameHeaderSize) + UInt64(frameHead.storedLength)
            guard payloadEnd <= size else {
                stopReason = "frame runs past the end of the log at \(position)"
                break
            }
            let payload = try reader.bytes(
                at: position + UInt64(LogFormat.frameHeaderSize), count: Int(frameHead.storedLength))
            let crc = headBytes.withUnsafeBytes { h in
                payload.withUnsafeBytes { p in
                    LogFormat.frameChecksum(previous: chain, headerFields: h, offset: LogPosition(position), payload: p)
                }
            }
            guard crc == frameHead.checksum else {
                stopReason = "checksum mismatch at \(position)"
                break scanning
            }
            pending.append(
                RecoveredFrame(
                    page: frameHead.page, sequence: sequence,
                    reference: LogFrameReference(
                        offset: LogPosition(position), storedLength: frameHead.storedLength,
                        compressed: frameHead.flags.contains(.compressed), previousChecksum: chain, checksum: crc)))
            chain = crc
            position = payloadEnd
            sequence = FrameSequence(sequence.rawValue + 1)
            if frameHead.flags.contains(.commit) {
                // Pages only grow in number (a store never shrinks in place): every page of the
                // transaction is below its page count.
                if let beyond = pending.first(where: { $0.page.rawValue >= frameHead.pageCountAfterCommit }) {
                    throw StorageError(
                        .corrupt,
                        "the log's transaction \(frameHead.transaction.rawValue) writes page \(beyond.page.rawValue) beyond its page count \(frameHead.pageCountAfterCommit)",
                        page: beyond.page, logPosition: beyond.reference.offset, path: file.path)
                }
                committed.append(contentsOf: pending)
                pending.removeAll(keepingCapacity: true)
                commitEnd = position
                commitChain = chain
                commitSequence = sequence
                lastTransaction = frameHead.transaction
                pageCount = frameHead.pageCountAfterCommit
                expectedTransaction = frameHead.transaction.next
            }
        }
        var damage: LogDamage?
        if position < size,
            let (witness, durable) = try durableFrame(
                in: file, size: size, from: position, chain: chain, after: lastTransaction, salt: header.salt, pageSize: pageSize)
        {
            let found = LogDamage(
                position: LogPosition(position), reason: stopReason, lastRecovered: lastTransaction, witness: LogPosition(witness),
                durableThrough: durable)
            guard salvage else {
                throw StorageError(
                    .corrupt,
                    "\(found.message); committed transactions would be lost, so the store is not opened. Restore from a backup, or run `keelctl salvage` to keep the transactions before the damage",
                    logPosition: LogPosition(position), path: file.path)
            }
            damage = found
        }
        return LogScanResult(
            header: header, frames: committed, end: LogPosition(commitEnd), lastChecksum: commitChain,
            nextSequence: commitSequence, lastTransaction: lastTransaction, pageCountAfterLastCommit: pageCount,
            stopReason: stopReason, damage: damage)
    }

    /// Past `start`, where a scan stopped with `last` the last transaction recovered and `chain`
    /// the checksum of the last frame it trusted: the first frame of this generation (salt
    /// `salt`) whose chain holds and which records that a transaction after `last` was durable
    /// before it was written — its offset and that transaction — or nil when there is none.
    /// Candidates are found by their salt (at offset 24 of a frame header), in order; one is taken
    /// as a frame when its checksum matches chained from the stored checksum of one of the few
    /// candidates before it (or from `chain`, or from the checksum field at `start`), so a
    /// damaged length or salt in the frame at the stop does not hide the frames after it. A
    /// frame taken is followed by the frames after it while their chain holds.
    static func durableFrame(
        in file: any StorageFile, size: UInt64, from start: UInt64, chain: UInt32, after last: TransactionID, salt: UInt32,
        pageSize: Int
    ) throws(StorageError) -> (UInt64, TransactionID)? {
        let head = UInt64(LogFormat.frameHeaderSize)
        var search = SequentialReader(file: file, size: size)
        var frames = SequentialReader(file: file, size: size)
        /// The frame header at `position` (nil past the end of the file).
        func rawHeader(at position: UInt64) throws(StorageError) -> LogFormat.FrameHeader? {
            guard position + head <= size else { return nil }
            return try frames.bytes(at: position, count: LogFormat.frameHeaderSize).withUnsafeBytes { LogFormat.FrameHeader.decode($0) }
        }
        /// Whether `h`, at `position`, is of this generation with a possible length.
        func plausible(_ h: LogFormat.FrameHeader, at position: UInt64) -> Bool {
            h.salt == salt && h.hasPossibleLength(pageSize: pageSize) && position + head + UInt64(h.storedLength) <= size
        }
        /// Whether the frame `h` at `position` checks out chained from `previous`.
        func holds(_ h: LogFormat.FrameHeader, at position: UInt64, after previous: UInt32) throws(StorageError) -> Bool {
            let headBytes = try frames.bytes(at: position, count: LogFormat.frameHeaderSize)
            let payload = try frames.bytes(at: position + head, count: Int(h.storedLength))
            let crc = headBytes.withUnsafeBytes { hb in
                payload.withUnsafeBytes { p in
                    LogFormat.frameChecksum(previous: previous, headerFields: hb, offset: LogPosition(position), payload: p)
                }
            }
            return crc == h.checksum
        }
        // Stored checksums a frame found next may be chained from: the last trusted frame's, the
        // (maybe damaged) frame's at the stop, then each candidate's (the last few).
        var seeds = [chain]
        if let atStop = try rawHeader(at: start) { seeds.append(atStop.checksum) }
        // The salt's bytes as stored (little-endian), and one of them that is not zero, searched
        // for first (zeros fill the unused end of a preallocated log).
        let saltBytes = withUnsafeBytes(of: salt.littleEndian) { Array($0) }
        let probe = saltBytes.firstIndex { $0 != 0 } ?? 0
        var candidate = start
        while candidate + head <= size {
            // The next offset ≥ candidate whose bytes 24..<28 are the salt: searched for in a
            // window of the file from candidate + 24 (windows overlap by three bytes, so a salt
            // across two of them is found in the second).
            let from = candidate + 24
            let window = Int(min(UInt64(1 << 20), size - from))
            guard window >= 4 else { break }
            let chunk = try search.bytes(at: from, count: window)
            let hit: Int? = chunk.withUnsafeBytes { raw -> Int? in
                guard let base = raw.baseAddress else { return nil }
                var offset = probe
                while offset < raw.count {
                    guard let found = memchr(base + offset, Int32(saltBytes[probe]), raw.count - offset) else { return nil }
                    let first = base.distance(to: UnsafeRawPointer(found)) - probe
                    if first + 4 <= raw.count, (0..<4).allSatisfy({ raw[first + $0] == saltBytes[$0] }) { return first }
                    offset = first + probe + 1
                }
                return nil
            }
            guard let hit else {
                candidate = from + UInt64(window - 3) - 24
                continue
            }
            let position = from + UInt64(hit) - 24
            candidate = position + 1
            guard let h = try rawHeader(at: position) else { break }
            var taken = false
            if plausible(h, at: position) {
                for seed in seeds.reversed() where try holds(h, at: position, after: seed) {
                    taken = true
                    break
                }
            }
            guard taken else {
                seeds.append(h.checksum)
                if seeds.count > 6 { seeds.remove(at: 2) }
                continue
            }
            // A frame of this generation: it and the frames after it while their chain holds.
            var frame = h
            var at = position
            while true {
                if let durable = frame.durableThrough, durable > last { return (at, durable) }
                let nextAt = at + head + UInt64(frame.storedLength)
                guard let next = try rawHeader(at: nextAt), plausible(next, at: nextAt), try holds(next, at: nextAt, after: frame.checksum)
                else {
                    seeds = [frame.checksum]
                    candidate = nextAt
                    break
                }
                frame = next
                at = nextAt
            }
        }
        return nil
    }
}

/// Reads a file front to back through a 1 MiB window, so recovery costs few system calls.
private struct SequentialReader {
    let file: any StorageFile
    let size: UInt64
    var window: [UInt8] = []
    var windowStart: UInt64 = 0

    init(file: any StorageFile, size: UInt64) {
        self.file = file
        self.size = size
    }

    mutating func bytes(at offset: UInt64, count: Int) throws(StorageError) -> ArraySlice<UInt8> {
        let windowEnd = windowStart + UInt64(window.count)
        if offset < windowStart || offset + UInt64(count) > windowEnd {
            let length = Int(min(max(UInt64(count), 1 << 20), size - offset))
            var fresh = [UInt8](repeating: 0, count: length)
            try fresh.withMutableBytes { (b) throws(StorageError) in try file.readFully(into: b, at: offset) }
            window = fresh
            windowStart = offset
        }
        let start = Int(offset - windowStart)
        return window[start..<(start + count)]
    }
}
