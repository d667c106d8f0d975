// Who is at the other end of a connection (spec/protocol.md, "Security"): the kernel's answer
// to getsockopt(SO_PEERCRED), read through NIO's `SocketOptionProvider` on the accepted
// channel — the credentials of the process that connected, which it cannot forge.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NIOCore

struct PeerCredentials: Sendable, Equatable, CustomStringConvertible {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32

    var description: String { "uid \(uid) pid \(pid)" }

    /// The peer of an accepted Unix-socket channel. Call on the channel's event loop (the
    /// future is then already complete).
    static func of(_ channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(PeerCredentialsUnavailable())
        }
        let future: EventLoopFuture<UCred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return future.map { PeerCredentials(pid: $0.pid, uid: $0.uid, gid: $0.gid) }
    }
}

struct PeerCredentialsUnavailable: Error {}

/// `struct ucred` of <sys/socket.h> (Glibc exports it only under _GNU_SOURCE): what
/// SO_PEERCRED fills, field for field.
struct UCred: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
