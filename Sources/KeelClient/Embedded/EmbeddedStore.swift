// A data folder opened in this process for embedded contexts (no daemon): the same open keeld
// does (KeelModel's DataFolder: lock, model file, store files, refused alike), shared by every
// embedded context of the process, and the names of the contexts open on it (as a keeld
// connection has them: `main` always, each other name once).

public import KeelModel
import KeelProtocol
public import Logging
import Synchronization

/// Settings of an embedded store.
public struct EmbeddedStoreOptions: Sendable {
    /// The object store's settings (sync mode, page cache, history retention…).
    public var store = ObjectStoreOptions()
    /// The most pending objects a context may hold (keeld's `pendingObjectsPerContext`); nil: no
    /// limit.
    public var pendingObjectLimit: Int? = nil
    /// Rows an embedded FETCH hands ahead of its reader before it waits for it.
    public var fetchBufferRows = 256
    /// Change events a subscriber (`KeelStore.changes`) may fall behind by before the ones it
    /// missed are replaced by one with `overflow` set (as `KeelConnection.Options`' own).
    public var eventBufferLength = 1024
    public var logger = Logger(label: "keel.embedded")

    public init() {}
}

final class EmbeddedStore: Sendable {
    /// How the data folder's lock names an embedded holder to a keeld or keelctl it refuses.
    static let program = "application (KeelClient, embedded)"

    let folder: DataFolder
    let options: EmbeddedStoreOptions

    private struct Registry {
        var names: Set<String> = ["main"]
        var closed = false
        /// Change subscriptions (`subscribe`): each an observer of the object store feeding a
        /// stream, ended when the store closes.
        var subscriptions: [Int: (token: ObserverToken, buffer: StreamBuffer<ChangeEvent>)] = [:]
        var subscriptionsMade = 0
    }

    /// Guards the open context names and whether the store is closed.
    private let registry = Mutex(Registry())
    /// The thread store-level commands run on (batch requests, history, its deletion): started at
    /// the first one, stopped when the store closes. Not a context's thread, so a long batch
    /// does not hold up the main context's calls (nor they it); keeld runs them on the
    /// connection's thread, which the connection's contexts share.
    private let commandThread = Mutex<ContextThread?>(nil)

    init(folder: DataFolder, options: EmbeddedStoreOptions) {
        self.folder = folder
        self.options = options
    }

    /// A store dropped without `closeStore()` (no context of it is left): closed here, so the
    /// data folder is not left locked for the rest of the process.
    deinit {
        if markClosed() {
            do throws(KeelError) {
                if let failure = try folder.close() {
                    options.logger.error("checkpoint at close failed", metadata: ["error": "\(failure)"])
                }
            } catch {
                options.logger.error("closing the store failed", metadata: ["error": "\(error)"])
            }
        }
    }

    var model: Model { folder.model }

    /// What a call on the closed store fails with.
    private var closedError: KeelError { KeelError(.readOnly, "the embedded store in \(folder.directory) is closed") }

    /// Throws once the store is closed.
    func checkOpen() throws(KeelError) {
        if registry.withLock({ $0.closed }) {
            throw closedError
        }
    }

    /// Takes a context name (refused when another open context has it, as keeld refuses it).
    func claim(_ name: String) throws(KeelError) {
        try ContextTerms.checkContextName(name)
        let taken = registry.withLock { r -> Bool? in
            if r.closed { return nil }
            return !r.names.insert(name).inserted
        }
        guard let taken else { throw closedError }
        if taken { throw KeelError(.badRequest, "a context named \"\(name)\" is already open on this store") }
    }

    func release(_ name: String) {
        _ = registry.withLock { $0.names.remove(name) }
    }

    /// Runs a store-level command (`body`, with the object store) on the store's command thread;
    /// `READ_ONLY` once the store is closed.
    func runCommand<T: Sendable>(_ body: @escaping @Sendable (ObjectStore) throws(KeelError) -> T) async throws(KeelError) -> T {
        try checkOpen()
        let objects = folder.store
        let thread = commandThread.withLock { thread -> ContextThread in
            if let thread { return thread }
            let made = ContextThread(name: "keel.store.commands")
            thread = made
            return made
        }
        let result: Result<T, KeelError> = await withCheckedContinuation { done in
            let accepted = thread.submit { done.resume(returning: Result { () throws(KeelError) -> T in try body(objects) }) }
            if !accepted { done.resume(returning: .failure(closedError)) }
        }
        return try result.get()
    }

    /// Marks the store closed (later calls fail) and ends its change subscriptions with
    /// `DISCONNECTED`, as a closed connection ends its own; true the first time. The command
    /// thread finishes the commands already queued and ends.
    func markClosed() -> Bool {
        let (first, ended) = registry.withLock { r in
            defer {
                r.closed = true
                r.subscriptions = [:]
            }
            return (!r.closed, Array(r.subscriptions.values))
        }
        commandThread.withLock { $0 }?.stop()
        for subscription in ended {
            folder.store.removeObserver(subscription.token)
            subscription.buffer.finish(KeelError(.disconnected, "the embedded store in \(folder.directory) was closed"))
        }
        return first
    }

    /// Change events of every save committed from now on that touches `entities` (entity IDs,
    /// sub-entities included by the caller; nil: all), from the object store's observer: the
    /// events keeld's SUBSCRIBE gives for the same saves, in commit order, once durable.
    func subscribe(entities: Set<EntityID>?) throws(KeelError) -> KeelStream<ChangeEvent> {
        let model = self.model
        let id = registry.withLock { r in
            r.subscriptionsMade += 1
            return r.subscriptionsMade
        }
        let buffer = StreamBuffer<ChangeEvent>(
            policy: .dropOnOverflow(limit: max(1, options.eventBufferLength), marker: { ChangeEvent(txn: $0.txn, overflow: true) }),
            onCancel: { [weak self] in self?.unsubscribe(id) })
        // Runs on the saving thread under the store's notice lock: only builds and pushes.
        let token = folder.store.addObserver { record in
            guard let event = ChangeEvent(record: record, model: model, entities: entities) else { return }
            _ = buffer.push(.value(event), bytes: 0)
        }
        let added = registry.withLock { r -> Bool in
            guard !r.closed else { return false }
            r.subscriptions[id] = (token, buffer)
            return true
        }
        guard added else {
            folder.store.removeObserver(token)
            throw closedError
        }
        return KeelStream(buffer)
    }

    /// How many change subscriptions are open (each an observer of the object store).
    var subscriptionCount: Int { registry.withLock { $0.subscriptions.count } }

    /// A subscriber went away (its stream dropped, its task cancelled).
    private func unsubscribe(_ id: Int) {
        guard let subscription = registry.withLock({ $0.subscriptions.removeValue(forKey: id) }) else { return }
        folder.store.removeObserver(subscription.token)
    }
}
