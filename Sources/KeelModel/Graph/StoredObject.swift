// The shapes the store, the save pipeline and contexts exchange.

/// One object's row as the store holds it: attributes and to-one targets by field, and its
/// version. To-many fields are not in the row (they live in link trees); their slots hold `.null`
/// and are read through `ObjectReader.members`.
public struct StoredObject: Sendable, Hashable {
    public let id: ObjectID
    /// Saved changes so far (1 after the first save; 0 for an object never saved).
    public var version: UInt64
    /// One value per field of the entity (`Entity.properties`): `.null` when unset.
    public var values: [Value]

    public init(id: ObjectID, version: UInt64, values: [Value]) {
        self.id = id
        self.version = version
        self.values = values
    }
}

/// Read access to objects as of some state: a snapshot of the stores, or the state a save is
/// building inside its write transactions.
public protocol ObjectReader: ObjectGraphReading {
    var model: Model { get }
    /// The object's row, nil when there is no such object.
    func object(_ id: ObjectID) throws(KeelError) -> StoredObject?
    /// The targets of a to-many field, in order for an ordered relationship, else by ID.
    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID]
    /// The targets of several to-many fields of one object, each as `members(of:field:)` gives
    /// it, read together where the reader can (a store snapshot: in one engine read).
    func members(of id: ObjectID, fields: [Int]) throws(KeelError) -> [[ObjectID]]
    /// Every object of `entity` (and of its sub-entities when asked), by ID, streamed: `body`
    /// returns false to stop.
    func scan(
        _ entity: EntityID, includeSubentities: Bool, _ body: (StoredObject) throws(KeelError) -> Bool
    ) throws(KeelError)
    /// How many objects `scan` would visit.
    func count(_ entity: EntityID, includeSubentities: Bool) throws(KeelError) -> Int
    /// The object holding `values` (in the constraint's field order) under a unique constraint.
    func holder(of constraint: Index, values: [Value]) throws(KeelError) -> ObjectID?
    /// Index reads of this state (a store snapshot), nil when it has none: fetches then scan. A
    /// reader conforming to `IndexReading` returns itself here (the default is nil).
    /// Asked by every fetch; a witness call is cheaper than a cast to `any IndexReading`.
    var indexReading: (any IndexReading)? { get }
    /// This reader as a store snapshot (`ObjectSnapshot` returns itself; the default is nil):
    /// what `as? ObjectSnapshot` gives, asked by every fetch (its engine read, the fast paths)
    /// by a witness call instead of a `swift_dynamicCast` of the existential (~264 instructions).
    var objectSnapshot: ObjectSnapshot? { get }
}

extension ObjectReader {
    public var indexReading: (any IndexReading)? { nil }
    public var objectSnapshot: ObjectSnapshot? { nil }

    /// One field at a time.
    public func members(of id: ObjectID, fields: [Int]) throws(KeelError) -> [[ObjectID]] {
        try fields.map { (field) throws(KeelError) in try members(of: id, field: field) }
    }
}

/// How a save resolves a conflict with changes saved since its context's snapshot
/// (spec/protocol.md, "Contexts"; each exact per property in Docs/Contexts.md).
public enum MergePolicy: String, Sendable, CaseIterable {
    case error
    case storeTrumps
    case objectTrumps
    case overwrite
    case rollback
}

/// One change a context made, in the order it made them. A save replays the log on the current
/// state of the stores through `GraphRules`, so inverses and delete rules are applied to what is
/// there at save time, not to what the context saw.
public enum Change: Sendable, Hashable {
    /// A new object with its initial attribute values and to-one targets (to-many are `add`s).
    case insert(ObjectID, values: [Int: Value])
    /// The same as `insert` with every non-null field of `row` (one value per property of the
    /// entity, `Entity.properties` order; `.null` for a field not given): how a context hands
    /// over its pending rows, without building a dictionary per object.
    case insertRow(ObjectID, row: [Value])
    /// An attribute or a to-one relationship set (the inverse is kept in step).
    case set(ObjectID, field: Int, value: Value)
    /// Objects added to a to-many relationship; `at` is the position for an ordered one
    /// (nil: at the end).
    case add(ObjectID, field: Int, members: [ObjectID], at: Int?)
    /// Objects removed from a to-many relationship.
    case remove(ObjectID, field: Int, members: [ObjectID])
    /// The object deleted, with its delete rules.
    case delete(ObjectID)

    /// The object the change is made on.
    public var object: ObjectID {
        switch self {
        case .insert(let id, _), .insertRow(let id, _), .set(let id, _, _), .add(let id, _, _, _), .remove(let id, _, _),
            .delete(let id):
            id
        }
    }
}

/// What a context hands to `ObjectStore.save`.
public struct ChangeSet: Sendable {
    /// Every change, in order.
    public var changes: [Change]
    /// For each pre-existing object the context changed or deleted: its row as the context's
    /// snapshot had it (the base of optimistic locking and of per-property merging).
    public var originals: [ObjectID: StoredObject]
    /// Transient attribute values are never in a change set.

    public init(changes: [Change] = [], originals: [ObjectID: StoredObject] = [:]) {
        self.changes = changes
        self.originals = originals
    }

    public var isEmpty: Bool { changes.isEmpty }
}

/// Identifies one save across the data folder (`txn` on the wire). Counts from 1.
public struct SaveID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: SaveID, b: SaveID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { String(rawValue) }
}

/// What a save did.
public struct SaveResult: Sendable {
    public var saveID: SaveID?
    public var inserted: [ObjectID]
    public var updated: [ObjectID]
    public var deleted: [ObjectID]
    /// Under `objectTrumps`/`storeTrumps`, inserted objects merged into the existing holder of a
    /// unique key (upsert): inserted ID → the existing object's ID.
    public var merged: [ObjectID: ObjectID]
    /// A batch update's objects that its predicate matched and it set (`updated` also holds
    /// the objects whose inverse relationships changed with them); nil for other saves.
    public var matched: Int?

    public init(
        saveID: SaveID?, inserted: [ObjectID] = [], updated: [ObjectID] = [], deleted: [ObjectID] = [],
        merged: [ObjectID: ObjectID] = [:]
    ) {
        self.saveID = saveID
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.merged = merged
    }
}

/// A committed save, as observers and `HISTORY` see it.
public struct HistoryRecord: Sendable, Hashable {
    public var saveID: SaveID
    /// Milliseconds since 1970 (UTC).
    public var time: Int64
    public var inserted: [ObjectID]
    /// Updated objects with the names of the properties that changed.
    public var updated: [ObjectID: [String]]
    public var deleted: [ObjectID]

    public init(saveID: SaveID, time: Int64, inserted: [ObjectID], updated: [ObjectID: [String]], deleted: [ObjectID]) {
        self.saveID = saveID
        self.time = time
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }
}
