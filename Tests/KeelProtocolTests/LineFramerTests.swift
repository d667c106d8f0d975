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

    @Test("a line of exactly the limit passes, also with a CR; one byte more does not")
    func boundary() {
        let exact = Array(repeating: UInt8(ascii: "a"), count: 16)
        #expect(Self.frames([exact + [10]]) == [.line(exact)])
        #expect(Self.frames([exact + [13, 10]]) == [.line(exact)])
        if case .tooLong = Self.frames([exact + [UInt8(ascii: "a"), 10]]).first {} else { Issue.record("17 bytes passed a limit of 16") }
    }
}
