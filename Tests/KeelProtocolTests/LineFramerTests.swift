import Testing

@testable import KeelProtocol

@Suite("Line framing")
struct LineFramerTests {
    static func frames(_ chunks: [[UInt8]], limit: Int = 16) -> [LineFramer.Frame] {
        var framer = LineFramer(maximumLength: limit)
        var out: [LineFramer.Frame] = []
        for chunk in chunks { framer.feed(chunk) { out.append($0) } }
        return out
    }

    @Test("lines end at LF, a CR before it is dropped, and an unfinished line waits")
    func basics() {
        let out = Self.frames([Array("a PING\r\nb PING\nc PI".utf8)])
        #expect(out == [.line(Array("a PING".utf8)), .line(Array("b PING".utf8))])
    }

    @Test("the same stream split byte by byte gives the same lines")
    func byteByByte() {
        let text = Array("1 PING\n2 FETCH {\"entity\":\"E\"}\r\n\n3 QUIT\n".utf8)
        let whole = Self.frames([text], limit: 64)
        let split = Self.frames(text.map { [$0] }, limit: 64)
        #expect(whole == split)
        #expect(whole.count == 4)
        #expect(whole[2] == .line([]))
    }

    @Test("a line over the limit is reported once, skipped to its LF, and the next line is read")
    func tooLong() {
        let long = Array("t1 INSERT ".utf8) + Array(repeating: UInt8(ascii: "x"), count: 100)
        for chunking in [1, 7, 1000] {
            let stream = long + Array("\nt2 PING\n".utf8)
            let chunks = stride(from: 0, to: stream.count, by: chunking).map { Array(stream[$0..<min($0 + chunking, stream.count)]) }
            var framer = LineFramer(maximumLength: 16)
            var out: [LineFramer.Frame] = []
            for chunk in chunks {
                framer.feed(chunk) { out.append($0) }
                #expect(framer.bufferedByteCount <= 17, "the framer buffered \(framer.bufferedByteCount) bytes")
            }
            #expect(out.count == 2, "chunks of \(chunking)")
            if case .tooLong(let prefix) = out.first {
                #expect(Request.leadingTag(of: prefix) == "t1")
            } else {
                Issue.record("expected tooLong first, got \(out)")
            }
            #expect(out.last == .line(Array("t2 PING".utf8)))
        }
    }

    @Test("between lines only when nothing is gathered and no over-long line is being skipped")
    func betweenLines() {
        var framer = LineFramer(maximumLength: 16)
        var out: [LineFramer.Frame] = []
        #expect(framer.isBetweenLines)
        framer.feed(Array("1 OK".utf8)) { out.append($0) }
        #expect(!framer.isBetweenLines)
        framer.feed(Array(" {}\n".utf8)) { out.append($0) }
        #expect(framer.isBetweenLines)
        // A CR alone is the start of a line too.
        framer.feed(Array("\r".utf8)) { out.append($0) }
        #expect(!framer.isBetweenLines)
        framer.feed(Array("\n".utf8)) { out.append($0) }
        #expect(framer.isBetweenLines)
        // An over-long line: skipped (nothing gathered) until its LF.
        framer.feed(Array(repeating: UInt8(ascii: "x"), count: 40)) { out.append($0) }
        #expect(framer.bufferedByteCount == 0)
        #expect(!framer.isBetweenLines)
        framer.feed(Array("xx\n".utf8)) { out.append($0) }
        #expect(framer.isBetweenLines)
        #expect(out.count == 3)
        #expect(out.first == .line(Array("1 OK {}".utf8)))
        if case .tooLong = out.last {} else { Issue.record("expected tooLong last, got \(out)") }
    }

    @Test("at the end of the input the line under way is the last line; between lines nothing is emitted")
    func finish() {
        func finished(_ text: String, limit: Int = 16) -> [LineFramer.Frame] {
            var framer = LineFramer(maximumLength: limit)
            var out: [LineFramer.Frame] = []
            for byte in Array(text.utf8) { framer.feed([byte]) { out.append($0) } }
            framer.finish { out.append($0) }
            #expect(framer.isBetweenLines)
            return out
        }
        #expect(finished("a PING\nb PING") == [.line(Array("a PING".utf8)), .line(Array("b PING".utf8))])
        #expect(finished("a PING\nb PING\r") == [.line(Array("a PING".utf8)), .line(Array("b PING".utf8))])
        #expect(finished("a PING\n") == [.line(Array("a PING".utf8))])
        #expect(finished("") == [])
        // An over-long last line is reported once, with its tag, whether it was being skipped or
        // is gathered up to the limit's slack byte.
        for text in ["t9 " + String(repeating: "x", count: 40), "t9 " + String(repeating: "x", count: 14)] {
            let out = finished(text)
            #expect(out.count == 1, "\(text.count) bytes: \(out)")
            if case .tooLong(let prefix) = out.first {
                #expect(Request.leadingTag(of: prefix) == "t9")
            } else {
                Issue.record("expected tooLong, got \(out)")
            }
        }
    }

