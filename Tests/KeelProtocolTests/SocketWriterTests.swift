// SocketWriter (Wire/SocketWriter.swift), the direct socket writes of client and daemon, on a
// socket pair: its descriptor outlives the one it copied, a full socket takes part of a write
// and says how much, and a closed peer makes it take nothing (no SIGPIPE, no block).

import Glibc
import NIOCore
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
}
