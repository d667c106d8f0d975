// Cutting a byte stream into request lines (spec/protocol.md, "Framing"), with no sockets: the
// daemon feeds it what each read brings, the client what the daemon sends, the tests anything.
//
// A line ends at LF; a CR before the LF is dropped. A line longer than `maximumLength` bytes
// (without its LF) is not buffered: the framer reports `.tooLong` once, with whatever of the
// line's start it kept (enough to read a tag), and discards bytes up to the next LF, so the
// stream stays usable and memory stays bounded whatever a peer sends.
//
// A line that arrives whole in one piece (the usual case) is copied out once, at its own size;
// only a line split across pieces is gathered in `buffer`, which is handed over whole when the
// line ends (never kept at the size of the longest line seen, which would cost an allocation of
// that size for every later line).
//
// At the end of the input (the peer shut its writing side) `finish` takes what is buffered as
// the last line, as a shell's `read` or Python's `readline` do: `printf 'a HELLO'` without its
// LF is answered, not dropped without a word.

import Glibc

public struct LineFramer: Sendable {
    public enum Frame: Equatable, Sendable {
        /// One complete line, without its LF (and without a CR before it).
        case line([UInt8])
        /// A line over the limit was skipped; `prefix` is its first bytes (up to 64), for the tag.
        case tooLong(prefix: [UInt8])
    }

    public let maximumLength: Int
    private var buffer: [UInt8] = []
    /// Inside a line that went over the limit: dropping bytes until its LF.
    private var skipping = false
    private var skippedPrefix: [UInt8] = []

    public init(maximumLength: Int) {
        precondition(maximumLength > 0, "the maximum line length must be positive")
        self.maximumLength = maximumLength
    }

    /// Bytes buffered for an incomplete line (never more than `maximumLength` + 1).
    public var bufferedByteCount: Int { buffer.count }

    /// No line is under way: nothing is gathered and no over-long line is being skipped, so the
    /// next byte fed starts a line. A reader that finds a whole line in memory then may take it
    /// in place instead of feeding it (KeelClient's reply lines), as long as it is not over
    /// `maximumLength` — the framer would only copy it out.
    public var isBetweenLines: Bool { buffer.isEmpty && !skipping }

    /// The input has ended: a line under way without its LF is emitted as a line (a CR at its end
    /// dropped, as before an LF), and an over-long line being skipped is reported `.tooLong`.
    /// Nothing is emitted between lines. The framer is then between lines again.
    public mutating func finish(_ emit: (Frame) throws -> Void) rethrows {
        if skipping {
            skipping = false
            let prefix = skippedPrefix
            skippedPrefix = []
            try emit(.tooLong(prefix: prefix))
        } else if !buffer.isEmpty {
            var line = buffer
            buffer = []
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            if line.count > maximumLength {
                try emit(.tooLong(prefix: Array(line.prefix(64))))
            } else {
                try emit(.line(line))
            }
        }
    }

    /// Feeds bytes from memory: the daemon's hot path, specialised here once rather than
    /// instantiated generically for every read.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ emit: (Frame) throws -> Void) rethrows {
        try feedCollection(bytes, newline: { raw, start in Self.firstNewline(in: UnsafeRawBufferPointer(rebasing: raw[start...])).map { start + $0 } }, emit)
    }

    /// Feeds bytes; calls `emit` for every frame they complete, in order.
    public mutating func feed(_ bytes: some Collection<UInt8>, _ emit: (Frame) throws -> Void) rethrows {
        try feedCollection(bytes, newline: { bytes, start in bytes[start...].firstIndex(of: UInt8(ascii: "\n")) }, emit)
    }

    /// The offset of the first LF in `bytes`, found with `memchr`.
    package static func firstNewline(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress, let found = memchr(base, Int32(UInt8(ascii: "\n")), bytes.count) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// `newline` finds the first LF at or after an index (`memchr` for bytes in memory).
    private mutating func feedCollection<Bytes: Collection<UInt8>>(
        _ bytes: Bytes, newline firstNewline: (Bytes, Bytes.Index) -> Bytes.Index?, _ emit: (Frame) throws -> Void
    ) rethrows {
        var start = bytes.startIndex
        while start != bytes.endIndex {
            let newline = firstNewline(bytes, start)
            let end = newline ?? bytes.endIndex
            let piece = bytes[start..<end]
            if skipping {
                if newline != nil {
                    skipping = false
                    let prefix = skippedPrefix
                    skippedPrefix = []
                    try emit(.tooLong(prefix: prefix))
                }
            } else if buffer.count + piece.count > maximumLength + 1 {
                // Over the limit (one byte of slack for a CR that the LF will strip).
                skippedPrefix = Array((buffer + Array(piece.prefix(64))).prefix(64))
                buffer.removeAll(keepingCapacity: false)
                if newline != nil {
                    let prefix = skippedPrefix
                    skippedPrefix = []
                    try emit(.tooLong(prefix: prefix))
                } else {
                    skipping = true
                }
            } else if buffer.isEmpty, newline != nil {
                // The usual case: a whole line within one read, copied out once at its own size.
                var length = piece.count
                if length > 0, piece[piece.index(piece.startIndex, offsetBy: length - 1)] == UInt8(ascii: "\r") { length -= 1 }
                if length > maximumLength {
                    try emit(.tooLong(prefix: Array(piece.prefix(64))))
                } else {
                    try emit(.line(Array(piece.prefix(length))))
                }
            } else {
                buffer.append(contentsOf: piece)
                if newline != nil {
                    if buffer.last == UInt8(ascii: "\r") { buffer.removeLast() }
                    if buffer.count > maximumLength {
                        let prefix = Array(buffer.prefix(64))
                        buffer.removeAll(keepingCapacity: true)
                        try emit(.tooLong(prefix: prefix))
                    } else {
                        // Handed over whole: keeping the capacity would copy nothing but
                        // allocate a buffer as large as the longest line so far for the next one.
                        let line = buffer
                        buffer = []
                        try emit(.line(line))
                    }
                }
            }
            guard let newline else { break }
            start = bytes.index(after: newline)
        }
    }
}
