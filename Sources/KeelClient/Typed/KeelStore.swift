// The store an application works with (Core Data's NSPersistentContainer): one line opens it
// embedded or connects to keeld, and everything after is the same code —
//
//     let store = try await KeelStore.open(dataFolder: ".keel/data", model: "config/model.json")
//     let store = try await KeelStore.connect(socket: ".keel/keeld.sock")
//     let context = store.mainContext
//
// It gives contexts (`mainContext`, `newContext()`), checks each generated entity class against
// the model the store serves before its first use, and closes the store or the connection.

import Synchronization

public final class KeelStore: Sendable {
    /// The context every store starts with (Core Data's `viewContext`).
    public let mainContext: KeelContext
    /// The connection to keeld, for a store made by `connect` (subscriptions, admin calls, batch
    /// requests: Docs/ClientConnection.md); nil for an embedded store.
    public let connection: KeelConnection?
    let core: StoreCore
    private let closeBackend: @Sendable () async throws(KeelError) -> Void

    /// A store over any backend: `main` is its main context, `close` ends it (closes the embedded
    /// store, or the connection).
    public init(
        main: any ContextBackend, connection: KeelConnection? = nil, close: @escaping @Sendable () async throws(KeelError) -> Void
    ) {
        core = StoreCore(model: main.model)
        self.connection = connection
        closeBackend = close
        mainContext = KeelContext(backend: main, core: core)
    }

    /// Opens the data folder in this process (no daemon), with the model file at `model` — the
    /// same open keeld does, refused alike (`BUSY` while a keeld serves the folder).
    public static func open(
        dataFolder: String, model: String, options: EmbeddedStoreOptions = EmbeddedStoreOptions()
    ) async throws(KeelError) -> KeelStore {
        let main = try await EmbeddedContextBackend.open(dataFolder: dataFolder, modelPath: model, options: options)
        return KeelStore(main: main, close: { () throws(KeelError) in try await main.closeStore() })
    }

    /// The model the store serves.
    public var model: Model { core.model }

    /// A new top-level context on the store (Core Data's `newBackgroundContext()`), with its own
    /// snapshot and pending changes.
    public func newContext(mergePolicy: MergePolicy = .error, name: String? = nil) async throws(KeelError) -> KeelContext {
        let backend = try await mainContext.backend.openContext(
            name: name ?? core.nextContextName("context"), child: false, mergePolicy: mergePolicy.rawValue)
        return KeelContext(backend: backend, core: core)
    }

    /// Change events of every save committed from now on — by any context, any process — that
    /// touches objects of `entities` (each with its sub-entities; nil: every entity), restricted
    /// to those objects, in commit order, once durable: `event.inserted(of: Employee.self)`…
    /// The same embedded (the store's own observer) and against keeld (SUBSCRIBE). A consumer
    /// that falls behind by more than the event buffer (`eventBufferLength` of the options) gets
    /// one event with `overflow` set in place of those it missed: refetch what you show. Ending
    /// the iteration (or dropping the stream) unsubscribes; closing the store ends it with
    /// `DISCONNECTED`.
    public func changes(of entities: [KeelObject.Type]? = nil) async throws(KeelError) -> KeelStream<ChangeEvent> {
        var names: [String]?
        if let entities {
            for type in entities { try core.check(type) }
            names = entities.map { $0.entity.name }
        }
        return try await mainContext.backend.subscribe(entities: names)
    }

    /// Closes the store (embedded: checkpoint, close, unlock the folder; daemon: the
    /// connection). Contexts fail afterwards.
    public func close() async throws(KeelError) {
        try await closeBackend()
    }
}

/// What a store's contexts share: the served model, the entity classes already checked against
/// it, and a counter for context names.
final class StoreCore: Sendable {
    let model: Model

    private struct State {
        var checked: Set<String> = []
        var contextsMade = 0
    }

    /// Guards the entities already checked and the count of contexts made.
    private let state = Mutex(State())

    init(model: Model) {
        self.model = model
    }

    /// Checks a generated entity class against the served model, once per entity
    /// (`MODEL_MISMATCH` when it was generated from a model that differs).
    func check(_ type: KeelObject.Type) throws(KeelError) {
        let entity = type.entity
        guard !state.withLock({ $0.checked.contains(entity.name) }) else { return }
        try entity.check(against: model)
        _ = state.withLock { $0.checked.insert(entity.name) }
    }

    func nextContextName(_ prefix: String) -> String {
        let n = state.withLock { s -> Int in
            s.contextsMade += 1
            return s.contextsMade
        }
        return "\(prefix)-\(n)"
    }
}
