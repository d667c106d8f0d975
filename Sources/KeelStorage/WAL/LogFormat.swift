// The write-ahead log file `NAME.keel-wal`: a header, then frames appended in commit order.
// Each frame carries one page image; the last frame of a transaction carries the commit flag.
//
// Log header (64 bytes, at offset 0; written when the log is made, rewritten only when it is reset
// after a checkpoint):
//
// | offset | size | field                                                                 |
// |--------|------|-----------------------------------------------------------------------|
// | 0      | 8    | magic "KEELWAL1"                                                      |
// | 8      | 4    | format version (1)                                                    |
// | 12     | 4    | page size                                                             |
// | 16     | 8    | generation: +1 at every reset                                         |
// | 24     | 4    | salt: random at every reset                                           |
// | 28     | 4    | reserved (0)                                                          |
// | 32     | 8    | base frame sequence: global sequence number of this generation's first frame |
// | 40     | 8    | base transaction ID: the last transaction committed before this generation |
// | 48     | 8    | store identity: the page file's (its meta page, offset 56); 0 — not known (a writer before this field, or a page file without one) |
// | 56     | 4    | reserved (0)                                                          |
// | 60     | 4    | CRC32C of bytes [0, 60)                                               |
//
// Frame (32-byte header, then `stored length` bytes of payload; frames are packed, unaligned):
//
// | offset | size | field                                                                 |
// |--------|------|-----------------------------------------------------------------------|
// | 0      | 4    | page number                                                           |
// | 4      | 2    | flags: bit 0 payload is LZ4-compressed, bit 1 commit frame            |
// | 6      | 2    | durable lag: n ≥ 1 — when the frame was written, an fdatasync had made the log durable through transaction (this frame's transaction − n); 0 — not known (a lag over 65535, or a writer before this field) |
// | 8      | 4    | stored payload length (≤ page size)                                   |
// | 12     | 4    | commit frames: the store's page count after the transaction; else 0   |
// | 16     | 8    | transaction ID                                                        |
// | 24     | 4    | salt (must equal the header's)                                        |
// | 28     | 4    | checksum: CRC32C chained from the previous frame's checksum (the first frame from the header's), over header bytes [0, 28), the frame's log offset (u64), then the payload |
//
// Validity: a frame is trusted only if its salt matches, its length is in range and its chained
// checksum matches; chaining makes a stale frame (an older generation, or leftovers of a failed
// transaction) fail even when it sits at a plausible offset, and the offset in the checksum
// rejects misplaced frames (Docs/Invariants.md, I3). A payload flagged compressed decompresses to
// exactly one page with LZ4_decompress_safe (I4). Recovery applies frames only up to the last
// valid commit frame (I2). The payload is the page image including its own page checksum.
//
// Damage or a torn tail: a scan that stops early looks past the stop for frames of this
// generation whose chain still holds (LogScanner). If one of them records, by its durable lag,
// that a transaction after the last recovered one had been fdatasynced before it was written,
// the bytes the scan stopped at were durable: that is damage, and the open fails with CORRUPT
// instead of dropping acknowledged commits. Otherwise the stop is in bytes no fdatasync had
// covered — a torn write of unacknowledged commits (a power cut may keep a later sector and lose
// an earlier one) — and recovery ends there as before (Docs/Decisions/0012-log-damage.md).
//
// Pairing: a log is replayed only onto the page file it belongs to. When the header's store
// identity and the page file's are both known (≠ 0) and differ, the log is another store file's
// (copied or restored beside the wrong page file): the open fails with CORRUPT naming both files,
// before any frame is read, and nothing is written (Docs/Invariants.md I17,
// Docs/Decisions/0013-log-store-identity.md). Every header written carries the identity of the
// page file it serves: the store's own at creation, the writer's page 0 at a reset (which the
// page file then holds: everything was checkpointed, I8), the page file's page 0 when a missing or
// empty log is made anew.
//
// Fsync order: frames are written, then the log is fdatasynced before a commit is acknowledged
// (sync mode full, I1). A reset rewrites the header only after every frame was copied into the page
// file and the page file was fsynced (I8).

/// Layout constants and the header/frame codecs of the write-ahead log.
enum LogFormat {
    static let magic: [UInt8] = Array("KEELWAL1".utf8)
    static let version: UInt32 = 1
    static let headerSize = 64
    static let frameHeaderSize = 32

