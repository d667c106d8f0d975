// Accepting when accept(2) fails: out of file descriptors (EMFILE, ENFILE) or kernel memory
// (ENOBUFS, ENOMEM). The listening socket stays readable while connections wait in its backlog,
// so the event loop would call accept again at once, fail again, and spin a core.
//
// NIO's `AcceptBackoffHandler` (which ServerBootstrap's future-based `bind` does not add by
// itself) holds the next accept back for `retryInterval` after a failure — but only once an
// accept of that read has succeeded: NIO's ServerSocketChannel keeps its read pending (and the
// socket registered for readability) after a read whose first accept failed, so the loop spins
// on regardless. Hence the spare descriptor (libuv's and nginx's remedy): keeld holds one
// descriptor (/dev/null) in reserve; when accept fails for want of descriptors, it closes the
// spare and, on the event loop of the listening socket, there and then, accepts every connection
// waiting in the backlog, writes each the line `* ERR BUSY {"message":"keeld is out of file
// descriptors …"}` and closes it, then takes the spare again. The backlog is then empty, so the
// socket is not readable until a new client connects: nothing spins, and no client waits
// unanswered for descriptors that may never come. (The backoff still applies after a read that
// accepted some connections before failing.)
//
// The slot the spare frees must go to `accept`, not to another thread of keeld: between the
// spare's `close` and the `accept`, any descriptor opened elsewhere takes the lowest free number —
// the spare's — and then the accept fails too, nothing is answered, and the spare cannot be taken
// back while the other descriptor stays open. A connection's second descriptor (its session
// thread writes replies through a `dup` of the socket, SocketWriter.swift) did exactly that: made
// on the new connection's event loop while the listening loop was refusing, it kept the slot for
// the connection's life, and the clients in the backlog waited unanswered (the flaky
// `DescriptorExhaustionTests` of 2026-12-07, traced by listing /proc/PID/fd at the failure). So
// descriptors keeld can do without are opened through `DescriptorReserve.whileSpareHeld`: under
// the reserve's lock (never inside a refusal) and only while the spare is held (at the limit, a
// connection writes through NIO instead). Descriptors keeld needs (store files, a directory's
// fsync) may still take the slot for a moment; the refusal then answers nothing, the listener
// pauses, and the next try takes the spare again once that descriptor is closed.
//
// When accept fails otherwise (ENOBUFS, ENOMEM: the kernel is short of memory), or for want of
// descriptors with no connection answered (the spare could not be taken), the connections stay in
// the backlog and the socket stays readable. Then the listening channel stops reading for
// `retryInterval` (`pauseAccepting`: autoRead off, which takes the socket out of the event loop's
// readable set, then on again, which puts it back and reads): one failed accept per interval, not
// a spinning core.
//
// `AcceptFailureLog` logs a spell of failures once, when it begins (with the open-file limit and
// the connections served), then at most once a minute while it lasts, and once when accepting
// works again — not once per failed accept.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import KeelModel
import KeelProtocol
import NIOCore
import Synchronization

enum AcceptFailures {
    /// How long the daemon waits after a failed accept (one that followed successful ones in the
    /// same read) before it tries again.
    static let retryInterval = TimeAmount.milliseconds(250)
    /// While accepting keeps failing, how often the failures are logged again.
    static let reminderInterval = TimeAmount.seconds(60)

    /// The handlers of the listening channel, in pipeline order.
    static func handlers(server: ServerContext, retryInterval: TimeAmount = retryInterval) -> [any ChannelHandler] {
        [
            AcceptBackoffHandler(shouldForwardIOErrorCaught: true) { _ in retryInterval },
            AcceptFailureLog(server: server, retryInterval: retryInterval),
        ]
    }

