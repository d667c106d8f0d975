// A consistent read view of every store of an object store: one pinned engine snapshot per
// configuration, taken together under the snapshot gate (so a multi-store save is seen whole or
// not at all). What a context reads between its saves.

import KeelStorage
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

public final class ObjectSnapshot: ObjectReader, Sendable {
    public let model: Model
    let layout: TreeLayout
    let snapshots: [Snapshot]
    /// The last rows `object(_:)` read (and misses), by ID: a snapshot never changes, and a
    /// context checks the same few targets (a department, for every employee inserted into it)
    /// again and again. Emptied at close, so reads after it still throw.
    private let recent = Mutex(RecentRows())
    /// Engine reads held open by `pinned(store:_:)`, one slot per store: nested reads of that
    /// store on the pinning thread reuse the open read instead of opening another.
    let pins: Mutex<Pins>

    struct Pins {
        /// The pin open on each store, nil when none.
        var open: [PinnedRead?]
        /// Per store, the pin of the last pinned read once it ended, emptied (no transaction, no
        /// tree): the next pinned read of that store takes it instead of allocating one and its
        /// tree list (~500 instructions a query, made and freed).
        var spare: [PinnedRead?]
    }

    init(model: Model, layout: TreeLayout, snapshots: [Snapshot]) {
        self.model = model
        self.layout = layout
        self.snapshots = snapshots
        self.pins = Mutex(
            Pins(open: [PinnedRead?](repeating: nil, count: snapshots.count), spare: [PinnedRead?](repeating: nil, count: snapshots.count)))
    }

    deinit { close() }

    /// Releases the pinned snapshots. Idempotent; later reads throw.
    public func close() {
        recent.withLock { $0 = RecentRows() }
        for s in snapshots { s.close() }
    }

    /// The id of the last save this snapshot includes (0 before the first): the highest of its
    /// stores' (`ObjectStore.lastSave`).
    public func lastSaveID() throws(KeelError) -> SaveID {
        var last: UInt64 = 0
        for s in snapshots.indices {
            last = max(last, try read(store: s) { (txn) throws(KeelError) -> UInt64 in try ObjectStore.lastSave(txn) })
        }
        return SaveID(rawValue: last)
    }

    func read<R>(store: Int, _ body: (ReadTransaction) throws(KeelError) -> R) throws(KeelError) -> R {
        if let txn = pinnedTransaction(store: store) { return try body(txn) }
        return try untyped { try snapshots[store].read { txn in try body(txn) } }
    }

    /// Runs `body` with one engine read of `store` held open: every read of that store `body`
    /// makes on this thread (index chunks, rows, members, to-one targets) reuses it, so a fetch
    /// pays for opening a read and looking its trees up in the catalog once, not once per step.
    /// `body` must not hand control to code that could close this snapshot or wait on another
    /// thread's read of it (no caller's callback runs inside): other threads' reads of the store
    /// wait until `body` returns. Nested pins of the same store are the outer one.
    func pinned<R>(store: Int, _ body: () throws(KeelError) -> R) throws(KeelError) -> R {
        if pinnedTransaction(store: store) != nil { return try body() }
        let thread = pthread_self()
        return try untyped {
            try snapshots[store].read { txn in
                // A pin's transaction and thread change only while it is in no `open` slot, under
                // the lock, so another thread's check of an open pin never sees them change.
                let pin = pins.withLock { pins in
                    let pin = pins.spare[store].take() ?? PinnedRead(thread: thread)
                    pin.thread = thread
                    pin.txn = txn
                    pins.open[store] = pin
                    return pin
                }
                defer {
                    // The trees (bound to this read) and the transaction let go before the read
                    // ends, as the pin's destruction did: the engine read's pages may be reused.
                    pin.trees.removeAll(keepingCapacity: true)
                    pins.withLock { pins in
                        pins.open[store] = nil
                        pin.txn = nil
                        pins.spare[store] = pin
                    }
                }
                return try untypedBody(body)
            }
        }
    }

