// The object store: a model's objects in one KeelStorage store per configuration
// (`DIR/<Configuration>.keel`), with saves that keep relationships, indexes and unique keys in
// step, resolve conflicts by merge policy, validate, and commit atomically across stores
// (Decision 0004; Docs/Contexts.md, "Saving").
//
//     let objects = try ObjectStore.open(directory: "data", model: model)
//     let id = try objects.newObjectID(for: employee)
//     let result = try objects.save(ChangeSet(changes: [.insert(id, values: [0: .string("Kim")])]), mergePolicy: .error)
//     let snapshot = try objects.snapshot(); defer { snapshot.close() }
//     let row = try snapshot.object(id)
//
// Files: +Open (open, model check, recovery of multi-store saves), +IDs (object numbers),
// +Save (conflicts and merge policies), SaveSession (the GraphEditor over the write
// transactions), SaveValidator, +Commit (the save pipeline and the multi-store commit),
// +SaveGroup (single-store saves queued together share one transaction), +Batch, +History
// (records, observers, pruning), +Verify (relationship and index checks).
//
// LOCKS, in the order they are taken (never the other way round):
//   save lock → a store's save queue (`saveQueues`, ObjectStore+SaveGroup.swift): a leader takes
//     its group under the save lock; a saver pushes itself holding nothing
//   save lock (`saveLock`) → ID table (`ids`) only to read the reserved marks, released at once
//   save lock → the engine writer locks of the stores a save touches, in configuration order
//   ID table → the engine writer lock of one store (a block reservation)
//   snapshot gate: exclusive inside the writer locks, between a multi-store save's first and
//   last commit; shared by `snapshot()` around pinning one engine snapshot per store.

import KeelStorage
import Logging
import Synchronization

public final class ObjectStore: Sendable {
    public let model: Model
    public let directory: String
    public let options: ObjectStoreOptions
    let logger: Logger
    /// One engine store per configuration, in `model.configurations` order; [0] is the primary.
    let stores: [Store]
    let layout: TreeLayout
    /// The save lock: held for the whole of every save and batch (one save at a time, so a save
    /// reads the current state without racing another). Guards the last save id. Its waiters
    /// sleep rather than spin (BlockingMutex.swift).
    let saveLock: BlockingMutex<SaveCounter>
    /// Guards the per-entity ID allocator: next number to hand out and the durable reserved mark.
    /// Every insert and every save takes it for a moment, from many threads at once (a daemon's
    /// connections), and a block reservation holds it across a durable write: its waiters sleep
    /// rather than spin (BlockingMutex.swift).
    let ids: BlockingMutex<[IDRange]>
    /// Guards the observer table.
    let observers: Mutex<ObserverTable>
    /// The notice lock: guards the records of committed saves that observers have not heard of
    /// yet (commit order), each marked once its saver knows it durable, and is held while
    /// observers hear of them, one at a time.
    let notices: Mutex<[PendingNotice]>
    /// Held exclusively between the first and last commit of a multi-store save, shared while a
    /// snapshot pins its stores.
    let snapshotGate = ReadWriteLock()
    /// The newest committed save id, readable without the save lock.
    let committed: Atomic<UInt64>
    /// Per store: the single-store saves waiting for a group leader (ObjectStore+SaveGroup.swift).
    let saveQueues: [SaveQueue]

    init(model: Model, directory: String, options: ObjectStoreOptions, logger: Logger, stores: [Store],
         lastSave: UInt64, stored: [UInt64], ids: [IDRange]) {
        self.model = model
        self.directory = directory
        self.options = options
        self.logger = logger
        self.stores = stores
        self.layout = TreeLayout(model: model)
        self.saveLock = BlockingMutex(SaveCounter(last: lastSave, stored: stored))
        self.committed = Atomic(lastSave)
        self.saveQueues = stores.map { _ in SaveQueue() }
        self.ids = BlockingMutex(ids)
        self.observers = Mutex(ObserverTable())
        self.notices = Mutex([])
    }

    /// The configuration names, in store order.
    public var configurations: [String] { Array(model.configurations.keys) }

    /// The id of the newest committed save (0 before the first).
    public var lastSaveID: SaveID { SaveID(rawValue: committed.load(ordering: .acquiring)) }

    /// Checkpoints (unless `checkpoint` is false: a folder that was only read keeps its logs,
    /// and a full disk does not fail the close) and closes every store file. Later calls on this
    /// store throw.
    public func close(checkpoint: Bool = true) throws(KeelError) {
        var failure: KeelError?
        for store in stores {
            do throws(StorageError) { try store.close(checkpoint: checkpoint) } catch { failure = failure ?? KeelError(error) }
        }
        if let failure { throw failure }
    }

    /// Pins the newest committed state of every store until the snapshot is closed.
    public func snapshot() throws(KeelError) -> ObjectSnapshot {
        let pinned = try snapshotGate.withShared { () throws(KeelError) -> [Snapshot] in
            var out: [Snapshot] = []
            for store in stores {
                do throws(StorageError) {
                    out.append(try store.snapshot())
                } catch {
                    for s in out { s.close() }
                    throw KeelError(error)
                }
            }
            return out
        }
        return ObjectSnapshot(model: model, layout: layout, snapshots: pinned)
    }

    /// What a salvaging open (`options.storage.salvageLog`, for `keelctl salvage`) dropped, by
    /// store file name (`Default.keel`): where each damaged log was cut, and which durable
    /// transactions were past the cut. Empty when every log was sound.
    public var salvagedLogs: [(file: String, damage: String)] {
        zip(configurations, stores).compactMap { config, store in store.logDamage.map { (config + ".keel", $0) } }
    }

    /// Copies every store's log into its page file.
    public func checkpoint() throws(KeelError) {
        for store in stores { _ = try engine { () throws(StorageError) in try store.checkpoint() } }
    }

    /// Waits until every store's background checkpointer has finished what the saves so far
    /// asked of it (`StoreOptions.checkpointInBackground`).
    public func waitForBackgroundCheckpoints() throws(KeelError) {
        for store in stores { try engine { () throws(StorageError) in try store.waitForBackgroundCheckpoint() } }
    }

    func storeIndex(of entity: EntityID) -> Int { layout.storeOf[entity.index] }
}

/// The save lock's state.
struct SaveCounter {
    var last: UInt64
    /// Per entity: the highest object number ever stored (new numbers above it need no lookup).
    var stored: [UInt64]

    /// Raises `stored` to cover `inserted`.
    mutating func noteStored(_ inserted: [ObjectID]) {
        for id in inserted where id.number > stored[id.entity.index] { stored[id.entity.index] = id.number }
    }
}

/// An entity's ID allocator: numbers up to `reserved` are durably reserved; `next` is the next
/// one to hand out.
struct IDRange {
    var next: UInt64
    var reserved: UInt64
    /// The size of the next block to reserve (0: `idBlockSize`); doubles with every reservation.
    var grant: UInt64 = 0
}