    struct Header: Equatable {
        var pageSize: UInt32
        var generation: UInt64
        var salt: UInt32
        var baseSequence: FrameSequence
        var baseTransaction: TransactionID
        /// The store identity of the page file this log belongs to (MetaPage.storeIdentity); 0
        /// when not known.
        var storeIdentity: UInt64 = 0

        func encode() -> [UInt8] {
            var bytes = LogFormat.magic + [UInt8](repeating: 0, count: LogFormat.headerSize - 8)
            bytes.withUnsafeMutableBytes { b in
                b.storeBytes(of: LogFormat.version.littleEndian, toByteOffset: 8, as: UInt32.self)
                b.storeBytes(of: pageSize.littleEndian, toByteOffset: 12, as: UInt32.self)
                b.storeBytes(of: generation.littleEndian, toByteOffset: 16, as: UInt64.self)
                b.storeBytes(of: salt.littleEndian, toByteOffset: 24, as: UInt32.self)
                b.storeBytes(of: baseSequence.rawValue.littleEndian, toByteOffset: 32, as: UInt64.self)
                b.storeBytes(of: baseTransaction.rawValue.littleEndian, toByteOffset: 40, as: UInt64.self)
                b.storeBytes(of: storeIdentity.littleEndian, toByteOffset: 48, as: UInt64.self)
                let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<60]))
                b.storeBytes(of: crc.littleEndian, toByteOffset: 60, as: UInt32.self)
            }
            return bytes
        }

        /// The header's checksum, which seeds the first frame's chained checksum.
        var checksum: UInt32 {
            let bytes = encode()
            return bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 60, as: UInt32.self).littleEndian }
        }

        enum DecodeResult {
            case valid(Header)
            /// Not a log header at all, or torn: treat the log as empty.
            case invalid(String)
            /// A Keel log of a format version this build does not know.
            case unsupportedVersion(UInt32)
        }

        static func decode(_ b: UnsafeRawBufferPointer) -> DecodeResult {
            guard b.count >= LogFormat.headerSize else { return .invalid("log shorter than its header") }
            guard b.prefix(8).elementsEqual(LogFormat.magic) else { return .invalid("no log magic") }
            let stored = b.loadUnaligned(fromByteOffset: 60, as: UInt32.self).littleEndian
            guard stored == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: b[0..<60])) else {
                return .invalid("log header checksum mismatch")
            }
            let version = b.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian
            guard version == LogFormat.version else { return .unsupportedVersion(version) }
            return .valid(
                Header(
                    pageSize: b.loadUnaligned(fromByteOffset: 12, as: UInt32.self).littleEndian,
                    generation: b.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian,
                    salt: b.loadUnaligned(fromByteOffset: 24, as: UInt32.self).littleEndian,
                    baseSequence: FrameSequence(b.loadUnaligned(fromByteOffset: 32, as: UInt64.self).littleEndian),
                    baseTransaction: TransactionID(
                        b.loadUnaligned(fromByteOffset: 40, as: UInt64.self).littleEndian),
                    storeIdentity: b.loadUnaligned(fromByteOffset: 48, as: UInt64.self).littleEndian))
        }
    }

    struct FrameFlags: OptionSet {
        var rawValue: UInt16
        static let compressed = FrameFlags(rawValue: 1)
        static let commit = FrameFlags(rawValue: 2)
    }

    /// A decoded frame header.
    struct FrameHeader {
        var page: PageNumber
        var flags: FrameFlags
        var storedLength: UInt32
        var pageCountAfterCommit: UInt32
        var transaction: TransactionID
        var salt: UInt32
        var checksum: UInt32
        /// The durable lag (see the table above); 0 when not known.
        var durableLag: UInt16 = 0

        /// The durable lag of a frame of `transaction` written when the log was durable through
        /// `durable`: 0 (not known) when that is not before `transaction` or too far behind.
        static func durableLag(of transaction: TransactionID, durableThrough durable: TransactionID) -> UInt16 {
            guard durable.rawValue < transaction.rawValue else { return 0 }
            let lag = transaction.rawValue - durable.rawValue
            return lag <= UInt64(UInt16.max) ? UInt16(lag) : 0
        }

        /// The transaction this frame says the log was durable through when it was written; nil
        /// when it does not say.
        var durableThrough: TransactionID? {
            durableLag == 0 ? nil : TransactionID(transaction.rawValue - UInt64(durableLag))
        }

        /// Whether the stored length and flags are possible for a log of `pageSize`-byte pages
        /// (known flags only; an uncompressed payload is exactly one page).
        func hasPossibleLength(pageSize: Int) -> Bool {
            storedLength > 0 && Int(storedLength) <= pageSize && flags.rawValue & ~UInt16(3) == 0
                && (flags.contains(.compressed) || Int(storedLength) == pageSize)
        }

        /// Writes the header fields (not the checksum) into `b[0..<28]`.
        func encodeFields(into b: UnsafeMutableRawBufferPointer) {
            b.storeBytes(of: page.rawValue.littleEndian, toByteOffset: 0, as: UInt32.self)
            b.storeBytes(of: flags.rawValue.littleEndian, toByteOffset: 4, as: UInt16.self)
            b.storeBytes(of: durableLag.littleEndian, toByteOffset: 6, as: UInt16.self)
            b.storeBytes(of: storedLength.littleEndian, toByteOffset: 8, as: UInt32.self)
            b.storeBytes(of: pageCountAfterCommit.littleEndian, toByteOffset: 12, as: UInt32.self)
            b.storeBytes(of: transaction.rawValue.littleEndian, toByteOffset: 16, as: UInt64.self)
            b.storeBytes(of: salt.littleEndian, toByteOffset: 24, as: UInt32.self)
        }

        static func decode(_ b: UnsafeRawBufferPointer) -> FrameHeader {
            FrameHeader(
                page: PageNumber(b.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian),
                flags: FrameFlags(rawValue: b.loadUnaligned(fromByteOffset: 4, as: UInt16.self).littleEndian),
                storedLength: b.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian,
                pageCountAfterCommit: b.loadUnaligned(fromByteOffset: 12, as: UInt32.self).littleEndian,
                transaction: TransactionID(b.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian),
                salt: b.loadUnaligned(fromByteOffset: 24, as: UInt32.self).littleEndian,
                checksum: b.loadUnaligned(fromByteOffset: 28, as: UInt32.self).littleEndian,
                durableLag: b.loadUnaligned(fromByteOffset: 6, as: UInt16.self).littleEndian)
        }
    }

    /// The chained checksum of a frame: over header bytes [0, 28), the frame's offset, the payload.
    static func frameChecksum(
        previous: UInt32, headerFields: UnsafeRawBufferPointer, offset: LogPosition, payload: UnsafeRawBufferPointer
    ) -> UInt32 {
        var crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: headerFields[0..<28]), continuing: previous)
        crc = CRC32C.checksum(integer: offset.rawValue, continuing: crc)
        return CRC32C.checksum(payload, continuing: crc)
    }

    /// `frameChecksum` of an uncompressed frame whose payload is `page` sealed as `number`,
    /// without a second pass over the page. The page's own checksum C (its first four bytes) is
    /// the CRC of `number` (u32 LE) ++ page[4...]; with Z the operator that appends L = page size
    /// − 4 zero bytes (`zeros`), CRC(page[4...]) = C ^ Z(CRC(number)), and the frame's checksum,
    /// CRC(previous; header ++ offset ++ page[0..<4] ++ page[4...]), is Z(X) ^ CRC(page[4...]) with
    /// X the CRC up to page[4]: Z(X ^ CRC(number)) ^ C. Equal to `frameChecksum` for every page
    /// whose stored checksum is right, which a sealed page's is (the pager seals each page just
    /// before the append; debug builds check it against the full computation).
    static func sealedFrameChecksum(
        previous: UInt32, headerFields: UnsafeRawBufferPointer, offset: LogPosition, page: PageBuffer, number: PageNumber,
        zeros: CRC32C.ZeroAppend
    ) -> UInt32 {
        let bytes = page.readOnlyBytes
        var x = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: headerFields[0..<28]), continuing: previous)
        x = CRC32C.checksum(integer: offset.rawValue, continuing: x)
        x = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<4]), continuing: x)
        let n = CRC32C.checksum(integer: number.rawValue, continuing: 0)
        return zeros.apply(x ^ n) ^ page.storedChecksum
    }
}

/// Where one committed page version lives in the log: enough to read and re-verify it.
struct LogFrameReference: Sendable {
    var offset: LogPosition
    var storedLength: UInt32
    var compressed: Bool
    /// The checksum chain value before this frame, and the frame's own checksum.
    var previousChecksum: UInt32
    var checksum: UInt32
}
