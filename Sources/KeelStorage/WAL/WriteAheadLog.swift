// The write-ahead log at run time: appending a transaction's frames, reading a page version back,
// and resetting the log after a checkpoint. The byte layout is in LogFormat.swift; recovery (the
// scan at open) is in Recovery/LogScanner.swift.

import CKeelSupport

/// A page to append to the log. `WriteAheadLog.append` stamps it with the transaction and seals
/// it (PageBuffer.seal) just before building its frame.
struct LogPage {
    var number: PageNumber
    var buffer: PageBuffer
}

/// The log of one store.
///
/// Concurrency: `append`, `reset`, `sync` and `ensureCapacity` are called only by the holder of
/// the store's writer lock (Docs/Concurrency.md); `readPage` is called by any thread and touches only
/// immutable state (the file, the page size) and pread. That split is why `@unchecked Sendable` is safe.
final class WriteAheadLog: @unchecked Sendable {
    let file: any StorageFile
    let pageSize: Int
    let compress: Bool
    let preallocationBytes: UInt64
    /// Whether a commit larger than one chunk starts writeback of each full chunk as soon as it is
    /// written (`StorageFile.startWriteback`), so the device writes the early chunks while the
    /// later ones are encoded and the log's next fdatasync (the commit's in sync mode full, the
    /// checkpoint's in normal) waits for less. Off with sync mode off.
    let startsWriteback: Bool

    /// Writer-lock state: the current header, where the next frame goes, the checksum chain.
    private(set) var header: LogFormat.Header
    private(set) var end: LogPosition
    private(set) var lastChecksum: UInt32
    private(set) var nextSequence: FrameSequence
    /// Bytes of the file that are allocated and zero-filled (or hold old frames) already.
    private var capacity: UInt64
    private var scratch: [UInt8]
    /// The chunk buffer of the last append, kept for the next one (about `chunkBytes`).
    private var frameBuffer: [UInt8] = []
    /// Appends a page's worth of zeros but its checksum field to a CRC (`sealedFrameChecksum`).
    private let pageZeros: CRC32C.ZeroAppend

    init(file: any StorageFile, header: LogFormat.Header, end: LogPosition, lastChecksum: UInt32,
         nextSequence: FrameSequence, compress: Bool, preallocationBytes: UInt64, startsWriteback: Bool = false) throws(StorageError) {
        self.file = file
        self.pageSize = Int(header.pageSize)
        self.header = header
        self.end = end
        self.lastChecksum = lastChecksum
        self.nextSequence = nextSequence
        self.compress = compress
        self.preallocationBytes = max(preallocationBytes, 64 * 1024)
        self.startsWriteback = startsWriteback
        self.capacity = try file.size()
        self.scratch = [UInt8](repeating: 0, count: LZ4.compressBound(Int(header.pageSize)))
        self.pageZeros = CRC32C.ZeroAppend(length: Int(header.pageSize) - 4)
    }

    /// Bytes of frames in the current generation (what a checkpoint threshold compares against).
    var frameBytes: UInt64 { end.rawValue - UInt64(LogFormat.headerSize) }

