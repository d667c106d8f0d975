// Settings of an object store, fixed at open.

public import KeelStorage

public struct ObjectStoreOptions: Sendable {
    /// The engine settings of every store file (sync mode, cache, file system for tests).
    public var storage: StoreOptions = StoreOptions()
    /// Keep at most this many history records (the oldest are pruned in the commit of each save);
    /// nil keeps all of them until `pruneHistory(keeping:)`.
    public var historyRetention: Int? = nil
    /// Object numbers reserved per durable write (Decision 0004: blocks of 1,024).
    public var idBlockSize: UInt64 = 1024

    public init() {}

    public init(storage: StoreOptions) { self.storage = storage }
}
