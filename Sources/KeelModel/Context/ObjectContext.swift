// A managed-object context: Core Data's NSManagedObjectContext for Keel, and the embedded form
// of the protocol's object commands (INSERT UPDATE DELETE RELATE GET FETCH COUNT CHANGES SAVE
// ROLLBACK REFRESH), one method per command, errors already in the protocol's codes.
//
// Isolation rule: a context is confined to one isolation domain — the actor, task or thread that
// made it. It is deliberately not `Sendable`: the compiler refuses to share it, and it may only be
// handed over whole (`sending`), as the daemon does when a connection's task owns it. Objects it
// returns (`ManagedObject`, `ContextChanges`, IDs) are values and go anywhere. The store behind it
// is `Sendable` and shared by every context.
//
// State: one snapshot of the stores (or, for a child, its parent's current state) taken at the
// first command that reads (every command but an insert of attributes alone) after open, save,
// rollback or refresh, with the pending changes laid over it
// (`ContextOverlay`). Every command either takes effect completely or, when it throws, leaves the
// context exactly as it was.

public final class ObjectContext {
    enum Parent {
        case store(any ContextStore)
        case context(ObjectContext)
    }

    public let model: Model
    /// The merge policy this context's saves use (spec/protocol.md, "Contexts"; Docs/Contexts.md).
    public var mergePolicy: MergePolicy
    /// The most pending objects (inserted, updated, deleted) a command may leave behind; a command
    /// that would exceed it fails with `LIMIT` and changes nothing. Nil: no limit.
    public var pendingObjectLimit: Int?

    let parent: Parent
    /// The store at the root of the parent chain: it hands out object IDs.
    let root: any ContextStore
    var overlay: ContextOverlay
    /// The store snapshot the overlay reads (root contexts only).
    private var snapshot: (any ContextSnapshot)?
    /// Per entity, made at its first insert (ObjectContext+FastInsert.swift).
    var insertPlans: [InsertPlan?] = []
    /// The entity the last insert named (a concrete one).
    var lastInsertable: Entity?
    /// Fetches of this context under way (a fetch's `row` may start another). While one runs, a
    /// released snapshot is not closed: the fetch still reads it, chunk by chunk, and it closes
    /// when the fetch lets go of it.
    var fetchesRunning = 0
    /// False: every request is bound from scratch, never from its shape's prepared entry (tests
    /// compare the two).
    var preparesByShape = true

    /// A context that reads from and saves to the store.
    public init(store: any ContextStore, mergePolicy: MergePolicy = .error) {
        self.model = store.model
        self.mergePolicy = mergePolicy
        self.parent = .store(store)
        self.root = store
        self.overlay = ContextOverlay(model: store.model)
    }

    /// A child context: it reads its parent's current state (the parent's pending changes
    /// included) and saves into the parent, not into the store.
    public init(parent: ObjectContext, mergePolicy: MergePolicy = .error) {
        self.model = parent.model
        self.mergePolicy = mergePolicy
        self.parent = .context(parent)
        self.root = parent.root
        self.overlay = ContextOverlay(model: parent.model)
        self.overlay.base = ParentReader(parent: parent)
    }

    deinit {
        snapshot?.close()
    }

    /// The parent context, for a child context.
    public var parentContext: ObjectContext? {
        if case .context(let parent) = parent { return parent }
        return nil
    }

    /// Inserted objects plus changed or deleted pre-existing ones: what the daemon's
    /// pending-objects limit counts.
    public var pendingObjectCount: Int { overlay.pendingObjectCount }

    /// True while the context has a snapshot (taken at its first read since open, save, rollback or
    /// refresh). A child context always reads its parent's current state.
    public var hasSnapshot: Bool { overlay.hasBase }

    // MARK: CHANGES, ROLLBACK, REFRESH

    /// `CHANGES`: the pending inserts, updates and deletes. Objects inserted and then deleted here
    /// appear in none; an object whose only change is to a transient attribute is not updated.
    public func changes() -> ContextChanges {
        var inserted: [ObjectID] = []
        inserted.reserveCapacity(overlay.insertedCount)
        for (id, row) in overlay.rows where row.isInserted { inserted.append(id) }
        let updated = overlay.originals.keys.filter { !overlay.deleted.contains($0) }
        return ContextChanges(
            hasChanges: overlay.hasChanges, inserted: inserted.sorted(), updated: updated.sorted(),
            deleted: overlay.deleted.sorted())
    }

