// The listening channel's pause after an accept that failed without taking anything from the
// backlog (ENOBUFS, ENOMEM, or descriptors with no spare): AcceptFailures.pauseAccepting, on a
// real NIO server channel over a Unix socket. While paused, a connection waiting in the backlog
// is not accepted (the socket is out of the event loop's readable set — the spin it prevents
// would accept it); once the pause ends it is.
//
// No check here depends on how soon the test's task runs again: what must hold while paused is
// checked under a pause of an hour (the full suite on two cores can hold a task back for
// seconds), and that a pause ends on its own under a short one, waited for without a bound
// tighter than 30 s. The waits sleep the task rather than block a thread of the shared pool.

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

        // While paused: reading is off and a waiting connection stays in the backlog.
        try await server.eventLoop.submit { AcceptFailures.pauseAccepting(server, for: .hours(1)) }.get()
        #expect(try await server.getOption(.autoRead).get() == false)
        let first = try Self.connect(path)
        defer { close(first) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(accepted.withLock { $0 } == 0, "accepted while paused")
        // A pause asked for while one runs changes nothing: it neither ends nor extends it.
        try await server.eventLoop.submit { AcceptFailures.pauseAccepting(server, for: .milliseconds(1)) }.get()
        try await Task.sleep(for: .milliseconds(300))
        #expect(accepted.withLock { $0 } == 0, "a second pause ended the first")
        #expect(try await server.getOption(.autoRead).get() == false)
        // Reading on again (what the pause's end does) accepts the waiting connection.
        try await server.setOption(.autoRead, value: true).get()
        try await Self.wait(until: 1, accepted)

        // A short pause ends on its own: reading is on again and a connection made meanwhile is
        // accepted.
        try await server.eventLoop.submit { AcceptFailures.pauseAccepting(server, for: .milliseconds(100)) }.get()
        let second = try Self.connect(path)
        defer { close(second) }
        try await Self.wait(until: 2, accepted)
        #expect(try await server.getOption(.autoRead).get() == true)

        // A long pause asked for while a short one runs does not extend it.
        try await server.eventLoop.submit {
            AcceptFailures.pauseAccepting(server, for: .milliseconds(100))
            AcceptFailures.pauseAccepting(server, for: .hours(1))
        }.get()
        let third = try Self.connect(path)
        defer { close(third) }
        try await Self.wait(until: 3, accepted)

        try await server.close()
        try await group.shutdownGracefully()
    }

    @Test("ENOBUFS from accept: the listening channel pauses (the waiting connection is not accepted, nothing spins), then accepts", arguments: [true, false])
    func kernelShortOfMemory(checkWhilePaused: Bool) async throws {
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
        // Checked while paused: a pause of an hour. Checked that it ends: one of 100 ms.
        let retryInterval: TimeAmount = checkWhilePaused ? .hours(1) : .milliseconds(100)
        let server = try await ServerBootstrap(group: group)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(AcceptFailures.handlers(server: context, retryInterval: retryInterval))
                }
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
        let client = try Self.connect(path)
        defer { close(client) }
        if checkWhilePaused {
            #expect(try await server.getOption(.autoRead).get() == false)
            try await Task.sleep(for: .milliseconds(300))
            #expect(accepted.withLock { $0 } == 0, "accepted while paused")
        } else {
            try await Self.wait(until: 1, accepted)
            #expect(try await server.getOption(.autoRead).get() == true)
        }
        #expect(context.refusedForDescriptorsCount == 0)
        try await server.close()
        try await group.shutdownGracefully()
    }

    @Test("A descriptor keeld can do without is opened under the spare's lock: a refusal begun meanwhile waits for it (so cannot lose the spare's slot to it), then answers the waiting connection and takes the spare back")
    func spareHeldExcludesRefusal() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keel-accept-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sock").path
        let listener = try Self.listen(path)
        defer { close(listener) }
        let client = try Self.connect(path)
        defer { close(client) }
        let reserve = DescriptorReserve()
        defer { reserve.closeSpare() }
        final class Answered: Sendable { let count = Mutex<Int?>(nil) }
        let answered = Answered()
        let opened = reserve.whileSpareHeld { () -> Int32? in
            Thread.detachNewThread {
                let count = reserve.refuseWaiting(listening: listener, line: Array("* ERR BUSY {}\n".utf8))
                answered.count.withLock { $0 = count }
            }
            // The refusal (closing the spare, accepting into its slot) cannot run while this does.
            usleep(200_000)
            #expect(answered.count.withLock { $0 } == nil, "a refusal ran while a descriptor was being opened")
            return 7
        }
        #expect(opened == 7)
        let deadline = ContinuousClock.now + .seconds(30)
        while answered.count.withLock({ $0 }) == nil, ContinuousClock.now < deadline { usleep(10_000) }
        #expect(answered.count.withLock { $0 } == 1)
        var reply = [UInt8](repeating: 0, count: 64)
        let got = reply.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
        #expect(got > 0 && String(decoding: reply[0..<got], as: UTF8.self) == "* ERR BUSY {}\n")
        // The spare is held again: the next opening runs.
        #expect(reserve.whileSpareHeld { Int32(1) } == 1)
    }

    /// A non-blocking listening Unix socket at `path` (accept gives EAGAIN when nobody waits).
    private static func listen(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 16) == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        return fd
    }

    /// Waits (30 s at most) until `accepted` reaches `count`, and expects it to be exactly that.
    private static func wait(until count: Int, _ accepted: borrowing Mutex<Int>) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while accepted.withLock({ $0 }) < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(accepted.withLock { $0 } == count)
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
