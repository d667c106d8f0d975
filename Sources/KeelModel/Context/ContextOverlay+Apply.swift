// Changes applied to the overlay and recorded in the log, once their inputs are decoded and
// checked: the same entry points serve a context's own commands and the replay of a child
// context's change log into its parent.

/// One decoded property value of an insert or update.
enum PropertyInput {
    case attribute(field: Int, Value)
    case transient(field: Int, Value)
    case toOne(field: Int, ObjectID?)
    case toMany(field: Int, [ObjectID])
}

extension ContextOverlay {
    /// Inserts a new object: `row` holds every persistent attribute (defaults applied, to-ones
    /// null); relationships follow with their inverses kept in step.
    mutating func applyInsert(_ id: ObjectID, row: [Value], inputs: [PropertyInput]) throws(KeelError) {
        insertRow(id, values: row)
        for case .toOne(let field, let target?) in inputs {
            try GraphRules.setToOne(&self, id, field: field, to: target)
        }
        sealInsert(id)
        for input in inputs {
            switch input {
            case .transient(let field, let value): setTransient(id, field: field, value: value)
            case .toMany(let field, let targets) where !targets.isEmpty:
                try applyAdd(id, field: field, members: targets, at: nil)
            default: break
            }
        }
    }

    /// Sets attributes and relationships of an existing object. A to-many value replaces the
    /// relationship's members (in the given order for an ordered one).
    mutating func applyUpdate(_ id: ObjectID, inputs: [PropertyInput]) throws(KeelError) {
        for input in inputs {
            switch input {
            case .attribute(let field, let value): try applySet(id, field: field, value: value)
            case .transient(let field, let value): setTransient(id, field: field, value: value)
            case .toOne(let field, let target): try applySet(id, field: field, value: target.map(Value.object) ?? .null)
            case .toMany(let field, let targets):
                let current = try members(of: id, field: field)
                let ordered = isOrderedRelationship(id.entity, field)
                if ordered {
                    if current == targets { continue }
                    if !current.isEmpty { try applyRemove(id, field: field, members: current) }
                    if !targets.isEmpty { try applyAdd(id, field: field, members: targets, at: nil) }
                } else {
                    let wanted = Set(targets)
                    let present = Set(current)
                    let gone = current.filter { !wanted.contains($0) }
                    var seen: Set<ObjectID> = []
                    let new = targets.filter { !present.contains($0) && seen.insert($0).inserted }
                    if !gone.isEmpty { try applyRemove(id, field: field, members: gone) }
                    if !new.isEmpty { try applyAdd(id, field: field, members: new, at: nil) }
                }
            }
        }
    }

    /// One attribute (written as is) or to-one (with its inverse) of an existing object.
    mutating func applySet(_ id: ObjectID, field: Int, value: Value) throws(KeelError) {
        let entity = model[id.entity]
        guard entity.properties.indices.contains(field) else {
            throw KeelError(.noSuchProperty, "\(entity.name) has no property #\(field)")
        }
        switch entity.properties[field] {
        case .attribute:
            guard try exists(id) else {
                throw KeelError(.notFound, "no object \(id.text(in: model)) (it does not exist or is deleted)")
            }
            if try self.value(of: id, field: field) == value { return }
            try writeField(id, field: field, value: value)
        case .relationship(let r):
            guard !r.isToMany else {
                throw KeelError(.type, "\(entity.name).\(r.name) is a to-many relationship")
            }
            if try self.value(of: id, field: field) == value { return }
            guard value.isNull || value.objectID != nil else {
                throw KeelError(.type, "\(entity.name).\(r.name) takes an object ID or null")
            }
            try GraphRules.setToOne(&self, id, field: field, to: value.objectID)
        }
        append(.set(id, field: field, value: value))
    }

    mutating func applyAdd(_ id: ObjectID, field: Int, members targets: [ObjectID], at position: Int?) throws(KeelError) {
        guard try exists(id) else {
            throw KeelError(.notFound, "no object \(id.text(in: model)) (it does not exist or is deleted)")
        }
        try GraphRules.add(&self, id, field: field, members: targets, at: position)
        append(.add(id, field: field, members: targets, at: position))
    }

    mutating func applyRemove(_ id: ObjectID, field: Int, members targets: [ObjectID]) throws(KeelError) {
        guard try exists(id) else {
            throw KeelError(.notFound, "no object \(id.text(in: model)) (it does not exist or is deleted)")
        }
        try GraphRules.remove(&self, id, field: field, members: targets)
        append(.remove(id, field: field, members: targets))
    }

    /// Deletes with delete rules (cascade and nullify at once; `deny` is checked by the save).
    mutating func applyDelete(_ id: ObjectID) throws(KeelError) -> [ObjectID] {
        let (deleted, _) = try GraphRules.delete(&self, id)
        append(.delete(id))
        return deleted
    }

    func isOrderedRelationship(_ entity: EntityID, _ field: Int) -> Bool {
        let properties = model[entity].properties
        guard properties.indices.contains(field), case .relationship(let r) = properties[field] else { return false }
        return r.isOrdered
    }
}