    /// Stops `channel` (a listening channel) reading for `interval`: its socket leaves the event
    /// loop's readable set (autoRead off), so connections waiting in the backlog wake nothing;
    /// then autoRead is on again, which registers it and reads (accepts) at once. Call on the
    /// channel's event loop.
    static func pauseAccepting(_ channel: any Channel, for interval: TimeAmount) {
        guard let options = channel.syncOptions, (try? options.getOption(.autoRead)) == true else { return }
        guard (try? options.setOption(.autoRead, value: false)) != nil else { return }
        channel.eventLoop.scheduleTask(in: interval) {
            guard channel.isActive else { return }
            try? channel.syncOptions?.setOption(.autoRead, value: true)
        }
    }

    /// Whether an accept failed for want of descriptors (the spare helps with these).
    static func isOutOfDescriptors(_ error: IOError) -> Bool {
        error.errnoCode == EMFILE || error.errnoCode == ENFILE
    }

    /// The soft limit on open files (RLIMIT_NOFILE), nil when unknown or unlimited.
    static var openFileLimit: UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return UInt64(limit.rlim_cur)
    }

    /// Open files a connection holds: its socket, and the descriptor its thread writes through.
    static let filesPerConnection: UInt64 = 2
    /// Open files besides connections: store files and logs, the lock, the listening socket, the
    /// event loops' epoll and wake descriptors, standard streams, with room to spare.
    static let otherFiles: UInt64 = 128

    /// At start: makes room for `maxConnections` under the open-file limit. A soft limit below
    /// what they need is raised toward the hard limit (as far as needed, no further); when even
    /// the hard limit is too low, a warning says so — connections beyond what fits are then
    /// refused for want of descriptors (`* ERR BUSY`, through the spare) instead of at the limit.
    static func makeRoomForConnections(_ maxConnections: Int, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return }
        let needed = UInt64(maxConnections) * filesPerConnection + otherFiles
        let soft = UInt64(limit.rlim_cur)
        guard soft < needed else { return }
        let hard = limit.rlim_max == rlim_t.max ? UInt64.max : UInt64(limit.rlim_max)
        let raised = min(hard, needed)
        if raised > soft {
            limit.rlim_cur = rlim_t(raised)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
                logger.info(
                    "raised the open-file limit for limits.maxConnections",
                    metadata: ["openFileLimit.before": "\(soft)", "openFileLimit": "\(raised)", "limits.maxConnections": "\(maxConnections)"])
                if raised >= needed { return }
            }
        }
        let now = openFileLimit ?? soft
        logger.warning(
            "the open-file limit is below what limits.maxConnections needs: connections beyond about \(now > otherFiles ? (now - otherFiles) / filesPerConnection : 0) wait until others close; raise it (ulimit -n, LimitNOFILE=) or lower limits.maxConnections",
            metadata: ["openFileLimit": "\(now)", "openFileLimit.needed": "\(needed)", "limits.maxConnections": "\(maxConnections)"])
    }
}

/// The spare descriptor, given up for a moment to answer the connections waiting in the
/// backlog when descriptors ran out.
final class DescriptorReserve: Sendable {
    /// The spare descriptor, -1 when not held.
    private let spare = Mutex<Int32>(-1)

    init() { take() }

    /// Takes the spare descriptor when it is not held; true when it is held afterwards.
    @discardableResult
    func take() -> Bool {
        spare.withLock { spare in
            if spare < 0 { spare = open("/dev/null", O_RDONLY | O_CLOEXEC) }
            return spare >= 0
        }
    }

    /// Runs `opening` — which opens a descriptor keeld can do without — under the reserve's lock,
    /// and only while the spare is held (taking it first if it is not): so it never takes the
    /// slot a refusal has just freed for a waiting connection. nil, without running `opening`,
    /// when the spare cannot be held (descriptors have run out).
    func whileSpareHeld<Opened: Sendable>(_ opening: () -> Opened?) -> Opened? {
        spare.withLock { spare -> Opened? in
            if spare < 0 { spare = open("/dev/null", O_RDONLY | O_CLOEXEC) }
            guard spare >= 0 else { return nil }
            return opening()
        }
    }

