// SocketWriter (Wire/SocketWriter.swift), the direct socket writes of client and daemon, on a
// socket pair: its descriptor outlives the one it copied, a full socket takes part of a write
// and says how much, and a closed peer makes it take nothing (no SIGPIPE, no block). OutputWire,
// the one-writer-at-a-time rule over it, on its own.

import Glibc
import NIOCore
import NIOEmbedded
import Testing

import KeelProtocol

@Suite("SocketWriter")
struct SocketWriterTests {
    /// A connected, non-blocking Unix stream pair with a small send buffer on the first end.
    static func pair() throws -> (CInt, CInt) {
        var fds: [CInt] = [0, 0]
        let result = socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue), 0, &fds)
        try #require(result == 0)
        var size: CInt = 4096
        setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<CInt>.size))
        return (fds[0], fds[1])
    }

    /// Everything readable now on `fd`.
    static func drain(_ fd: CInt) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, CInt(MSG_DONTWAIT)) }
            guard n > 0 else { return bytes }
            bytes += chunk[0..<n]
        }
    }

    @Test("writes through its own descriptor, which outlives the copied one")
    func ownDescriptor() throws {
        let (a, b) = try Self.pair()
        defer { close(b) }
        let writer = try #require(SocketWriter(duplicating: a))
        close(a)
        let line = Array("t OK\n".utf8)
        #expect(line.withUnsafeBytes { writer.send($0) } == line.count)
        #expect(Self.drain(b) == line)
    }

    @Test("a full socket takes part of a write; what it took arrives, in order")
    func partialWrite() throws {
        let (a, b) = try Self.pair()
        defer { close(a); close(b) }
        let writer = try #require(SocketWriter(duplicating: a))
        let bytes = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) }
        var buffer = ByteBufferAllocator().buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        let sent = writer.send(buffer)
        #expect(sent > 0 && sent < bytes.count, "sent \(sent) of \(bytes.count)")
        #expect(Self.drain(b) == Array(bytes[0..<sent]))
        // Room again: the rest goes on from where it stopped.
        buffer.moveReaderIndex(forwardBy: sent)
        let more = writer.send(buffer)
        #expect(more > 0)
        #expect(Self.drain(b) == Array(bytes[sent..<(sent + more)]))
    }

    @Test("a closed peer takes nothing, without SIGPIPE")
    func closedPeer() throws {
        let (a, b) = try Self.pair()
        defer { close(a) }
        let writer = try #require(SocketWriter(duplicating: a))
        close(b)
        let line = Array("t OK\n".utf8)
        #expect(line.withUnsafeBytes { writer.send($0) } == 0)
    }

    @Test("OutputWire: one writer at a time; what a direct send left goes to NIO, and nothing is taken until NIO has written it")
    func wireTurns() throws {
        let (a, b) = try Self.pair()
        defer { close(a); close(b) }
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        let writer = try #require(SocketWriter(duplicating: a))
        var wire = OutputWire(socket: writer)
        #expect(wire.take(channel: channel) == nil, "nothing queued")
        wire.outgoing.writeString("first\n")
        guard case .direct(var first, _)? = wire.take(channel: channel) else {
            Issue.record("queued bytes with a socket are a direct send")
            return
        }
        #expect(String(buffer: first) == "first\n" && wire.outgoing.readableBytes == 0)
        // A second writer finds the wire busy and leaves its bytes queued.
        wire.outgoing.writeString("second\n")
        #expect(wire.take(channel: channel) == nil && !wire.isIdle)
        // The send took two bytes: the rest is NIO's, in order, before anything queued.
        first.moveReaderIndex(forwardBy: 2)
        guard case .nio(let rest, _)? = wire.sent(leaving: first, channel: channel) else {
            Issue.record("what the socket did not take goes to NIO")
            return
        }
        #expect(String(buffer: rest) == "rst\n")
        #expect(wire.take(channel: channel) == nil, "no direct send overtakes bytes NIO holds")
        #expect(String(buffer: wire.outgoing) == "second\n")
        wire.nioWritten()
        guard case .direct(let second, _)? = wire.take(channel: channel) else {
            Issue.record("after NIO wrote, the queued bytes are a direct send")
            return
        }
        #expect(String(buffer: second) == "second\n")
        var all = second
        all.moveReaderIndex(forwardBy: all.readableBytes)
        #expect(wire.sent(leaving: all, channel: channel) == nil && wire.isIdle)
        // Without a socket (the connection ended) every write is NIO's.
        wire.socket = nil
        wire.outgoing.writeString("third\n")
        guard case .nio(let third, _)? = wire.take(channel: channel) else {
            Issue.record("without a socket, queued bytes go to NIO")
            return
        }
        #expect(String(buffer: third) == "third\n")
        #expect(wire.take(channel: nil) == nil)
    }

    @Test("OutputWire: after a burst is taken, the next starts with room for as much (up to reservedBytes), and its bytes are its own")
    func nextBurstRoom() throws {
        let (a, b) = try Self.pair()
        defer { close(a); close(b) }
        let writer = try #require(SocketWriter(duplicating: a))
        var wire = OutputWire(socket: writer)
        for size in [1, 700, 5000, OutputWire.reservedBytes, 3 * OutputWire.reservedBytes] {
            let burst = String(repeating: "x", count: size - 1) + "\n"
            wire.outgoing.writeString(burst)
            guard case .direct(let taken, _)? = wire.take(channel: nil) else {
                Issue.record("a burst of \(size) bytes is a direct send")
                return
            }
            #expect(String(buffer: taken) == burst)
            #expect(wire.outgoing.readableBytes == 0)
            #expect(wire.outgoing.capacity >= min(size, OutputWire.reservedBytes))
            // Writing the next burst leaves the one taken as it was.
            wire.outgoing.writeString("next\n")
            #expect(String(buffer: taken) == burst && String(buffer: wire.outgoing) == "next\n")
            wire.outgoing.clear()
            var all = taken
            all.moveReaderIndex(forwardBy: all.readableBytes)
            #expect(wire.sent(leaving: all, channel: nil) == nil && wire.isIdle)
        }
    }
}
