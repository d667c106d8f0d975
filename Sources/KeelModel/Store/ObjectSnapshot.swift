// A consistent read view of every store of an object store: one pinned engine snapshot per
// configuration, taken together under the snapshot gate (so a multi-store save is seen whole or
// not at all). What a context reads between its saves.

import KeelStorage

public final class ObjectSnapshot: ObjectReader, Sendable {
    public let model: Model
    let layout: TreeLayout
    let snapshots: [Snapshot]

    init(model: Model, layout: TreeLayout, snapshots: [Snapshot]) {
        self.model = model
        self.layout = layout
        self.snapshots = snapshots
    }

    deinit { close() }

    /// Releases the pinned snapshots. Idempotent; later reads throw.
    public func close() {
        for s in snapshots { s.close() }
    }

    /// The id of the last save this snapshot includes (0 before the first).
    public func lastSaveID() throws(KeelError) -> SaveID {
        try read(store: 0) { (txn) throws(KeelError) -> SaveID in
            let bytes = try engine { () throws(StorageError) in try txn.tree(TreeLayout.meta)?.get(Array(MetaKey.save.utf8)) }
            return SaveID(rawValue: bytes.flatMap(KeyEncoding.readU64) ?? 0)
        }
    }

    func read<R>(store: Int, _ body: (ReadTransaction) throws(KeelError) -> R) throws(KeelError) -> R {
        try untyped { try snapshots[store].read { txn in try body(txn) } }
    }

    func checkEntity(_ entity: EntityID) throws(KeelError) {
        guard entity.index < model.entities.count else {
            throw KeelError(.noSuchEntity, "no entity #\(entity.rawValue) in model \(model.name)")
        }
    }

    public func object(_ id: ObjectID) throws(KeelError) -> StoredObject? {
        try checkEntity(id.entity)
        return try read(store: layout.storeOf[id.entity.index]) { (txn) throws(KeelError) -> StoredObject? in
            var key: [UInt8] = []
            let tree = try engine { () throws(StorageError) in try txn.tree(layout.objects[id.entity.index]) }
            return try TreeReading.row(tree, id, fieldCount: layout.fieldCounts[id.entity.index], key: &key)
        }
    }

    /// Many objects at once (one read transaction per store): nil where there is no such object.
    /// The lookups run in key order (entity, number), whatever the order asked for, so
    /// neighbouring lookups share the pages of their path and the tree is looked up once per
    /// entity; the results come back in the order asked.
    public func objects(_ ids: [ObjectID]) throws(KeelError) -> [StoredObject?] {
        var out = [StoredObject?](repeating: nil, count: ids.count)
        let count = model.entities.count
        let order = ids.indices.sorted { ids[$0] < ids[$1] }
        for s in snapshots.indices {
            guard order.contains(where: { ids[$0].entity.index < count && layout.storeOf[ids[$0].entity.index] == s }) else { continue }
            try read(store: s) { (txn) throws(KeelError) in
                var key: [UInt8] = []
                key.reserveCapacity(KeyEncoding.objectKeySize)
                var entity = -1
                var tree: Tree?
                for i in order {
                    let e = ids[i].entity.index
                    guard e < count, layout.storeOf[e] == s else { continue }
                    if e != entity {
                        entity = e
                        let name = layout.objects[e]
                        tree = try engine { () throws(StorageError) in try txn.tree(name) }
                    }
                    out[i] = try TreeReading.row(tree, ids[i], fieldCount: layout.fieldCounts[e], key: &key)
                }
            }
        }
        return out
    }

    public func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID] {
        try checkEntity(id.entity)
        let entity = model[id.entity]
        guard field >= 0, field < entity.properties.count, let name = layout.links[id.entity.index][field],
            case .relationship(let r) = entity.properties[field]
        else { throw KeelError(.noSuchProperty, "\(entity.name) has no to-many relationship #\(field)") }
        return try read(store: layout.storeOf[id.entity.index]) { (txn) throws(KeelError) -> [ObjectID] in
            let tree = try engine { () throws(StorageError) in try txn.tree(name) }
            return try TreeReading.members(tree, id, ordered: r.isOrdered)
        }
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
                    let tree = try engine { () throws(StorageError) in try txn.tree(layout.objects[entity.index]) }
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
            let tree = try engine { () throws(StorageError) in try txn.tree(layout.objects[entity.index]) }
            return try TreeReading.count(tree, entities: TreeReading.scanEntities(model, entity, includeSubentities: includeSubentities))
        }
    }

    public func holder(of constraint: Index, values: [Value]) throws(KeelError) -> ObjectID? {
        if values.contains(where: \.isNull) { return nil }
        try checkEntity(constraint.declaredIn)
        return try read(store: layout.storeOf[constraint.declaredIn.index]) { (txn) throws(KeelError) -> ObjectID? in
            let tree = try engine { () throws(StorageError) in try txn.tree(TreeLayout.index(constraint)) }
            return try TreeReading.holder(tree, key: KeyEncoding.valuesKey(values))
        }
    }
}