    /// The transaction of the read this thread holds pinned on `store`, nil when none.
    private func pinnedTransaction(store: Int) -> ReadTransaction? {
        let thread = pthread_self()
        return pins.withLock { pins in
            guard let pin = pins.open[store], pthread_equal(pin.thread, thread) != 0 else { return nil }
            return pin.txn
        }
    }

    /// The tree called `name` in `txn`: from the pin's cache when `txn` is a pinned read.
    func tree(_ txn: ReadTransaction, _ name: String) throws(KeelError) -> Tree? {
        if let pin = pins.withLock({ pins in pins.open.first { $0?.txn === txn } ?? nil }) {
            if let hit = pin.tree(named: name) { return hit }
            let found: Tree? = try engine { () throws(StorageError) in try txn.tree(name) }
            pin.trees.append((name, found))
            return found
        }
        return try engine { () throws(StorageError) in try txn.tree(name) }
    }

    func checkEntity(_ entity: EntityID) throws(KeelError) {
        guard entity.index < model.entities.count else {
            throw KeelError(.noSuchEntity, "no entity #\(entity.rawValue) in model \(model.name)")
        }
    }

    public func object(_ id: ObjectID) throws(KeelError) -> StoredObject? {
        if let hit = recent.withLock({ $0.lookup(id) }) { return hit.row }  // nil row: known missing
        try checkEntity(id.entity)
        let row = try read(store: layout.storeOf[id.entity.index]) { (txn) throws(KeelError) -> StoredObject? in
            var key: [UInt8] = []
            let tree = try self.tree(txn, layout.objects[id.entity.index])
            return try TreeReading.row(tree, id, fieldCount: layout.fieldCounts[id.entity.index], key: &key)
        }
        recent.withLock { $0.store(id, row) }
        return row
    }

    /// The positions of `ids` in key order (entity, number), equal IDs by position. Sorts
    /// entity·number·position packed in one word (16 bits, the rest, and as many bits as the
    /// positions need) when the numbers fit (a million objects fetched 100,000 at a time: 31 bits
    /// for numbers, 17 for positions) — a sort of plain integers, no comparison closure; else
    /// (entity·number, position) pairs in two words when the numbers fit 48 bits; else `ObjectID`s.
    /// IDs already in key order (an index equality's entries name their objects in key order)
    /// are not sorted: one pass checks, and the order is the positions themselves.
    static func keyOrder(_ ids: [ObjectID]) -> [Int] {
        guard !ids.isEmpty else { return [] }
        if isInKeyOrder(ids) {
            // Built by `append` after `reserveCapacity` (specialized here; `Array(_:)` of a range
            // allocates through the standard library's unspecialized path, as Array+Filling notes).
            var order: [Int] = []
            order.reserveCapacity(ids.count)
            for i in ids.indices { order.append(i) }
            return order
        }
        let positionBits = max(1, UInt64.bitWidth - UInt64(ids.count - 1).leadingZeroBitCount)
        if positionBits <= 32, ids.allSatisfy({ $0.number >> (48 - positionBits) == 0 }) {
            var words = ids.enumerated().map {
                UInt64($0.element.entity.rawValue) << 48 | $0.element.number << positionBits | UInt64($0.offset)
            }
            words.sort()
            let mask = UInt64(1) << positionBits - 1
            return words.map { Int($0 & mask) }
        }
        guard ids.allSatisfy({ $0.number < 1 << 48 }) else { return ids.indices.sorted { ids[$0] < ids[$1] } }
        var pairs = ids.enumerated().map { (key: UInt64($0.element.entity.rawValue) << 48 | $0.element.number, at: $0.offset) }
        pairs.sort { $0.key != $1.key ? $0.key < $1.key : $0.at < $1.at }
        return pairs.map(\.at)
    }

    /// Whether each ID is at or after the one before in key order (entity, number).
    static func isInKeyOrder(_ ids: [ObjectID]) -> Bool {
        ids.withUnsafeBufferPointer { ids in
            var i = 1
            while i < ids.count {
                let a = ids[i - 1], b = ids[i]
                if a.entity.rawValue > b.entity.rawValue || (a.entity == b.entity && a.number > b.number) { return false }
                i += 1
            }
            return true
        }
    }