    /// Closes the spare, then accepts each connection waiting on `listening` (at most `limit`),
    /// writes it `line` and closes it; then takes the spare again. Returns how many were
    /// answered (0 when the spare was not held, or another thread took its descriptor first).
    /// Call on the listening socket's event loop.
    func refuseWaiting(listening: Int32, line: [UInt8], limit: Int = 4096) -> Int {
        spare.withLock { spare in
            if spare < 0 { spare = open("/dev/null", O_RDONLY | O_CLOEXEC) }
            guard spare >= 0 else { return 0 }
            close(spare)
            spare = -1
            var answered = 0
            while answered < limit {
                // The listening socket is non-blocking: EAGAIN once the backlog is empty.
                let fd = accept(listening, nil, nil)
                guard fd >= 0 else { break }
                _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                // What the client sent already is read and dropped before the close: a Unix socket
                // closed with unread data resets its peer, whose read may then fail before it
                // reaches the line. (A request that arrives after this still finds the line.)
                var sink = [UInt8](repeating: 0, count: 4096)
                var drained = 0
                while drained < 1 << 16 {
                    let got = sink.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                    guard got > 0 else { break }
                    drained += got
                }
                close(fd)
                answered += 1
            }
            spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
            return answered
        }
    }

    /// Closes the spare (the daemon stops).
    func closeSpare() {
        spare.withLock { spare in
            if spare >= 0 { close(spare) }
            spare = -1
        }
    }
}

/// Logs spells of failing accepts (see above) and, when accept fails for want of descriptors,
/// answers the waiting connections BUSY through the spare descriptor.
final class AcceptFailureLog: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    private let server: ServerContext
    /// How long reading pauses after an accept that took nothing from the backlog.
    private let retryInterval: TimeAmount
    /// Failed accepts in the current spell; 0 while accepting works.
    private var failures = 0
    /// Connections answered BUSY for want of descriptors in the current spell.
    private var refused = 0
    /// When the spell's failures were last logged.
    private var lastLogged = NIODeadline.distantPast

    init(server: ServerContext, retryInterval: TimeAmount = AcceptFailures.retryInterval) {
        self.server = server
        self.retryInterval = retryInterval
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if failures > 0 {
            server.logger.notice(
                "accepting connections again",
                metadata: [
                    "accept.failures": "\(failures)", "accept.refused": "\(refused)", "connections": "\(server.connectionCount)",
                ])
            failures = 0
            refused = 0
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let ioError = error as? IOError else {
            context.fireErrorCaught(error)
            return
        }
        failures += 1
        var answered = 0
        if AcceptFailures.isOutOfDescriptors(ioError) {
            let connections = server.connectionCount
            let line = Array(
                Reply.error(tag: "*", KeelError(.busy, "keeld is out of file descriptors (\(connections) connections); try again later"))
                    .line().utf8)
            answered =
                ((try? context.pipeline.syncOperations.withUnsafeTransportIfAvailable(of: NIOBSDSocket.Handle.self) { fd in
                    server.descriptors.refuseWaiting(listening: fd, line: line)
                }) ?? nil) ?? 0
            refused += answered
            server.countRefusedForDescriptors(answered)
        }
        // Nothing taken from the backlog: the socket is still readable, and NIO would accept
        // (and fail) again at once.
        if answered == 0 { AcceptFailures.pauseAccepting(context.channel, for: retryInterval) }
        let now = NIODeadline.now()
        guard failures == 1 || now - lastLogged >= AcceptFailures.reminderInterval else { return }
        lastLogged = now
        let limit = AcceptFailures.openFileLimit.map { "\($0)" } ?? "unlimited"
        server.logger.warning(
            failures > 1
                ? "still cannot accept connections"
                : AcceptFailures.isOutOfDescriptors(ioError)
                    ? "cannot accept connections: waiting ones are answered BUSY until descriptors are free"
                    : "cannot accept connections: trying again every \(retryInterval.nanoseconds / 1_000_000) ms",
            metadata: [
                "error": "\(ioError)", "accept.failures": "\(failures)", "accept.refused": "\(refused)",
                "connections": "\(server.connectionCount)", "limits.maxConnections": "\(server.limits.maxConnections)",
                "openFileLimit": "\(limit)",
            ])
    }
}
