// Reading a connection, end to end: a client that shuts down its side after its requests (NIO
// reads the rest on EPOLLRDHUP and reports the end), a burst split at every byte, SIGTERM while
// connections sit idle, a slow reader pausing the reading, clients closing while idle with a
// pending context. Written for round `sessionread` (the session thread reading its own socket,
// dropped: Performance.md), where they failed a thread that read without the hand-over; they hold
// for any reader of the socket.

import Foundation
import KeelTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Reading a connection")
struct ConnectionReadingTests {
    private static let insert =
        #"INSERT {"entity":"Computer","values":{"id":"6f1c2a8e-3b7d-4e59-9a0c-1d2e3f405162","model":"half"}}"#

    @Test("A client that shuts down its side after its requests gets every reply, in order, then the end")
    func halfCloseAfterRequests() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(["syncMode": "off"])  // 10,000 saves: the order is the point, not the disk
        try keeld.start()
        // Small bursts and big ones (still being read when the end comes): every request answered
        // in order.
        for (round, count) in ([1, 3, 40, 400] + Array(repeating: 3000, count: 10)).enumerated() {
            let client = try keeld.connect()
            var text = ""
            for i in 0..<count {
                switch i % 3 {
                case 0: text += "i\(i) \(Self.insert)\n"
                case 1: text += "s\(i) SAVE\n"
                default: text += "p\(i) PING\n"
                }
            }
            try client.send(text)
            shutdown(client.fd, Int32(SHUT_WR))
            for i in 0..<count {
                let line = try client.line()
                let tag = ["i", "s", "p"][i % 3] + "\(i)"
                #expect(line.hasPrefix(tag + " OK"), "round \(round), reply \(i): \(line)")
                guard line.hasPrefix(tag + " OK") else { return }
            }
            #expect(try client.readLine() == nil, "round \(round): the connection stays open after the last reply")
        }
        // Every insert followed by a SAVE is stored; a burst's last insert without one (1, 40
        // and 400 requests end on an insert) is dropped with its connection.
        let client = try keeld.connect()
        #expect(try client.ok(#"n COUNT {"entity":"Computer"}"#) == ["count": 10147])
    }

    @Test("A last request without its LF before the client shuts down its side is answered, not dropped")
    func lastLineWithoutNewline() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        // `printf 'a PING'` — the request the end of input finishes; after others, and split.
        for (round, pieces) in [["a PING"], ["x PING\n", "a PI", "NG"], ["x PING\r\na PING\r"]].enumerated() {
            let client = try keeld.connect()
            for piece in pieces {
                try client.send(piece)
                usleep(20_000)
            }
            shutdown(client.fd, Int32(SHUT_WR))
            if pieces.count > 1 || pieces[0].hasPrefix("x") {
                #expect(try client.line().hasPrefix("x OK"), "round \(round)")
            }
            #expect(try client.line().hasPrefix("a OK"), "round \(round)")
            #expect(try client.readLine() == nil, "round \(round): the connection closes after the last reply")
        }
        // The unfinished last line of a client that does the work: an insert and its save.
        let client = try keeld.connect()
        try client.send("i \(Self.insert)\ns SAVE")
        shutdown(client.fd, Int32(SHUT_WR))
        #expect(try client.line().hasPrefix("i OK"))
        #expect(try client.line().hasPrefix("s OK"))
        let reader = try keeld.connect()
        #expect(try reader.ok(#"n COUNT {"entity":"Computer"}"#) == ["count": 1])
    }

    @Test("A burst split at every byte is the same requests, answered in order")
    func splitAtEveryByte() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let client = try keeld.connect()
        let burst = "a PING\r\nb HELLO {\"protocol\":1,\"client\":\"split\"}\nc CHANGES\nd NOPE\ne PING\n"
        let bytes = Array(burst.utf8)
        for split in 1..<bytes.count {
            try client.send(Array(bytes[..<split]))
            usleep(300)  // the first part is read alone
            try client.send(Array(bytes[split...]))
            for tag in ["a OK", "b OK {\"server\":\"keeld\"", "c OK ", "d ERR ", "e OK"] {
                let line = try client.line()
                #expect(line.hasPrefix(tag), "split at \(split): \(line)")
            }
        }
    }

    @Test("SIGTERM while connections sit idle: keeld exits 0 and the clients see the end")
    func sigtermWhileWaiting() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let clients = try (0..<4).map { _ in try keeld.connect() }
        for client in clients { #expect(try client.request("p PING").isOK) }
        usleep(50_000)
        let started = Date()
        #expect(keeld.stop(timeout: 20) == 0)
        #expect(Date().timeIntervalSince(started) < 10)
        for client in clients { #expect(try client.readLine() == nil) }
    }

    @Test("A client that sends without reading stops the daemon's reading far short of what it sent; its replies come in order")
    func slowReaderPausesReading() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(limits: ["maxBufferedBytes": 65536])
        try keeld.start()
        let client = try keeld.connect()
        client.setReceiveBuffer(4096)
        // 200,000 MODEL requests (1.6 MB, more than the socket's buffers and one read burst hold)
        // whose replies (~5 KB each) pass the limit after a dozen.
        let total = 200_000
        let fd = client.fd
        let sent = Counter()
        let sender = startSender(fd: fd, String(repeating: "m MODEL\n", count: 1000), times: total / 1000) { sent.add($0) }
        usleep(1_000_000)
        let first = sent.value
        usleep(500_000)
        // The daemon reads no more: what the client sent stays in the socket and the sender
        // blocks, far short of the whole.
        #expect(sent.value == first, "the daemon kept reading: \(first) then \(sent.value) bytes taken")
        #expect(first < total * 8 / 2, "the daemon took \(first) of \(total * 8) bytes")
        // (That reading resumes is BackPressureTests' `pipelineWithoutReading`: here what was read
        // before the pause is a thousand times what the replies' limit allows.)
        for i in 0..<1000 {
            let line = try client.line()
            guard line.hasPrefix("m OK {\"name\":\"Company\"") else {
                Issue.record("reply \(i): \(line.prefix(80))")
                return
            }
        }
        shutdown(fd, Int32(SHUT_RDWR))
        for _ in 0..<100 where !sender.isFinished { usleep(50_000) }
        #expect(try keeld.connect().request("p PING").isOK)
    }

    @Test("Clients that close while idle, with a pending context: sessions end, nothing saved, no descriptor left")
    func closeWhileWaiting() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let client = try keeld.connect()
        #expect(try client.request("p PING").isOK)
        let baseline = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(keeld.pid)/fd").count
        for round in 0..<12 {
            let peer = try keeld.connect()
            #expect(try peer.request("o CONTEXT.OPEN {\"name\":\"side\"}").isOK)
            #expect(try peer.request("i \(Self.insert)").isOK)
            if round % 2 == 0 {
                var option = linger(l_onoff: 1, l_linger: 0)
                setsockopt(peer.fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
            }
            usleep(20_000)  // the connection is idle
        }
        var now = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(keeld.pid)/fd").count
        for _ in 0..<300 where now > baseline {
            usleep(100_000)
            now = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(keeld.pid)/fd").count
        }
        #expect(now == baseline, "keeld had \(baseline) descriptors open before and \(now) after")
        #expect(try client.ok(#"n COUNT {"entity":"Computer"}"#) == ["count": 0])
    }
}

/// Bytes counted across threads.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add(_ n: Int) { lock.withLock { count += n } }
    var value: Int { lock.withLock { count } }
}