    /// Many objects at once (one read transaction per store): nil where there is no such object.
    /// The IDs are split by object tree (an entity's family shares one) and each tree's share is
    /// looked up in key order (entity, number), whatever the order asked for, eight at a time
    /// with their leaves prefetched (`TreeReading.rows`, as an index read's rows are); the
    /// results come back in the order asked. Repeated IDs get the same row at each position.
    public func objects(_ ids: [ObjectID]) throws(KeelError) -> [StoredObject?] {
        var out = [StoredObject?](filling: nil, count: ids.count)
        let count = model.entities.count
        // Each tree's positions of `ids`, in key order; `shareOf[e]`: the share of entity e's tree.
        var shares: [(store: Int, tree: String, order: [Int])] = []
        var shareOf = [Int](filling: -1, count: count)
        for i in Self.keyOrder(ids) {
            let e = ids[i].entity.index
            guard e < count else { continue }  // no such entity: nil
            if shareOf[e] < 0 {
                let (store, tree) = (layout.storeOf[e], layout.objects[e])
                shareOf[e] = shares.firstIndex { $0.store == store && $0.tree == tree } ?? shares.endIndex
                if shareOf[e] == shares.endIndex { shares.append((store, tree, [])) }
            }
            shares[shareOf[e]].order.append(i)
        }
        for s in Set(shares.map(\.store)).sorted() {
            try read(store: s) { (txn) throws(KeelError) in
                for share in shares where share.store == s {
                    try TreeReading.rows(
                        try self.tree(txn, share.tree), ids, order: share.order, fieldCount: { layout.fieldCounts[$0.entity.index] },
                        into: &out)
                }
            }
        }
        return out
    }

    public func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID] {
        let link = try linkTree(of: id, field: field)
        return try read(store: layout.storeOf[id.entity.index]) { (txn) throws(KeelError) -> [ObjectID] in
            try TreeReading.members(try self.tree(txn, link.tree), id, ordered: link.ordered)
        }
    }

    /// Every list in one engine read of the object's store (its link trees all live there).
    public func members(of id: ObjectID, fields: [Int]) throws(KeelError) -> [[ObjectID]] {
        let links = try fields.map { (field) throws(KeelError) in try linkTree(of: id, field: field) }
        return try read(store: layout.storeOf[id.entity.index]) { (txn) throws(KeelError) -> [[ObjectID]] in
            try links.map { (link) throws(KeelError) in try TreeReading.members(try self.tree(txn, link.tree), id, ordered: link.ordered) }
        }
    }

    /// The link tree of `id`'s to-many `field` and whether it is ordered (NO_SUCH_PROPERTY when
    /// the field is not a to-many relationship of the object's entity).
    private func linkTree(of id: ObjectID, field: Int) throws(KeelError) -> (tree: String, ordered: Bool) {
        try checkEntity(id.entity)
        let entity = model[id.entity]
        guard field >= 0, field < entity.properties.count, let name = layout.links[id.entity.index][field],
            case .relationship(let r) = entity.properties[field]
        else { throw KeelError(.noSuchProperty, "\(entity.name) has no to-many relationship #\(field)") }
        return (name, r.isOrdered)
    }

    /// Streams in chunks of 256 rows, each read in its own engine read, so `body` may read this
    /// snapshot again (a nested read of one engine snapshot would wait on itself).
    public func scan(
        _ entity: EntityID, includeSubentities: Bool, _ body: (StoredObject) throws(KeelError) -> Bool
    ) throws(KeelError) {
        try checkEntity(entity)
        let chunkSize = 256
        for e in TreeReading.scanEntities(model, entity, includeSubentities: includeSubentities) {
            var from: UInt64 = 0
            while true {
                let rows = try read(store: layout.storeOf[entity.index]) { (txn) throws(KeelError) -> [StoredObject] in
                    let tree = try self.tree(txn, layout.objects[entity.index])
                    return try TreeReading.chunk(tree, entity: e, from: from, limit: chunkSize, model: model)
                }
                for o in rows { guard try body(o) else { return } }
                guard rows.count == chunkSize, let last = rows.last, last.id.number < .max else { break }
                from = last.id.number + 1
            }
        }
    }

    public func count(_ entity: EntityID, includeSubentities: Bool) throws(KeelError) -> Int {
        try checkEntity(entity)
        return try read(store: layout.storeOf[entity.index]) { (txn) throws(KeelError) -> Int in
            let tree = try self.tree(txn, layout.objects[entity.index])
            return try TreeReading.count(tree, entities: TreeReading.scanEntities(model, entity, includeSubentities: includeSubentities))
        }
    }

    public func holder(of constraint: Index, values: [Value]) throws(KeelError) -> ObjectID? {
        if values.contains(where: \.isNull) { return nil }
        try checkEntity(constraint.declaredIn)
        return try read(store: layout.storeOf[constraint.declaredIn.index]) { (txn) throws(KeelError) -> ObjectID? in
            let tree = try self.tree(txn, TreeLayout.index(constraint))
            return try TreeReading.holder(tree, key: KeyEncoding.valuesKey(values))
        }
    }
}

