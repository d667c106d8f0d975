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
// - Frames are read in order from offset 64. The scan stops at the first frame that is short,
//   has a foreign salt, an impossible length, a transaction ID other than the expected one, or a
//   chained checksum that does not match. Frames after the last valid commit frame are ignored:
//   a partial transaction is never applied.
// - An I/O error while reading fails the open: skipping data we could not read would silently
//   lose acknowledged commits.

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
}

enum LogScanner {
    static func scan(_ file: any StorageFile, pageSize: Int) throws(StorageError) -> LogScanResult {
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
            guard frameHead.storedLength > 0, Int(frameHead.storedLength) <= pageSize,
                frameHead.flags.rawValue & ~UInt16(3) == 0,
                frameHead.flags.contains(.compressed) || Int(frameHead.storedLength) == pageSize
            else {
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
        return LogScanResult(
            header: header, frames: committed, end: LogPosition(commitEnd), lastChecksum: commitChain,
            nextSequence: commitSequence, lastTransaction: lastTransaction, pageCountAfterLastCommit: pageCount,
            stopReason: stopReason)
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