    /// `ROLLBACK`: drops every pending change (and every transient value); the next read takes a
    /// new snapshot.
    public func rollback() {
        overlay.reset(keepTransients: false)
        releaseSnapshot()
    }

    /// `REFRESH`: the next read takes a new snapshot; pending changes are kept, laid over it. The
    /// originals of objects already changed stay those of the old snapshot, so a save still
    /// detects what others changed since this context read them.
    public func refresh() {
        releaseSnapshot()
    }

    // MARK: Internals

    /// Takes the snapshot if the context has none.
    func prepare() throws(KeelError) {
        guard !overlay.hasBase, case .store(let store) = parent else { return }
        let taken = try store.contextSnapshot()
        snapshot = taken
        overlay.base = taken
    }

    func releaseSnapshot() {
        guard case .store = parent else { return }
        overlay.base = nil
        // A fetch under way (its `row` saved, rolled back or refreshed) still reads the snapshot:
        // it is closed when the last reference goes (the engine's snapshot closes on deinit).
        if fetchesRunning == 0 { snapshot?.close() }
        snapshot = nil
    }

    /// Runs a fetch's body, counted in `fetchesRunning`.
    func fetching<R>(_ body: () throws(KeelError) -> R) throws(KeelError) -> R {
        fetchesRunning += 1
        defer { fetchesRunning -= 1 }
        return try body()
    }

    /// Runs one command: all of it takes effect, or (when it throws) none. `reads: false` for a
    /// command that reads nothing of the snapshot (an insert of attributes only): it takes none.
    func perform<T>(reads: Bool = true, _ body: (inout ContextOverlay) throws(KeelError) -> T) throws(KeelError) -> T {
        if reads { try prepare() }
        overlay.begin()
        do throws(KeelError) {
            let result = try body(&overlay)
            if let limit = pendingObjectLimit, overlay.pendingObjectCount > limit {
                throw KeelError(
                    .limit, "the context would hold \(overlay.pendingObjectCount) pending objects (limit \(limit))",
                    details: ["limit": .int(Int64(limit))])
            }
            overlay.commit()
            return result
        } catch {
            overlay.undo()
            throw error
        }
    }

    /// The current state (snapshot and pending changes) for reading.
    func readState() throws(KeelError) -> ContextOverlay {
        try prepare()
        return overlay
    }
}

/// `CHANGES`: what a context would save.
public struct ContextChanges: Sendable, Hashable {
    public var hasChanges: Bool
    public var inserted: [ObjectID]
    public var updated: [ObjectID]
    public var deleted: [ObjectID]

    public init(hasChanges: Bool, inserted: [ObjectID], updated: [ObjectID], deleted: [ObjectID]) {
        self.hasChanges = hasChanges
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    /// The reply of `CHANGES`.
    public func json(in model: Model) -> JSON {
        [
            "hasChanges": .bool(hasChanges),
            "inserted": .array(inserted.map { .string($0.text(in: model)) }),
            "updated": .array(updated.map { .string($0.text(in: model)) }),
            "deleted": .array(deleted.map { .string($0.text(in: model)) }),
        ]
    }
}

/// A child context's view of its parent: the parent's current state, read live.
struct ParentReader: ObjectReader {
    let parent: ObjectContext

    var model: Model { parent.model }

    func object(_ id: ObjectID) throws(KeelError) -> StoredObject? { try parent.readState().object(id) }

    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID] {
        try parent.readState().members(of: id, field: field)
    }

    func scan(
        _ entity: EntityID, includeSubentities: Bool, _ body: (StoredObject) throws(KeelError) -> Bool
    ) throws(KeelError) {
        try parent.readState().scan(entity, includeSubentities: includeSubentities, body)
    }

    func count(_ entity: EntityID, includeSubentities: Bool) throws(KeelError) -> Int {
        try parent.readState().count(entity, includeSubentities: includeSubentities)
    }

    func holder(of constraint: Index, values: [Value]) throws(KeelError) -> ObjectID? {
        try parent.readState().holder(of: constraint, values: values)
    }
}
