// The listening channel's pause after an accept that failed without taking anything from the
// backlog (ENOBUFS, ENOMEM, or descriptors with no spare): AcceptFailures.pauseAccepting, on a
// real NIO server channel over a Unix socket. While paused, a connection waiting in the backlog
// is not accepted (the socket is out of the event loop's readable set — the spin it prevents
// would accept it); once the pause ends it is.

import Foundation
import KeelModel
import KeelProtocol
import KeelTestSupport
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import KeelServer

#if canImport(Glibc)
import Glibc
#endif

@Suite("Accepting after a failed accept")
struct AcceptPauseTests {
    @Test("A paused listening channel leaves a waiting connection in the backlog, then accepts it when the pause ends")
    func pauseThenAccept() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keel-accept-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sock").path
        let accepted = Mutex(0)
        let server = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                accepted.withLock { $0 += 1 }
                return channel.close()
            }
            .bind(unixDomainSocketPath: path).get()

        // The pause, as AcceptFailureLog starts it after a failed accept: long enough that the
        // check below never races it, however loaded the machine.
        try await server.eventLoop.submit { AcceptFailures.pauseAccepting(server, for: .seconds(3)) }.get()
        #expect(try await server.getOption(.autoRead).get() == false)
        let client = try Self.connect(path)
        defer { close(client) }
        usleep(300_000)
        #expect(accepted.withLock { $0 } == 0, "accepted while paused")

        // The pause ends on its own: reading is on again and the waiting connection is accepted.
        let deadline = Date().addingTimeInterval(30)
        while accepted.withLock({ $0 }) == 0, Date() < deadline { usleep(20_000) }
        #expect(accepted.withLock { $0 } == 1)
        #expect(try await server.getOption(.autoRead).get() == true)

        // A pause asked for while one runs changes nothing (the first one's end turns reading on).
        try await server.eventLoop.submit {
            AcceptFailures.pauseAccepting(server, for: .milliseconds(100))
            AcceptFailures.pauseAccepting(server, for: .seconds(3600))
        }.get()
        let second = try Self.connect(path)
        defer { close(second) }
        let again = Date().addingTimeInterval(30)
        while accepted.withLock({ $0 }) < 2, Date() < again { usleep(20_000) }
        #expect(accepted.withLock { $0 } == 2)

        try await server.close()
        try await group.shutdownGracefully()
    }

    @Test("ENOBUFS from accept: the listening channel pauses (the waiting connection is not accepted, nothing spins), then accepts")
    func kernelShortOfMemory() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keel-accept-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try ModelLoader.load(path: Keeld.model)
        let store = try ObjectStore.open(directory: folder.appendingPathComponent("data").path, model: model)
        defer { try? store.close() }
        let context = ServerContext(
            configuration: ServerConfiguration(), model: model, store: store, logger: Logger(label: "test"), daemonUID: getuid())
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let path = folder.appendingPathComponent("s.sock").path
        let accepted = Mutex(0)
        let server = try await ServerBootstrap(group: group)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandlers(AcceptFailures.handlers(server: context, retryInterval: .seconds(3))) }
            }
            .childChannelInitializer { channel in
                accepted.withLock { $0 += 1 }
                return channel.close()
            }
            .bind(unixDomainSocketPath: path).get()
        // What NIO's ServerSocketChannel fires when accept(2) fails with ENOBUFS.
        try await server.eventLoop.submit {
            server.pipeline.fireErrorCaught(IOError(errnoCode: ENOBUFS, reason: "accept(descriptor:addr:len:)"))
        }.get()
        #expect(try await server.getOption(.autoRead).get() == false)
        let client = try Self.connect(path)
        defer { close(client) }
        usleep(300_000)
        #expect(accepted.withLock { $0 } == 0, "accepted while paused")
        let deadline = Date().addingTimeInterval(30)
        while accepted.withLock({ $0 }) == 0, Date() < deadline { usleep(20_000) }
        #expect(accepted.withLock { $0 } == 1)
        #expect(try await server.getOption(.autoRead).get() == true)
        #expect(context.refusedForDescriptorsCount == 0)
        try await server.close()
        try await group.shutdownGracefully()
    }

    /// A blocking connect to the Unix socket at `path` (it lands in the backlog whether or not
    /// the server accepts).
    private static func connect(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        return fd
    }
}