    /// Appends one transaction's pages; the last carries the commit flag and the page count. Each
    /// page is stamped with `transaction` and sealed right before its frame is built, chunk by
    /// chunk, so the gathered write that follows copies pages the checksum has just read.
    /// Returns each page's frame reference and sequence number, in order. On a write error the
    /// log's end is unchanged (the frames written so far are dead bytes the chain will reject) and
    /// the error is thrown: nothing of the transaction is visible. `durableThrough`: the last
    /// transaction an fdatasync of this log has made durable, recorded in each frame (its durable
    /// lag, LogFormat.swift) so that recovery can tell damage from a torn tail.
    func append(_ pages: [LogPage], transaction: TransactionID, pageCountAfterCommit: UInt32, durableThrough: TransactionID)
        throws(StorageError) -> [(FrameSequence, LogFrameReference)]
    {
        precondition(!pages.isEmpty, "a commit has at least one page")
        var out = frameBuffer
        frameBuffer = []
        out.removeAll(keepingCapacity: true)
        // `out` holds frame headers, and compressed payloads when compressing (page images of
        // uncompressed frames are written from their own buffers).
        let framesPerChunk = Self.chunkBytes / pageSize + 1
        out.reserveCapacity(min(pages.count, framesPerChunk) * (LogFormat.frameHeaderSize + (compress ? pageSize : 0)))
        defer { frameBuffer = out }
        var refs: [(FrameSequence, LogFrameReference)] = []
        refs.reserveCapacity(pages.count)
        var chain = lastChecksum
        var position = end.rawValue
        var sequence = nextSequence
        let durableLag = LogFormat.FrameHeader.durableLag(of: transaction, durableThrough: durableThrough)
        // Where the chunk starts in the file: frames go out in chunks of about `chunkBytes`. A
        // chunk is `out` (frame headers, compressed payloads) interleaved with the uncompressed
        // pages' own buffers, written with one gathered write: a page image is not copied into
        // a log buffer first (the kernel copies it into the file's pages either way).
        var chunkStart = end.rawValue
        // Per frame of the chunk: its bytes in `out` (the header, and a compressed payload), then
        // the page of `pages` whose buffer is its payload (-1: none).
        var pieces: [(start: Int, count: Int, page: Int)] = []
        var pendingBytes = 0
        var vectors: [UnsafeRawBufferPointer] = []
        func writeChunk() throws(StorageError) {
            guard pendingBytes > 0 else { return }
            try ensureCapacity(upTo: chunkStart + UInt64(pendingBytes), writingFrom: chunkStart)
            try out.withBytes { (b) throws(StorageError) in
                vectors.removeAll(keepingCapacity: true)
                for piece in pieces {
                    vectors.append(UnsafeRawBufferPointer(rebasing: b[piece.start..<(piece.start + piece.count)]))
                    if piece.page >= 0 { vectors.append(pages[piece.page].buffer.readOnlyBytes) }
                }
                try file.writeFully(gathering: vectors, at: chunkStart)
            }
            chunkStart += UInt64(pendingBytes)
            pendingBytes = 0
            pieces.removeAll(keepingCapacity: true)
            out.removeAll(keepingCapacity: true)
        }
        for (i, page) in pages.enumerated() {
            // The next page's bytes (sealed next) and a later page's buffer object are asked for
            // ahead, so their cache misses overlap this page's checksum.
            if i + 4 < pages.count { pages[i + 4].buffer.prefetch() }
            if i + 1 < pages.count { keel_prefetch(pages[i + 1].buffer.pointer, pageSize) }
            page.buffer.transactionID = transaction
            page.buffer.seal(as: page.number)
            let isCommit = i == pages.count - 1
            var flags: LogFormat.FrameFlags = isCommit ? [.commit] : []
            var stored = pageSize
            if compress {
                let n = scratch.withUnsafeMutableBytes { dst in
                    LZ4.compress(page.buffer.readOnlyBytes, into: dst, limit: pageSize - pageSize / 8)
                }
                if let n {
                    stored = n
                    flags.insert(.compressed)
                }
            }
            let frameHeader = LogFormat.FrameHeader(
                page: page.number, flags: flags, storedLength: UInt32(stored),
                pageCountAfterCommit: isCommit ? pageCountAfterCommit : 0, transaction: transaction,
                salt: header.salt, checksum: 0, durableLag: durableLag)
            // The header goes straight into the chunk, its checksum filled in once computed.
            let headAt = out.count
            out.append(contentsOf: repeatElement(0, count: LogFormat.frameHeaderSize))
            let crc: UInt32 = out.withUnsafeMutableBytes { all in
                let h = UnsafeMutableRawBufferPointer(rebasing: all[headAt..<(headAt + LogFormat.frameHeaderSize)])
                frameHeader.encodeFields(into: h)
                let c: UInt32
                if flags.contains(.compressed) {
                    // `scratch` outlives this closure; the rebased pointer is used only inside it.
                    let payload = scratch.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[0..<stored]) }
                    c = LogFormat.frameChecksum(
                        previous: chain, headerFields: UnsafeRawBufferPointer(h), offset: LogPosition(position),
                        payload: payload)
                } else {
                    // The page is sealed: its checksum already covers its bytes, and the frame's
                    // follows from it without a second pass over them.
                    c = LogFormat.sealedFrameChecksum(
                        previous: chain, headerFields: UnsafeRawBufferPointer(h), offset: LogPosition(position),
                        page: page.buffer, number: page.number, zeros: pageZeros)
                    assert(c == LogFormat.frameChecksum(
                        previous: chain, headerFields: UnsafeRawBufferPointer(h), offset: LogPosition(position),
                        payload: page.buffer.readOnlyBytes), "page \(page.number) was appended unsealed")
                }
                h.storeBytes(of: c.littleEndian, toByteOffset: 28, as: UInt32.self)
                return c
            }
            if flags.contains(.compressed) { out.append(contentsOf: scratch[0..<stored]) }
            // This frame's bytes in `out` continue the previous piece when that one has no page
            // after it (runs of compressed frames are one piece, not one iovec each).
            let inOut = out.count - headAt
            let ownPage = flags.contains(.compressed) ? -1 : i  // `pages` holds the buffer until the write
            if let last = pieces.last, last.page < 0, last.start + last.count == headAt {
                pieces[pieces.count - 1] = (last.start, last.count + inOut, ownPage)
            } else {
                pieces.append((headAt, inOut, ownPage))
            }
            pendingBytes += LogFormat.frameHeaderSize + stored
            refs.append(
                (sequence,
                 LogFrameReference(
                    offset: LogPosition(position), storedLength: UInt32(stored),
                    compressed: flags.contains(.compressed), previousChecksum: chain, checksum: crc)))
            chain = crc
            position += UInt64(LogFormat.frameHeaderSize + stored)
            sequence = FrameSequence(sequence.rawValue + 1)
            if pendingBytes >= Self.chunkBytes {
                let from = chunkStart
                try writeChunk()
                // A full chunk with more to come: its writeback can start now. The commit's own
                // chunk is left to the log's next fdatasync (the commit's in sync mode full, the
                // checkpoint's in normal).
                if startsWriteback, !isCommit { try file.startWriteback(offset: from, length: chunkStart - from) }
            }
        }
        try writeChunk()
        end = LogPosition(position)
        lastChecksum = chain
        nextSequence = sequence
        return refs
    }

    /// A large commit's frames are written in chunks of about this size, each one gathered write
    /// of the frame headers (one reused buffer) and the page buffers themselves: a buffer of the
    /// whole commit (tens of MiB for a cascade of 10,000 rows) cost a page fault per 4 KiB and a
    /// pass through memory that no cache holds, and copying the pages into a chunk buffer cost a
    /// pass over them besides the kernel's own copy into the file (Performance.md, round
    /// cascade3: the kernel's copy gets dearer, reading the pages cold; the net gain is small).
    /// The commit is still recognised by its last frame (the commit flag and the checksum chain):
    /// a crash between two chunks leaves a torn tail that recovery discards, exactly as a torn
    /// single write would.
    static let chunkBytes = 1 << 20

    /// Grows the file in preallocation steps, filling new space with zeros so later commits
    /// overwrite allocated blocks and their fdatasync does not also have to update file metadata.
    /// The part the pending append itself covers ([start, needed)) is not zero-filled first.
    private func ensureCapacity(upTo needed: UInt64, writingFrom start: UInt64) throws(StorageError) {
        guard needed > capacity else { return }
        let step = preallocationBytes
        let newCapacity = (needed + step - 1) / step * step
        try file.allocate(offset: capacity, length: newCapacity - capacity)
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var at = capacity < start ? capacity : max(capacity, needed)
        while at < start {
            let n = Int(min(UInt64(zeros.count), start - at))
            try zeros.withBytes { (z) throws(StorageError) in
                try file.writeFully(UnsafeRawBufferPointer(rebasing: z[0..<n]), at: at)
            }
            at += UInt64(n)
        }
        at = max(at, needed)
        while at < newCapacity {
            let n = Int(min(UInt64(zeros.count), newCapacity - at))
            try zeros.withBytes { (z) throws(StorageError) in
                try file.writeFully(UnsafeRawBufferPointer(rebasing: z[0..<n]), at: at)
            }
            at += UInt64(n)
        }
        capacity = newCapacity
    }

    func resetCapacity(_ size: UInt64) { capacity = size }

    /// fdatasync of the log.
    func sync() throws(StorageError) { try file.sync() }

    /// Reads the page version at `ref` into `buffer`, verifying the frame's chained checksum and
    /// decompressing safely. Any mismatch is `.corrupt` naming the page and the log position.
    func readPage(_ number: PageNumber, at ref: LogFrameReference, into buffer: PageBuffer) throws(StorageError) {
        let total = LogFormat.frameHeaderSize + Int(ref.storedLength)
        var raw = [UInt8](repeating: 0, count: total)
        try raw.withMutableBytes { (b) throws(StorageError) in try file.readFully(into: b, at: ref.offset.rawValue) }
        try raw.withBytes { (b) throws(StorageError) in
            let head = LogFormat.FrameHeader.decode(b)
            let payload = UnsafeRawBufferPointer(rebasing: b[LogFormat.frameHeaderSize...])
            let crc = LogFormat.frameChecksum(
                previous: ref.previousChecksum, headerFields: b, offset: ref.offset, payload: payload)
            guard head.checksum == crc, crc == ref.checksum, head.page == number else {
                throw StorageError(.corrupt, "log frame checksum mismatch", page: number, logPosition: ref.offset, path: file.path)
            }
            if ref.compressed {
                try LZ4.decompress(payload, into: buffer.bytes, page: number, logPosition: ref.offset)
            } else {
                guard payload.count == pageSize else {
                    throw StorageError(.corrupt, "log frame has a short page image", page: number, logPosition: ref.offset)
                }
                buffer.bytes.copyMemory(from: payload)
            }
        }
    }

    /// Starts a new generation: a new salt, the header rewritten and synced (when `sync`), the
    /// append position back at the start. Called only after every frame was checkpointed (I8).
    /// `storeIdentity`: the store identity of the page file, which now holds every frame (I17): a
    /// header of a log made before identities, or before its page file gained one, takes it here.
    func reset(baseTransaction: TransactionID, storeIdentity: UInt64, salt: UInt32, sync: Bool) throws(StorageError) {
        var next = header
        next.generation += 1
        next.salt = salt
        next.baseSequence = nextSequence
        next.baseTransaction = baseTransaction
        next.storeIdentity = storeIdentity
        let bytes = next.encode()
        try bytes.withBytes { (b) throws(StorageError) in try file.writeFully(b, at: 0) }
        if sync { try file.sync() }
        header = next
        end = LogPosition(UInt64(LogFormat.headerSize))
        lastChecksum = next.checksum
    }

    func close() throws(StorageError) { try file.close() }
}

extension WriteAheadLog {
    /// After a reset: gives back disk space when a large transaction made the log file grow far
    /// beyond its usual size (like SQLite's journal_size_limit). Only frames of the old generation
    /// lie beyond the cut, so nothing live is lost.
    func shrinkIfLarger(than limit: UInt64, to size: UInt64) throws(StorageError) {
        let current = try file.size()
        guard current > limit, end.rawValue <= size else { return }
        try file.truncate(to: size)
        resetCapacity(size)
    }
}
