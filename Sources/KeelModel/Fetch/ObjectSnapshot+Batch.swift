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
        try membersUnlessNone(of: ids, field: field) ?? [[ObjectID]](filling: [], count: ids.count)
    }

    /// `members(of:field:)`, or nil when none of `ids` has a member and that is known without a
    /// read (their link trees already found missing): a fetch's chunk then needs no list per
    /// object (building `ids.count` empty lists cost ~40 instructions an object).
    func membersUnlessNone(of ids: [ObjectID], field: Int) throws(KeelError) -> [[ObjectID]]? {
        guard let first = ids.first else { return [] }
        // Positions of `ids` per link tree. A chunk's objects are nearly always of one entity:
        // then there is one group, the whole list, and no position is listed per object.
        var groups: [(name: String, ordered: Bool, positions: [Int])] = []
        if !ids.contains(where: { $0.entity != first.entity }) {
            let (name, ordered) = try linkTree(of: first.entity, field: field)  // checks the entity
            // A link tree the store's engine snapshot already found missing (no object of the
            // store was ever related by the relationship) holds no members: known without opening
            // a read or looking the tree up again (each chunk of a fetch asked, ~2.8k instructions).
            if snapshots[layout.storeOf[first.entity.index]].knowsNoTree(name) { return nil }
            groups.append((name, ordered, []))
        } else {
            // An entity like the previous one's reuses its group without looking the tree up.
            var lastEntity = first.entity
            var lastGroup = -1
            for (i, id) in ids.enumerated() {
                if lastGroup < 0 || id.entity != lastEntity {
                    let (name, ordered) = try linkTree(of: id.entity, field: field)
                    if let k = groups.firstIndex(where: { $0.name == name }) {
                        lastGroup = k
                    } else {
                        // Room for the rest of the list.
                        var positions: [Int] = []
                        positions.reserveCapacity(ids.count - i)
                        groups.append((name, ordered, positions))
                        lastGroup = groups.count - 1
                    }
                    lastEntity = id.entity
                }
                groups[lastGroup].positions.append(i)
            }
        }
        let store = layout.storeOf[first.entity.index]
        // Every group's tree known missing: no read either.
        if groups.count > 1, groups.allSatisfy({ snapshots[store].knowsNoTree($0.name) }) { return nil }
        return try read(store: store) { (txn) throws(KeelError) -> [[ObjectID]] in
            var out = [[ObjectID]](filling: [], count: ids.count)
            for group in groups {
                // A link tree the snapshot does not have holds no members (a lookup on it finds
                // none): each owner of the group keeps its empty list, with no cursor, no key
                // order and no call per owner.
                guard let tree = try self.tree(txn, group.name) else { continue }
                // One cursor per tree, the owners in key order (TreeReading.MemberLookup). With
                // one group it is all of `ids` (its positions are not listed).
                var lookup = try TreeReading.MemberLookup(tree, ordered: group.ordered)
                let owners = groups.count == 1 ? ids : group.positions.map { ids[$0] }
                for n in Self.keyOrder(owners) { out[groups.count == 1 ? n : group.positions[n]] = try lookup.members(owners[n]) }
            }
            return out
        }
    }

    /// The link tree of `entity`'s to-many relationship at `field`, and whether it is ordered.
    private func linkTree(of entity: EntityID, field: Int) throws(KeelError) -> (name: String, ordered: Bool) {
        try checkEntity(entity)
        let e = model[entity]
        guard field >= 0, field < e.properties.count, let name = layout.links[entity.index][field],
            case .relationship(let r) = e.properties[field]
        else { throw KeelError(.noSuchProperty, "\(e.name) has no to-many relationship #\(field)") }
        return (name, r.isOrdered)
    }
}
