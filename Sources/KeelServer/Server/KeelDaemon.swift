// The daemon: start (lock the data folder, load the model, open the store, bind the socket),
// serve, and shut down cleanly on SIGTERM/SIGINT through swift-service-lifecycle.
//
// Start, in this order, each refusal one line (StartupFailure):
//   1.–3. the data folder (KeelModel's DataFolder, the same open an embedded store uses): its lock
//      (a second daemon on the folder stops here, before touching anything), the model file, the
//      store files (model mismatch refused);
//   4. the socket: folder 0700, stale socket replaced only when nobody listens, bind under a
//      umask that yields the configured mode; the open-file limit raised (toward the hard
//      limit) when `limits.maxConnections` need more, and accept failures backed off
//      (AcceptFailures.swift).
// Shutdown (`run` returns after it):
//   1. stop accepting; requests read from now on are answered BUSY;
//   2. every connection finishes the requests it had already read (a barrier per connection),
//      for at most `shutdownGraceSeconds`, after which connections are closed — a save already
//      running still completes, since the store is closed only after every thread has stopped;
//   3. connections are closed once their replies are written; their threads end;
//   4. checkpoint and close the store, unlock the data folder (DataFolder.close); remove the
//      socket file (if it is still ours).
// Blocking work (store open, checkpoint, close) runs on a NIOThreadPool, never on an event loop
// nor on the cooperative pool.

public import KeelProtocol
public import Logging
import KeelModel
import NIOCore
import NIOPosix
public import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

public final class KeelDaemon: Service, Sendable {
    public let configuration: ServerConfiguration
    let server: ServerContext
    /// The data folder's lock, model and store (closed last, at shutdown).
    let folder: DataFolder
    let group: MultiThreadedEventLoopGroup
    let blocking: NIOThreadPool
    let channel: any Channel
    let socketInode: UInt64?
    let logger: Logger
    /// Guards the hook `run` calls when it starts.
    private let readyHook = Mutex<(@Sendable () -> Void)?>(nil)

    private init(
        configuration: ServerConfiguration, server: ServerContext, folder: DataFolder, group: MultiThreadedEventLoopGroup,
        blocking: NIOThreadPool, channel: any Channel, socketInode: UInt64?, logger: Logger
    ) {
        self.configuration = configuration
        self.server = server
        self.folder = folder
        self.group = group
        self.blocking = blocking
        self.channel = channel
        self.socketInode = socketInode
        self.logger = logger
    }

    /// The socket path as configured (what the ready line prints).
    public var socketPath: String { configuration.socketPath }

    /// Starts the daemon: when this returns, it accepts connections. Throws the one-line reason
    /// it cannot start.
    public static func start(_ configuration: ServerConfiguration, logger: Logger) async throws(StartupFailure) -> KeelDaemon {
        let blocking = NIOThreadPool(numberOfThreads: 2)
        blocking.start()
        let prepared: Prepared
        do {
            prepared = try await blocking.runIfActive { () throws -> Prepared in
                try Prepared.make(configuration, logger: logger)
            }
        } catch let failure as StartupFailure {
            try? await blocking.shutdownGracefully()
            throw failure
        } catch {
            try? await blocking.shutdownGracefully()
            throw StartupFailure("cannot start: \(error)")
        }
        let (folder, existing) = (prepared.folder, prepared.existing)
        let (model, store) = (folder.model, folder.store)
        let server = ServerContext(configuration: configuration, model: model, store: store, logger: logger, daemonUID: getuid())
        AcceptFailures.makeRoomForConnections(configuration.limits.maxConnections, logger: logger)
        let threads = configuration.eventLoopThreads > 0 ? configuration.eventLoopThreads : System.coreCount
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            // A failed accept (no file descriptor left) waits before the next try instead of
            // spinning, and is logged once per spell (AcceptFailures.swift).
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(AcceptFailures.handlers(server: server))
                }
            }
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelOption(.autoRead, value: true)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ConnectionHandler(server: server))
                }
            }
        let channel: any Channel
        do {
            channel = try await SocketPreparation.withUmask(for: configuration.socketMode) {
                try await bootstrap.bind(unixDomainSocketPath: configuration.socketPath, cleanupExistingSocketFile: existing == .stale).get()
            }
        } catch {
            try? await group.shutdownGracefully()
            _ = try? await blocking.runIfActive { try folder.close() }
            try? await blocking.shutdownGracefully()
            throw StartupFailure("cannot listen on \(configuration.socketPath): \(error)")
        }
        if existing == .stale {
            logger.notice("replaced a stale socket", metadata: ["socket.path": "\(configuration.socketPath)"])
        }
        logger.info(
            "listening",
            metadata: [
                "socket.path": "\(configuration.socketPath)", "data.path": "\(configuration.dataDirectory)",
                "model.name": "\(model.name)", "model.hash": "\(model.hash)",
            ])
        return KeelDaemon(
            configuration: configuration, server: server, folder: folder, group: group, blocking: blocking, channel: channel,
            socketInode: SocketPreparation.inode(of: configuration.socketPath), logger: logger)
    }

    /// Called once when `run` starts, that is, once the service group has taken over SIGTERM
    /// and SIGINT (keeld prints its ready line there: a signal sent after it is a clean stop).
    public func onRun(_ body: @escaping @Sendable () -> Void) {
        readyHook.withLock { $0 = body }
    }

    /// Serves until graceful shutdown (SIGTERM/SIGINT through the service group) or
    /// cancellation, then shuts down.
    public func run() async throws {
        readyHook.withLock { hook in
            hook?()
            hook = nil
        }
        try? await gracefulShutdown()
        await shutdown()
    }
}

/// What the blocking part of the start produced.
private struct Prepared: Sendable {
    var folder: DataFolder
    var existing: SocketPreparation.Existing

    /// The data folder (lock, model, store: DataFolder, shared with embedded stores), then the
    /// socket path.
    static func make(_ configuration: ServerConfiguration, logger: Logger) throws(StartupFailure) -> Prepared {
        let folder: DataFolder
        var options = ObjectStoreOptions(storage: configuration.storeOptions)
        options.historyRetention = configuration.historyRetention
        do throws(DataFolderError) {
            folder = try DataFolder.open(
                directory: configuration.dataDirectory, modelPath: configuration.modelPath, options: options, logger: logger)
        } catch {
            throw StartupFailure(error.message)
        }
        do throws(StartupFailure) {
            let existing = try SocketPreparation.prepare(path: configuration.socketPath)
            return Prepared(folder: folder, existing: existing)
        } catch {
            _ = try? folder.close()
            throw error
        }
    }
}
