// Batched reads for fetch results: the members of one to-many relationship of many objects in
// one engine read (a chunk of fetched objects costs one read per relationship, not one per
// object). Rows by the hundred are `objects(_:)`.

import KeelStorage

extension ObjectSnapshot {
    /// The members of `field` of each of `ids`, in one read. `field` is a to-many of every one of
    /// them; objects of sibling sub-entities may each have a different relationship at the same
    /// field number (a sub-entity's own properties follow the inherited ones), kept in different
    /// link trees: each tree is read with its own cursor.
    func members(of ids: [ObjectID], field: Int) throws(KeelError) -> [[ObjectID]] {
        guard let first = ids.first else { return [] }
        // Positions of `ids` per link tree: a chunk's objects are nearly always of one entity, so
        // an entity like the previous one's reuses its group without looking the tree up.
        var groups: [(name: String, ordered: Bool, positions: [Int])] = []
        var lastEntity = first.entity
        var lastGroup = -1
        for (i, id) in ids.enumerated() {
            if lastGroup < 0 || id.entity != lastEntity {
                try checkEntity(id.entity)
                let entity = model[id.entity]
                guard field >= 0, field < entity.properties.count, let name = layout.links[id.entity.index][field],
                    case .relationship(let r) = entity.properties[field]
                else { throw KeelError(.noSuchProperty, "\(entity.name) has no to-many relationship #\(field)") }
                if let k = groups.firstIndex(where: { $0.name == name }) {
                    lastGroup = k
                } else {
                    // Room for the rest of the list (nearly always all of it: one entity).
                    var positions: [Int] = []
                    positions.reserveCapacity(ids.count - i)
                    groups.append((name, r.isOrdered, positions))
                    lastGroup = groups.count - 1
                }
                lastEntity = id.entity
            }
            groups[lastGroup].positions.append(i)
        }
        return try read(store: layout.storeOf[first.entity.index]) { (txn) throws(KeelError) -> [[ObjectID]] in
            var out = [[ObjectID]](filling: [], count: ids.count)
            for group in groups {
                // One cursor per tree, the owners in key order (TreeReading.MemberLookup).
                var lookup = try TreeReading.MemberLookup(try self.tree(txn, group.name), ordered: group.ordered)
                let owners = groups.count == 1 ? ids : group.positions.map { ids[$0] }
                for n in Self.keyOrder(owners) { out[groups.count == 1 ? n : group.positions[n]] = try lookup.members(owners[n]) }
            }
            return out
        }
    }
}
