// What every connection of one daemon shares: the configuration, the model, the object store,
// the subscriptions, the live connections (for shutdown), and whether the daemon is shutting
// down. Immutable but for the registry and the flag, each behind its own synchronisation.

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
    /// Sessions at work, against the machine's cores, and the replies they have written (early
    /// replies only for a connection that has the daemon to itself: ReplyCoalescing.swift).
    let sessionActivity = SessionActivity(cores: ProcessInfo.processInfo.activeProcessorCount)

    static let serverName = "keeld"
    static let version = "0.1.0"

    init(configuration: ServerConfiguration, model: Model, store: ObjectStore, logger: Logger, daemonUID: UInt32) {
        self.configuration = configuration
        self.model = model
        self.store = store
        self.events = EventHub(store: store)
        self.logger = logger
        self.daemonUID = daemonUID
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

    func sessionStarted() { runningSessions.wrappingAdd(1, ordering: .relaxed) }
    func sessionEnded() { runningSessions.wrappingSubtract(1, ordering: .releasing) }
    var runningSessionCount: Int { runningSessions.load(ordering: .acquiring) }
}