/// A small direct-mapped cache of rows read from one snapshot (misses included).
struct RecentRows: ~Copyable {
    static let slots = 64
    private var ids: [ObjectID?] = Array(repeating: nil, count: RecentRows.slots)
    private var rows: [StoredObject?] = Array(repeating: nil, count: RecentRows.slots)

    @inline(__always)
    private static func slot(_ id: ObjectID) -> Int {
        Int(truncatingIfNeeded: (id.number &* 0x9E37_79B9_7F4A_7C15) >> 58 ^ UInt64(id.entity.rawValue)) & (slots - 1)
    }

    /// A cached lookup: `row` nil means the object is known not to exist.
    struct Hit {
        let row: StoredObject?
    }

    /// The cached result for `id`, nil when it is not cached.
    func lookup(_ id: ObjectID) -> Hit? {
        let s = Self.slot(id)
        guard ids[s] == id else { return nil }
        return Hit(row: rows[s])
    }

    mutating func store(_ id: ObjectID, _ row: StoredObject?) {
        let s = Self.slot(id)
        ids[s] = id
        rows[s] = row
    }
}
/// An engine read held open by `ObjectSnapshot.pinned(store:_:)`, with the trees looked up in
/// it. Only the pinning thread uses it (`thread` is checked, under the pins' lock, before every
/// use), hence unchecked. Reused by the next pinned read of its store once emptied: `txn` and
/// `thread` are set and cleared under the pins' lock while the pin is in no `open` slot.
final class PinnedRead: @unchecked Sendable {
    /// The pinned read's transaction; nil while the pin waits for the next read.
    var txn: ReadTransaction?
    var thread: pthread_t
    /// Trees looked up under this read, by name: a fetch's few (an index, an object tree, link
    /// trees), searched in order — a dictionary cost more to build, hash into and free per
    /// query than comparing a handful of names. Without the runtime's exclusivity checks: only
    /// the pinning thread touches the list, and no access to it overlaps another (`tree(named:)`
    /// reads it, `ObjectSnapshot.tree` appends after the read ended); the checks cost a
    /// `swift_beginAccess` (~80 instructions) on each look-up and each append.
    @exclusivity(unchecked) var trees: [(name: String, tree: Tree?)] = []

    init(thread: pthread_t) {
        self.thread = thread
        trees.reserveCapacity(4)
    }

    /// The tree looked up under `name` (nil inside: looked up, no such tree); nil when not yet.
    func tree(named name: String) -> Tree?? {
        for entry in trees where entry.name == name { return .some(entry.tree) }
        return nil
    }
}

/// Runs a typed-throws body inside an untyped-throws closure.
private func untypedBody<R>(_ body: () throws(KeelError) -> R) throws -> R {
    try body()
}
