// `ContextBackend` in this process: each call runs one method of a KeelModel `ObjectContext`
// on the thread that owns the context's family (ContextThread: a top-level context and its
// children share one thread, since a child reads its parent live), and answers in the wire's
// terms exactly as keeld's session does (ContextTerms, `ManagedObject.json`, `FetchRequest(json:)`),
// so the typed layer cannot tell this backend from the remote one.
//
// Lifetimes: a context lives while its backend does (or until `close()`); its thread ends when
// the last context of its family is gone. The store (`EmbeddedStore`: the data folder, locked)
// stays open until `closeStore()`.

public import KeelModel
import KeelProtocol
import Synchronization

public final class EmbeddedContextBackend: ContextBackend {
    public let model: Model
    public let name: String
    let store: EmbeddedStore
    let thread: ContextThread
    private let confined: ConfinedContext
    /// Set by `close()`: later calls fail with NO_SUCH_CONTEXT.
    private let closed = Atomic<Bool>(false)

    private init(store: EmbeddedStore, name: String, thread: ContextThread, confined: ConfinedContext) {
        self.model = store.model
        self.store = store
        self.name = name
        self.thread = thread
        self.confined = confined
    }

    /// Opens the data folder `dataFolder` (created when missing) with the model file at
    /// `modelPath`, as keeld opens it, and returns its `main` context. Throws `BUSY` while another
    /// process (a keeld) holds the folder, `INVALID_MODEL`, `MODEL_MISMATCH`, `IO`…
    public static func open(
        dataFolder: String, modelPath: String, options: EmbeddedStoreOptions = EmbeddedStoreOptions()
    ) async throws(KeelError) -> EmbeddedContextBackend {
        let thread = ContextThread(name: "keel.context.main")
        let opened: Result<(EmbeddedStore, ConfinedContext), KeelError> = await withCheckedContinuation { done in
            thread.submit {
                do throws(DataFolderError) {
                    let folder = try DataFolder.open(
                        directory: dataFolder, modelPath: modelPath, options: options.store, program: EmbeddedStore.program,
                        logger: options.logger)
                    let store = EmbeddedStore(folder: folder, options: options)
                    done.resume(returning: .success((store, ConfinedContext(store: store, thread: thread, parent: nil, mergePolicy: .error))))
                } catch {
                    done.resume(returning: .failure(error.keelError))
                }
            }
        }
        switch opened {
        case .success(let (store, confined)):
            return EmbeddedContextBackend(store: store, name: "main", thread: thread, confined: confined)
        case .failure(let error):
            thread.stop()
            throw error
        }
    }

    /// Checkpoints and closes the store, and unlocks the data folder. Every context of the store
    /// fails with `READ_ONLY` afterwards. Call when the application is done with it.
    public func closeStore() async throws(KeelError) {
        guard store.markClosed() else { return }
        let folder = store.folder
        let logger = store.options.logger
        // On a thread of its own: closing checkpoints and fsyncs (never on the cooperative pool).
        let closer = ContextThread(name: "keel.store.close")
        defer { closer.stop() }
        let result: Result<Void, KeelError> = await withCheckedContinuation { done in
            closer.submit {
                done.resume(returning: Result { () throws(KeelError) in
                    if let failure = try folder.close() {
                        logger.error("checkpoint at close failed", metadata: ["error": "\(failure)"])
                    }
                })
            }
        }
        try result.get()
    }

    // MARK: ContextBackend

    public func insert(entity: String, values: JSON) async throws(KeelError) -> String {
        try await run { (context) throws(KeelError) -> String in
            try context.insert(entity: entity, values: values).text(in: context.model)
        }
    }

    public func update(_ id: String, values: JSON) async throws(KeelError) {
        try await run { (context) throws(KeelError) in
            try context.update(try ContextTerms.objectID(id, in: context.model), values: values)
        }
    }

    public func delete(_ id: String) async throws(KeelError) -> [String] {
        try await run { (context) throws(KeelError) -> [String] in
            ContextTerms.texts(try context.delete(try ContextTerms.objectID(id, in: context.model)), in: context.model)
        }
    }

