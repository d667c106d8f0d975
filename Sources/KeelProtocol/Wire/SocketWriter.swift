// Writing lines straight to a connection's socket from whichever thread has them, without
// waking the NIO event loop that owns the channel: the client's request lines
// (KeelClient ConnectionCore+Writing.swift) and the daemon's replies (KeelServer ReplyWriter.swift)
// alike. `package`, not `public`: the client's and the daemon's plumbing, not KeelProtocol's API.
// The owner decides when: one writer at a time, and never while NIO still holds earlier bytes of
// the same connection, so that bytes reach the socket in order.
//
// This object keeps a second descriptor of the socket (`dup`), closed when the last holder lets
// go, so a write that is under way when NIO closes its descriptor can never reach another file
// that reused the number. A send never blocks and never raises SIGPIPE: what the socket does
// not take at once is left to the owner, which hands it to NIO (NIO waits for the socket to
// become writable, and reports a broken connection by closing the channel).

import Glibc
package import NIOCore

package final class SocketWriter: Sendable {
    private let descriptor: CInt

    /// Keeps its own descriptor of `socket` (the caller's stays the caller's); nil when none
    /// can be made.
    package init?(duplicating socket: CInt) {
        let copy = fcntl(socket, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        descriptor = copy
    }

    deinit {
        close(descriptor)
    }

    /// Writes as much of `bytes` as the socket takes now; returns how many bytes it took (fewer
    /// than all when it is full or the connection is broken: the rest goes through NIO).
    package func send(_ bytes: ByteBuffer) -> Int {
        bytes.withUnsafeReadableBytes { send($0) }
    }

    /// Writes as much of `raw` as the socket takes now; returns how many bytes it took.
    package func send(_ raw: UnsafeRawBufferPointer) -> Int {
        guard let base = raw.baseAddress else { return 0 }
        var sent = 0
        while sent < raw.count {
            let written = Glibc.send(descriptor, base + sent, raw.count - sent, CInt(MSG_DONTWAIT | MSG_NOSIGNAL))
            if written > 0 {
                sent += written
            } else if written < 0, errno == EINTR {
                continue
            } else {
                break
            }
        }
        return sent
    }

    /// A connected, non-blocking stream socket to the Unix socket at `path`. Throws what
    /// refused it (no such socket, nobody listening, a full backlog, a path too long).
    package static func connect(unixSocketPath path: String) throws -> CInt {
        let address = try SocketAddress(unixDomainSocketPath: path)
        let socket = Glibc.socket(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue) | CInt(SOCK_NONBLOCK.rawValue), 0)
        guard socket >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        let result = address.withSockAddr { Glibc.connect(socket, $0, socklen_t($1)) }
        guard result == 0 else {
            let code = errno
            close(socket)
            throw IOError(errnoCode: code, reason: "connect")
        }
        return socket
    }
}

/// The bytes of one connection waiting to be written, and who writes them: one writer at a time,
/// so bytes reach the socket in the order they were queued. Its owner keeps it under its lock (the
/// client's ConnectionCore, the daemon's ReplyWriter), takes a `Write` there and does it outside
/// the lock: a direct send from the calling thread, or NIO for what a send left (the wire stays
/// with NIO until the owner reports it written, so no direct send overtakes it).
package struct OutputWire: Sendable {
    package enum Turn: Sendable {
        case idle
        /// A thread is in `SocketWriter.send` with bytes taken from `outgoing`.
        case direct
        /// NIO holds bytes the socket did not take at once, and writes them when it can.
        case nio
    }

    /// One writer's turn at the bytes.
    package enum Write: Sendable {
        case direct(ByteBuffer, SocketWriter)
        case nio(ByteBuffer, any Channel)
    }

    /// Bytes queued and not yet taken by a writer.
    package var outgoing = ByteBuffer()
    /// Who writes now.
    package private(set) var turn = Turn.idle
    /// The socket for direct writes; nil: every write goes through NIO. Set to nil when the
    /// connection ends (a send under way keeps the descriptor until it returns).
    package var socket: SocketWriter?

    package init(socket: SocketWriter? = nil) {
        self.socket = socket
    }

    package var isIdle: Bool {
        if case .idle = turn { true } else { false }
    }

    /// Everything queued, for one writer: sent directly when there is a socket, else through
    /// `channel`. Nil when another writer is busy, nothing is queued, or there is no way out.
    package mutating func take(channel: (any Channel)?) -> Write? {
        guard isIdle, outgoing.readableBytes > 0 else { return nil }
        let bytes = outgoing
        if let socket {
            outgoing = Self.nextBuffer(after: bytes)
            turn = .direct
            return .direct(bytes, socket)
        }
        guard let channel else { return nil }
        outgoing = Self.nextBuffer(after: bytes)
        turn = .nio
        return .nio(bytes, channel)
    }

    /// The most room a new `outgoing` starts with (see `nextBuffer`).
    package static let reservedBytes = 16 * 1024

    /// The buffer for the next burst: room for as much as the burst just taken (up to
    /// `reservedBytes`), so that it fills without growing a doubling at a time — a burst of
    /// requests or replies is usually about as large as the one before it.
    private static func nextBuffer(after bytes: ByteBuffer) -> ByteBuffer {
        ByteBufferAllocator().buffer(capacity: min(bytes.writerIndex, reservedBytes))
    }

    /// A direct send returned leaving `rest` (read index past what the socket took): NIO's turn
    /// for it through `channel`, or nil when it took everything or there is no channel (the rest
    /// is dropped). The wire is idle unless NIO's turn is returned.
    package mutating func sent(leaving rest: ByteBuffer, channel: (any Channel)?) -> Write? {
        turn = .idle
        guard rest.readableBytes > 0, let channel else { return nil }
        turn = .nio
        return .nio(rest, channel)
    }

    /// NIO wrote (or, the channel failing, dropped) what it was given.
    package mutating func nioWritten() {
        turn = .idle
    }
}
