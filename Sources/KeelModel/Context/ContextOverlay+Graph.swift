// The overlay read as one state (base + pending changes) and edited as one: `ObjectReader` for
// fetches, `get` and a child context reading its parent; `GraphEditor` for `GraphRules`, which
// keeps inverses in step and applies delete rules at the moment of the change.

extension ContextOverlay: ObjectReader, GraphEditor {
    func object(_ id: ObjectID) throws(KeelError) -> StoredObject? {
        if !deleted.isEmpty, deleted.contains(id) { return nil }
        if let row = rows[id] { return StoredObject(id: id, version: row.version, values: row.values) }
        return try reader().object(id)
    }

    func exists(_ id: ObjectID) throws(KeelError) -> Bool {
        if !deleted.isEmpty, deleted.contains(id) { return false }
        if rows[id] != nil { return true }
        return try reader().object(id) != nil
    }

    func value(of id: ObjectID, field: Int) throws(KeelError) -> Value {
        guard let row = try object(id) else {
            throw KeelError(.notFound, "no object \(id.text(in: model)) (it does not exist or is deleted)")
        }
        guard row.values.indices.contains(field) else {
            throw KeelError(.noSuchProperty, "\(model[id.entity].name) has no property #\(field)")
        }
        return row.values[field]
    }

    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID] {
        if deleted.contains(id) { return [] }
        let inserted = rows[id]?.isInserted == true
        guard let pending = members[MemberKey(id: id, field: field)] else {
            return inserted ? [] : try reader().members(of: id, field: field)
        }
        if let ordered = pending.ordered { return ordered }
        let base = inserted ? [] : try reader().members(of: id, field: field)
        var out = pending.removed.isEmpty ? base : base.filter { !pending.removed.contains($0) }
        if !pending.added.isEmpty || !pending.fresh.isEmpty {
            let present = pending.added.isEmpty ? [] : Set(base)
            out.append(contentsOf: pending.added.filter { !present.contains($0) })
            out.append(contentsOf: pending.fresh)  // new objects: in no base list
            out.sort()
        }
        return out
    }

    /// Whether the members of `id`'s to-many `field` differ from the base's list: the object is
    /// inserted or deleted here, or the list has pending edits. Only such lists are worked out
    /// by the overlay; the others are the base's as they are.
    @inline(__always)
    func hasPendingMembers(_ id: ObjectID, field: Int) -> Bool {
        rows[id]?.isInserted == true || (!members.isEmpty && members[MemberKey(id: id, field: field)] != nil)
            || deleted.contains(id)
    }

    /// The base's lists in one read when none of the fields has pending changes and the object
    /// is a saved one; else field by field.
    func members(of id: ObjectID, fields: [Int]) throws(KeelError) -> [[ObjectID]] {
        guard fields.count > 1, !fields.contains(where: { hasPendingMembers(id, field: $0) }) else {
            return try fields.map { (field) throws(KeelError) in try members(of: id, field: field) }
        }
        return try reader().members(of: id, fields: fields)
    }

    mutating func write(_ id: ObjectID, field: Int, value: Value) throws(KeelError) {
        try writeField(id, field: field, value: value)
    }

    mutating func link(_ id: ObjectID, field: Int, member: ObjectID, at position: Int?) throws(KeelError) {
        try linkMember(id, field: field, member: member, at: position, ordered: isOrdered(id, field))
    }

    mutating func unlink(_ id: ObjectID, field: Int, member: ObjectID) throws(KeelError) {
        try unlinkMember(id, field: field, member: member, ordered: isOrdered(id, field))
    }

    mutating func destroy(_ id: ObjectID) throws(KeelError) {
        try destroyObject(id)
    }

    /// Base objects in ID order with pending rows laid over them and deleted ones left out, and
    /// the inserted objects of the family merged in by ID.
    func scan(
        _ entity: EntityID, includeSubentities: Bool, _ body: (StoredObject) throws(KeelError) -> Bool
    ) throws(KeelError) {
        let family = includeSubentities ? model[entity].familySet : [entity]
        var inserted: [ObjectID] = []
        if insertedCount > 0 {
            for (id, row) in rows where row.isInserted && family.contains(id.entity) { inserted.append(id) }
            inserted.sort()
        }
        var next = 0
        var stopped = false
        func emitInserted(before limit: ObjectID?) throws(KeelError) -> Bool {
            while next < inserted.count, limit.map({ inserted[next] < $0 }) ?? true {
                let id = inserted[next]
                next += 1
                guard let row = rows[id] else { continue }
                if try !body(StoredObject(id: id, version: row.version, values: row.values)) { return false }
            }
            return true
        }
        try reader().scan(entity, includeSubentities: includeSubentities) { (stored) throws(KeelError) -> Bool in
            guard try emitInserted(before: stored.id) else {
                stopped = true
                return false
            }
            if deleted.contains(stored.id) { return true }
            let more =
                if let row = rows[stored.id] {
                    try body(StoredObject(id: stored.id, version: row.version, values: row.values))
                } else {
                    try body(stored)
                }
            if !more { stopped = true }
            return more
        }
        if !stopped { _ = try emitInserted(before: nil) }
    }

    func count(_ entity: EntityID, includeSubentities: Bool) throws(KeelError) -> Int {
        let family = includeSubentities ? model[entity].familySet : [entity]
        let touched = rows.keys.contains { family.contains($0.entity) } || deleted.contains { family.contains($0.entity) }
        if !touched { return try reader().count(entity, includeSubentities: includeSubentities) }
        var n = 0
        try scan(entity, includeSubentities: includeSubentities) { _ in
            n += 1
            return true
        }
        return n
    }

    /// Pending rows first (a changed or inserted holder), then the base's holder if this context
    /// has not changed or deleted it.
    func holder(of constraint: Index, values: [Value]) throws(KeelError) -> ObjectID? {
        let family = model[constraint.declaredIn].family
        for (id, row) in rows where family.contains(id.entity) {
            if constraint.fields.map({ row.values[$0] }) == values { return id }
        }
        guard let id = try reader().holder(of: constraint, values: values), !deleted.contains(id), rows[id] == nil else {
            return nil
        }
        return id
    }

    private func isOrdered(_ id: ObjectID, _ field: Int) -> Bool {
        let properties = model[id.entity].properties
        guard properties.indices.contains(field), case .relationship(let r) = properties[field] else { return false }
        return r.isOrdered
    }
}