    public func relate(_ id: String, relationship: String, add: [String], remove: [String]) async throws(KeelError) {
        try await run { (context) throws(KeelError) in
            let model = context.model
            try context.relate(
                try ContextTerms.objectID(id, in: model), relationship: relationship,
                add: try ContextTerms.objectIDs(add, in: model), remove: try ContextTerms.objectIDs(remove, in: model))
        }
    }

    public func get(_ id: String, include: [String]) async throws(KeelError) -> JSON {
        try await run { (context) throws(KeelError) -> JSON in
            let objectID = try ContextTerms.objectID(id, in: context.model)
            return try context.renewingSnapshot { () throws(KeelError) -> JSON in
                try context.get(objectID, include: include).json(in: context.model)
            }
        }
    }

    public func fetch(_ request: JSON) -> AsyncThrowingStream<JSON, any Error> {
        let channel = RowChannel(capacity: max(1, store.options.fetchBufferRows), thread: thread)
        let stream = channel.stream()
        do throws(KeelError) {
            try checkUsable()
        } catch {
            channel.finish(error)
            return stream
        }
        let accepted = thread.submit { [confined, thread, name] in
            let context = confined.context
            var delivered = false
            do throws(KeelError) {
                let fetchRequest = try FetchRequest(json: request)
                try context.renewingSnapshot(retry: { !delivered }) { () throws(KeelError) in
                    try context.fetch(fetchRequest) { (row) throws(KeelError) -> Bool in
                        delivered = true
                        return channel.push(row.json(in: context.model))
                    }
                }
                // Cut short because the thread is ending (not because the reader left): an error,
                // never a short result that looks whole.
                let cut = thread.isStopping && !channel.isAbandoned
                channel.finish(cut ? KeelError(.noSuchContext, "the context \"\(name)\" closed during the fetch") : nil)
            } catch {
                channel.finish(error)
            }
        }
        if !accepted { channel.finish(closedError) }
        return stream
    }

    public func count(_ request: JSON) async throws(KeelError) -> Int {
        try await run { (context) throws(KeelError) -> Int in
            let fetchRequest = try FetchRequest(json: request)
            return try context.renewingSnapshot { () throws(KeelError) -> Int in try context.count(fetchRequest) }
        }
    }

    public func explain(_ request: JSON) async throws(KeelError) -> String {
        try await run { (context) throws(KeelError) -> String in
            let fetchRequest = try FetchRequest(json: request)
            return try context.renewingSnapshot { () throws(KeelError) -> String in try context.explain(fetchRequest) }
        }
    }

    public func changes() async throws(KeelError) -> JSON {
        try await run { (context) throws(KeelError) -> JSON in context.changes().json(in: context.model) }
    }

    public func save() async throws(KeelError) -> JSON {
        try await run { (context) throws(KeelError) -> JSON in ContextTerms.saveReply(try context.save()) }
    }

    public func rollback() async throws(KeelError) {
        try await run { (context) throws(KeelError) in context.rollback() }
    }

    public func refresh() async throws(KeelError) {
        try await run { (context) throws(KeelError) in context.refresh() }
    }

    public func openContext(name: String, child: Bool, mergePolicy: String) async throws(KeelError) -> any ContextBackend {
        try checkUsable()
        let policy = try ContextTerms.mergePolicy(mergePolicy)
        try store.claim(name)
        // A child joins this context's thread (it reads its parent live); a top-level context gets
        // a thread of its own.
        let owner = child ? thread : ContextThread(name: "keel.context.\(name)")
        let parent = child ? confined : nil
        let made: Result<ConfinedContext, KeelError> = await withCheckedContinuation { done in
            let accepted = owner.submit { [store] in
                done.resume(returning: .success(ConfinedContext(store: store, thread: owner, parent: parent, mergePolicy: policy)))
            }
            if !accepted { done.resume(returning: .failure(closedError)) }
        }
        switch made {
        case .success(let confined):
            return EmbeddedContextBackend(store: store, name: name, thread: owner, confined: confined)
        case .failure(let error):
            store.release(name)
            if !child { owner.stop() }
            throw error
        }
    }