    @Test("a line of exactly the limit passes, also with a CR; one byte more does not")
    func boundary() {
        let exact = Array(repeating: UInt8(ascii: "a"), count: 16)
        #expect(Self.frames([exact + [10]]) == [.line(exact)])
        #expect(Self.frames([exact + [13, 10]]) == [.line(exact)])
        if case .tooLong = Self.frames([exact + [UInt8(ascii: "a"), 10]]).first {} else { Issue.record("17 bytes passed a limit of 16") }
    }
}

@Suite("Line framing, whole lines in a read against lines split across reads")
struct LineFramerChunkingTests {
    /// Lines that take every path: empty, CR-ended, exactly the limit, one over it, far over it.
    static let stream: [UInt8] = {
        var text = Array("1 OK\n\n2 ROW {\"a\":1}\r\n".utf8)
        text += Array(repeating: UInt8(ascii: "b"), count: 16) + [10]  // exactly the limit
        text += Array(repeating: UInt8(ascii: "c"), count: 16) + [13, 10]  // the limit and a CR
        text += Array("3 ".utf8) + Array(repeating: UInt8(ascii: "d"), count: 15) + [10]  // one over
        text += Array("4 ".utf8) + Array(repeating: UInt8(ascii: "e"), count: 200) + Array("\r\n5 OK {}\n6 ERR".utf8)
        return text
    }()

    /// The frames, a skipped line reduced to its tag (the prefix kept of it depends on where
    /// the line went over the limit, so on the chunking; its tag does not).
    static func frames(_ chunks: [[UInt8]]) -> [LineFramer.Frame] {
        LineFramerTests.frames(chunks).map(reduced)
    }

    static func reduced(_ frame: LineFramer.Frame) -> LineFramer.Frame {
        guard case .tooLong(let prefix) = frame else { return frame }
        return .tooLong(prefix: Array((Request.leadingTag(of: prefix) ?? "?").utf8))
    }

    @Test("every chunking of a stream gives the frames of feeding it byte by byte")
    func everyChunking() {
        let reference = Self.frames(Self.stream.map { [$0] })
        #expect(reference.count == 8)
        #expect(reference.last == .line(Array("5 OK {}".utf8)))
        #expect(reference[5] == .tooLong(prefix: Array("3".utf8)), "17 bytes passed a limit of 16")
        #expect(reference[6] == .tooLong(prefix: Array("4".utf8)))
        for size in [2, 3, 5, 8, 17, 19, 64, Self.stream.count] {
            let chunks = stride(from: 0, to: Self.stream.count, by: size).map { Array(Self.stream[$0..<min($0 + size, Self.stream.count)]) }
            #expect(Self.frames(chunks) == reference, "chunks of \(size)")
        }
    }

    @Test("bytes fed from memory (memchr finds each LF) give the frames of the same chunks fed as arrays")
    func memoryAndArraysAgree() {
        for size in [1, 2, 3, 5, 8, 17, 19, 64, Self.stream.count] {
            let chunks = stride(from: 0, to: Self.stream.count, by: size).map { Array(Self.stream[$0..<min($0 + size, Self.stream.count)]) }
            var framer = LineFramer(maximumLength: 16)
            var out: [LineFramer.Frame] = []
            for chunk in chunks { chunk.withUnsafeBytes { raw in framer.feed(raw) { out.append($0) } } }
            #expect(out.map(Self.reduced) == Self.frames(chunks), "chunks of \(size)")
        }
        #expect(LineFramer.firstNewline(in: UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
        Array("ab\ncd\n".utf8).withUnsafeBytes { raw in
            #expect(LineFramer.firstNewline(in: raw) == 2)
            #expect(LineFramer.firstNewline(in: UnsafeRawBufferPointer(rebasing: raw[3...])) == 2)
            #expect(LineFramer.firstNewline(in: UnsafeRawBufferPointer(rebasing: raw[..<2])) == nil)
        }
    }

    @Test("a whole line after a long one is its own size, not the long one's buffer")
    func lineAfterLongLine() {
        var framer = LineFramer(maximumLength: 1 << 20)
        var out: [LineFramer.Frame] = []
        let long = Array(repeating: UInt8(ascii: "x"), count: 100_000)
        framer.feed(long) { out.append($0) }
        framer.feed([10] + Array("7 OK\n".utf8)) { out.append($0) }
        #expect(out == [.line(long), .line(Array("7 OK".utf8))])
        if case .line(let short) = out.last { #expect(short.capacity < 1024, "capacity \(short.capacity)") }
        #expect(framer.bufferedByteCount == 0)
    }
}
