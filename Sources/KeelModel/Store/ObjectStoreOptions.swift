// Settings of an object store, fixed at open.

public import KeelStorage

public struct ObjectStoreOptions: Sendable {
    /// The engine settings of every store file (sync mode, cache, file system for tests). The
    /// object store's default runs the automatic checkpoint on the background checkpointer
    /// (`StoreOptions.checkpointInBackground`): a save returns once durable, not after copying the
    /// log into the page file (Docs/Performance.md, "Object layer").
    public var storage: StoreOptions = Self.defaultStorage

    /// The engine's defaults with `checkpointInBackground` on.
    public static var defaultStorage: StoreOptions {
        var options = StoreOptions()
        options.checkpointInBackground = true
        return options
    }
    /// Keep at most this many history records (the oldest are pruned in the commit of each save);
    /// nil keeps all of them until `pruneHistory(keeping:)`.
    public var historyRetention: Int? = nil
    /// Object numbers reserved by an entity's first durable reservation in a process (Decision
    /// 0004: blocks of 1,024); each further reservation of the entity doubles it, up to 64 times.
    public var idBlockSize: UInt64 = 1024

    public init() {}

    public init(storage: StoreOptions) { self.storage = storage }
}