    public func subscribe(entities: [String]?) async throws(KeelError) -> KeelStream<ChangeEvent> {
        try store.subscribe(entities: EventTerms.followed(entities, in: model))
    }

    // Store-level commands run on the store's command thread (EmbeddedStore.runCommand), never
    // on the cooperative pool (a batch commits and fsyncs, a history read reads pages) and not on
    // this context's thread, whose calls they would hold up.

    public func history(after: Int64, limit: Int) async throws(KeelError) -> [JSON] {
        let range = try EventTerms.historyRange(["after": .int(after), "limit": .int(Int64(limit))])
        try checkUsable()
        return try await store.runCommand { (objects) throws(KeelError) -> [JSON] in
            try objects.history(after: range.after, limit: range.limit).map { EventTerms.historyRow($0, model: objects.model) }
        }
    }

    public func pruneHistory(through: Int64) async throws(KeelError) -> JSON {
        try checkUsable()
        return try await store.runCommand { (objects) throws(KeelError) -> JSON in
            try EventTerms.pruneHistory(["through": .int(through)], in: objects)
        }
    }

    public func batch(_ command: String, _ arguments: JSON) async throws(KeelError) -> JSON {
        guard case .object(let members) = arguments else {
            throw KeelError(.badRequest, "a batch request's arguments are a JSON object, not \(arguments.kindName)")
        }
        try checkUsable()
        return try await store.runCommand { (objects) throws(KeelError) -> JSON in try BatchCommands.run(command, members, store: objects) }
    }

    public func close() async {
        guard name != "main", !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        store.release(name)
    }

    // MARK: Running on the owner thread

    /// Runs `body` with the context on its thread and hands back its result.
    private func run<T: Sendable>(_ body: @escaping @Sendable (ObjectContext) throws(KeelError) -> T) async throws(KeelError) -> T {
        try checkUsable()
        let result: Result<T, KeelError> = await withCheckedContinuation { done in
            let accepted = thread.submit { [confined] in
                done.resume(returning: Result { () throws(KeelError) -> T in try body(confined.context) })
            }
            if !accepted { done.resume(returning: .failure(closedError)) }
        }
        return try result.get()
    }

    private func checkUsable() throws(KeelError) {
        if closed.load(ordering: .acquiring) {
            throw KeelError(.noSuchContext, "the context \"\(name)\" is closed")
        }
        try store.checkOpen()
    }

    private var closedError: KeelError {
        KeelError(.noSuchContext, "the context \"\(name)\" is closed")
    }
}

/// An `ObjectContext` and the thread that owns it. `@unchecked Sendable`: the context is made in
/// a job of `thread` and touched only by jobs of `thread` (every access goes through
/// `ContextThread.submit`), so it never runs on two threads; the box itself only moves the
/// reference. When the last box of a family goes, its thread is stopped.
final class ConfinedContext: @unchecked Sendable {
    let context: ObjectContext
    let thread: ContextThread
    /// The parent's box: keeps the parent (and the shared thread) alive as long as the child.
    private let parent: ConfinedContext?

    /// Call on `thread`.
    init(store: EmbeddedStore, thread: ContextThread, parent: ConfinedContext?, mergePolicy: MergePolicy) {
        assert(thread.isCurrent, "a context is made on the thread that owns it")
        if let parent {
            context = ObjectContext(parent: parent.context, mergePolicy: mergePolicy)
        } else {
            context = ObjectContext(store: store.folder.store, mergePolicy: mergePolicy)
        }
        context.pendingObjectLimit = store.options.pendingObjectLimit
        self.thread = thread
        self.parent = parent
    }

    deinit {
        // The family's last context: its thread has nothing left to do.
        if parent == nil { thread.stop() }
    }
}
