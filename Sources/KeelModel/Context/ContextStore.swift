// What a root context needs from the object store: a snapshot to read, permanent IDs at
// insert, and the save that replays a change log. `ObjectStore` conforms (the conformance lives
// next to it); tests conform small in-memory stores.

/// A consistent, read-only view of the stores that a context reads for as long as it keeps it.
public protocol ContextSnapshot: ObjectReader {
    /// Gives the snapshot back (the engine may then recycle what it pinned). Called once.
    func close()
}

/// The object store as a root context sees it.
///
/// Implementations are shared by every context of a process (the daemon's connections), so they
/// are `Sendable`; a context itself is not (see `ObjectContext`).
public protocol ContextStore: AnyObject, Sendable {
    var model: Model { get }
    /// A new snapshot of the current state of every store.
    func contextSnapshot() throws(KeelError) -> any ContextSnapshot
    /// A new permanent ID for an object of `entity` (a concrete entity), never handed out again.
    func newObjectID(for entity: EntityID) throws(KeelError) -> ObjectID
    /// Replays `changes` on the current state, resolves conflicts by `mergePolicy`, validates, and
    /// writes all of it or nothing.
    func save(_ changes: ChangeSet, mergePolicy: MergePolicy) throws(KeelError) -> SaveResult
    /// As `save(_:mergePolicy:)`, calling `committed` once the save has committed and before the
    /// store waits for it to be durable and runs its automatic checkpoint. A context closes its
    /// snapshot there: a snapshot still open through that checkpoint is older than the save's own
    /// commit, so the checkpoint could not empty the log, and a context that reads and saves in a
    /// loop kept the log growing (Docs/Performance.md, "Object layer"). `committed` is not called
    /// when the save fails before its commit (nothing written). It may run on another thread
    /// while this call waits (an object store's save groups), so it must not save itself.
    func save(_ changes: ChangeSet, mergePolicy: MergePolicy, committed: () -> Void) throws(KeelError) -> SaveResult
}

extension ContextStore {
    /// Stores without a separate durability wait: `committed` runs once the save has returned.
    public func save(_ changes: ChangeSet, mergePolicy: MergePolicy, committed: () -> Void) throws(KeelError) -> SaveResult {
        let result = try save(changes, mergePolicy: mergePolicy)
        committed()
        return result
    }
}
