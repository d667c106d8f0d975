// Batched reads for fetch results: the members of one to-many relationship of many objects in
// one engine read (a chunk of fetched objects costs one read per relationship, not one per
// object). Rows by the hundred are `objects(_:)`.

import KeelStorage

extension ObjectSnapshot {
    /// The members of `field` of each of `ids` (objects of one hierarchy), in one read.
    func members(of ids: [ObjectID], field: Int) throws(KeelError) -> [[ObjectID]] {
        guard let first = ids.first else { return [] }
        try checkEntity(first.entity)
        let entity = model[first.entity]
        guard field >= 0, field < entity.properties.count, let name = layout.links[first.entity.index][field],
            case .relationship(let r) = entity.properties[field]
        else { throw KeelError(.noSuchProperty, "\(entity.name) has no to-many relationship #\(field)") }
        return try read(store: layout.storeOf[first.entity.index]) { (txn) throws(KeelError) -> [[ObjectID]] in
            // One cursor for all of them, the owners in key order (TreeReading.MemberLookup).
            var lookup = try TreeReading.MemberLookup(try self.tree(txn, name), ordered: r.isOrdered)
            var out = [[ObjectID]](repeating: [], count: ids.count)
            for i in Self.keyOrder(ids) { out[i] = try lookup.members(ids[i]) }
            return out
        }
    }
}
