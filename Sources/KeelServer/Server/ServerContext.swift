// What every connection of one daemon shares: the configuration, the model, the object store,
// the subscriptions, the live connections (for shutdown), the connection count against
// `limits.maxConnections`, and whether the daemon is shutting down. Immutable but for the
// registry, the counters and the flag, each behind its own synchronisation.

import Foundation
import KeelModel
import KeelProtocol
import Logging
import Synchronization

final class ServerContext: Sendable {
    let configuration: ServerConfiguration
    let model: Model
    let store: ObjectStore
    let events: EventHub
    let logger: Logger
    /// The daemon's own uid (always allowed, and admin unless `adminUIDs` says otherwise).
    let daemonUID: UInt32
    /// The HELLO reply (it never changes for one daemon).
    let hello: JSON
    /// SIGTERM/SIGINT came: requests read from now on are answered BUSY.
    private let shuttingDown = Atomic<Bool>(false)
    /// Guards the live connections by id (shutdown walks them).
    private let connections = Mutex<[Int: ConnectionLink]>([:])
    /// Counts connection threads still running; shutdown waits for zero before closing the store.
    private let runningSessions = Atomic<Int>(0)
    private let nextConnectionID = Atomic<Int>(1)
    /// Connections admitted and not yet over (closed, and their thread ended): at most
    /// `limits.maxConnections`.
    private let admittedConnections = Atomic<Int>(0)
    /// Connections answered `* ERR BUSY` at the limit since the daemon started.
    private let refusedConnections = Atomic<Int>(0)
    /// Connections answered `* ERR BUSY` because descriptors ran out, since the daemon started.
    private let refusedForDescriptors = Atomic<Int>(0)
    /// The limit was met and its warning logged; cleared when a connection is admitted again
    /// (one warning per spell at the limit, not one per refused connection).
    private let atLimitLogged = Atomic<Bool>(false)
    /// Sessions at work, against the machine's cores, and the replies they have written (early
    /// replies only for a connection that has the daemon to itself: ReplyCoalescing.swift).
    let sessionActivity = SessionActivity(cores: ProcessInfo.processInfo.activeProcessorCount)
    /// The spare descriptor that lets accept succeed when descriptors run out (AcceptFailures.swift).
    let descriptors = DescriptorReserve()
    /// The data and backup folders' paths, as clients never see them (ServerContext+ClientErrors.swift).
    let folderPrefixes: [String]

    static let serverName = "keeld"
    static let version = "0.1.0"

    init(configuration: ServerConfiguration, model: Model, store: ObjectStore, logger: Logger, daemonUID: UInt32) {
        self.configuration = configuration
        self.model = model
        self.store = store
        self.events = EventHub(store: store)
        self.logger = logger
        self.daemonUID = daemonUID
        self.folderPrefixes = Self.folderPrefixes(configuration.dataDirectory, configuration.backupDirectory)
        self.hello = [
            "server": .string(Self.serverName),
            "version": .string(Self.version),
            "protocol": .int(Int64(CommandTable.protocolVersions.last ?? 1)),
            "model": .string(model.name),
            "modelHash": .string(model.hash),
            "limits": configuration.limits.json,
        ]
        events.attach()
    }

    var limits: ServerLimits { configuration.limits }

    var isShuttingDown: Bool { shuttingDown.load(ordering: .acquiring) }

    func beginShutdown() { shuttingDown.store(true, ordering: .releasing) }

    func makeConnectionID() -> Int { nextConnectionID.wrappingAdd(1, ordering: .relaxed).oldValue }

    func register(_ link: ConnectionLink) {
        connections.withLock { $0[link.id] = link }
    }

    func unregister(_ id: Int) {
        _ = connections.withLock { $0.removeValue(forKey: id) }
    }

    var liveConnections: [ConnectionLink] { connections.withLock { Array($0.values) } }

    /// Takes a place for a new connection; false when `limits.maxConnections` are already
    /// served (the refusal is counted, and logged once per spell at the limit).
    func admitConnection() -> Bool {
        let limit = limits.maxConnections
        var current = admittedConnections.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = admittedConnections.weakCompareExchange(
                expected: current, desired: current + 1, successOrdering: .acquiringAndReleasing, failureOrdering: .relaxed)
            if exchanged {
                atLimitLogged.store(false, ordering: .relaxed)
                return true
            }
            current = original
        }
        refusedConnections.wrappingAdd(1, ordering: .relaxed)
        if !atLimitLogged.exchange(true, ordering: .relaxed) {
            logger.warning(
                "connection limit reached; refusing new connections with BUSY",
                metadata: ["limits.maxConnections": "\(limit)"])
        }
        return false
    }

    /// Counts connections answered BUSY because descriptors ran out (AcceptFailures.swift).
    func countRefusedForDescriptors(_ count: Int) {
        if count > 0 { refusedForDescriptors.wrappingAdd(count, ordering: .relaxed) }
    }

    /// Connections answered BUSY because descriptors ran out, since the daemon started.
    var refusedForDescriptorsCount: Int { refusedForDescriptors.load(ordering: .relaxed) }

    /// Gives back the place of a connection that is over (ConnectionLink.release).
    func connectionEnded() { admittedConnections.wrappingSubtract(1, ordering: .acquiringAndReleasing) }

    /// Connections admitted and not yet over.
    var connectionCount: Int { admittedConnections.load(ordering: .acquiring) }
    /// Connections refused at `limits.maxConnections` since the daemon started.
    var refusedConnectionCount: Int { refusedConnections.load(ordering: .relaxed) }

    func sessionStarted() { runningSessions.wrappingAdd(1, ordering: .relaxed) }
    func sessionEnded() { runningSessions.wrappingSubtract(1, ordering: .releasing) }
    var runningSessionCount: Int { runningSessions.load(ordering: .acquiring) }
}
