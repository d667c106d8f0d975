// The reply path (Docs/Concurrency.md, "The reply path"): a connection's session thread writes its
// replies straight to the socket, through its own descriptor, when nothing of the connection is
// being written; what the socket does not take goes through NIO, and everything after it (the
// thread's replies and the event loop's alike) waits behind it. These tests make the socket
// full so that every branch runs: replies bigger than the client's socket buffer, a loop reply
// that must queue behind a thread reply NIO still holds, and peers that vanish mid-write.

import Foundation
import KeelModel
import KeelProtocol
import KeelTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Reply path")
struct ReplyPathTests {
    /// A Feedback whose comment makes its GET reply far bigger than a socket buffer.
    static let commentLength = 300_000
    static let get = #"GET {"$id":"Feedback/1"}"#

    private static func startWithBigObject() throws -> (Keeld, LineClient) {
        let keeld = try Keeld()
        try keeld.configure(["syncMode": "off"])
        try keeld.start()
        let client = try keeld.connect()
        let comment = String(repeating: "n", count: commentLength)
        let inserted = try client.ok(
            #"b BATCH.INSERT {"entity":"Feedback","objects":[{"bookUUID":"00000000-0000-0000-0000-000000000001","comment":"\#(comment)"}]}"#)
        #expect(inserted?["first"] == "Feedback/1")
        return (keeld, client)
    }

    /// The comment carried by a GET reply line of `tag`, which must be an OK.
    private static func comment(in line: String, tag: String) throws -> String? {
        let reply = try Reply.parse(Array(line.utf8))
        guard case .ok(let t, let payload) = reply, t == tag else { return nil }
        return payload?["comment"]?.stringValue
    }

    @Test("Replies bigger than the socket buffer, to a client that reads slowly, arrive whole and in request order")
    func bigRepliesToSlowReader() throws {
        let (keeld, other) = try Self.startWithBigObject()
        defer { keeld.cleanUp() }
        let client = try keeld.connect()
        client.setReceiveBuffer(4096)
        // Thread replies (GET) and loop-answerable ones (PING, MODEL) pipelined in one write:
        // once a GET is in flight the rest go through the thread too, behind it.
        let rounds = 12
        var text = ""
        for i in 0..<rounds {
            text += "g\(i) " + Self.get + "\n" + "p\(i) PING\n"
            if i % 4 == 0 { text += "m\(i) MODEL\n" }
        }
        try client.send(text)
        for i in 0..<rounds {
            // Slow: the daemon finds the socket full and leaves the rest to NIO.
            if i < 3 { usleep(100_000) }
            let get = try client.line()
            #expect(try Self.comment(in: get, tag: "g\(i)")?.count == Self.commentLength, "reply \(i): \(get.prefix(80))")
            #expect(try client.line() == "p\(i) OK")
            if i % 4 == 0 { #expect(try client.line().hasPrefix("m\(i) OK {\"name\":\"Company\"")) }
        }
        #expect(try client.request("z PING").isOK)
        #expect(try other.request("o PING").isOK)
    }

    @Test("A reply the event loop answers waits behind a thread reply that NIO still holds")
    func loopReplyQueuesBehindThreadReply() throws {
        let (keeld, other) = try Self.startWithBigObject()
        defer { keeld.cleanUp() }
        let client = try keeld.connect()
        client.setReceiveBuffer(4096)
        for round in 0..<5 {
            // The GET's reply fills the socket; the thread leaves the rest to NIO and is done, so
            // the PING, sent after, finds nothing in flight and is answered on the loop.
            try client.send("g\(round) " + Self.get + "\n")
            usleep(200_000)
            try client.send("p\(round) PING\nm\(round) MODEL\n")
            usleep(50_000)
            let get = try client.line()
            #expect(try Self.comment(in: get, tag: "g\(round)")?.count == Self.commentLength, "round \(round): \(get.prefix(80))")
            #expect(try client.line() == "p\(round) OK")
            #expect(try client.line().hasPrefix("m\(round) OK {\"name\":\"Company\""))
        }
        #expect(try other.request("o PING").isOK)
    }

    @Test("QUIT answered by the session thread: a request sent after it is never answered, even one the loop reads before it hears of the QUIT")
    func quitOnThreadThenLoopRequest() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(["syncMode": "off"])
        try keeld.start()
        let setup = try keeld.connect()
        try setup.ok(#"b BATCH.INSERT {"entity":"Company","objects":[{"name":"A"}]}"#)
        for round in 0..<40 {
            let client = try keeld.connect()
            // The GET puts the QUIT on the thread; the PING, sent once QUIT's OK is read, can
            // reach the loop before the thread's word that the connection is closing.
            try client.send(#"g GET {"$id":"Company/\#(round % 2 + 1)"}"# + "\nq QUIT\n")
            #expect(try client.line().hasPrefix("g "))
            #expect(try client.line() == "q OK")
            try? client.send("p PING\n")
            let after = try? client.readLine()
            #expect(after == nil, "round \(round): \(after ?? "")")
        }
        #expect(try setup.request("p PING").isOK)
    }

    @Test("Peers that close while the session thread writes to them: no crash, no descriptor left open")
    func peerClosesMidWrite() throws {
        let (keeld, client) = try Self.startWithBigObject()
        defer { keeld.cleanUp() }
        #expect(try client.request("p PING").isOK)
        let baseline = try Self.openDescriptors(pid: keeld.pid)
        for round in 0..<16 {
            let peer = try keeld.connect()
            peer.setReceiveBuffer(4096)
            var text = ""
            for i in 0..<8 { text += "g\(i) " + Self.get + "\n" }
            try peer.send(text)
            if round % 2 == 0 {
                // Half of them reset the connection (SO_LINGER 0) instead of closing it.
                var option = linger(l_onoff: 1, l_linger: 0)
                setsockopt(peer.fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
            }
            usleep(UInt32(round % 4) * 20_000)
            _ = try? peer.readLine()
            // `peer` closes here, with replies still being written.
        }
        // Each connection's descriptors (NIO's and the thread's own) go once it is closed.
        var now = try Self.openDescriptors(pid: keeld.pid)
        for _ in 0..<300 where now > baseline {
            usleep(100_000)
            now = try Self.openDescriptors(pid: keeld.pid)
        }
        #expect(now == baseline, "keeld had \(baseline) descriptors open before and \(now) after")
        #expect(try client.request("p2 PING").isOK)
    }

    private static func openDescriptors(pid: Int32) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }
}
