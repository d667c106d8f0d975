// GET: one object as the context sees it (snapshot + pending changes), as an immutable value.

extension ObjectContext {
    /// `GET`: the object, with the objects of the relationships named in `include` embedded.
    /// Throws `NOT_FOUND` when the object does not exist in this context (or is deleted here).
    public func get(_ id: ObjectID, include: [String] = []) throws(KeelError) -> ManagedObject {
        let state = try readState()
        guard id.entity.index < model.entities.count, let row = try state.object(id) else {
            throw KeelError(.notFound, "no object \(describe(id)) (it does not exist or is deleted)")
        }
        let entity = model[id.entity]
        var fields: [(name: String, field: Int, relationship: Relationship)] = []
        var fetched: [FetchedProperty] = []
        for name in include {
            guard let field = entity.field(named: name) else {
                if let property = entity.fetchedProperty(named: name) {
                    fetched.append(property)
                    continue
                }
                throw KeelError(.noSuchProperty, "\(entity.name) has no property \"\(name)\"")
            }
            guard case .relationship(let r) = entity.properties[field] else {
                throw KeelError(.badRequest, "\(entity.name).\(name) is an attribute: only relationships can be included")
            }
            fields.append((name, field, r))
        }
        let object = try Self.managedObject(row, state: state)
        guard !fields.isEmpty || !fetched.isEmpty else { return object }
        var included: [String: [ManagedObject]] = [:]
        for property in fetched {
            // Evaluated now, over this context's state: never cached across saves.
            included[property.name] = try FetchMaterializer.fetched(property, source: row, state: state)
        }
        for (name, field, _) in fields {
            var embedded: [ManagedObject] = []
            let targets: [ObjectID] =
                switch object.values[field] {
                case .object(let target): [target]
                case .objects(let targets): targets
                default: []
                }
            for target in targets {
                if let targetRow = try state.object(target) { embedded.append(try Self.managedObject(targetRow, state: state)) }
            }
            included[name] = embedded
        }
        return ManagedObject(id: id, entity: entity, version: row.version, values: object.values, included: included)
    }

    /// Builds the value of one object: relationships to missing objects read as missing.
    static func managedObject(_ row: StoredObject, state: ContextOverlay) throws(KeelError) -> ManagedObject {
        let model = state.model
        let entity = model[row.id.entity]
        var values = row.values
        let transients = state.transients[row.id]
        // The to-many lists, read together (one engine read for a saved object).
        let toMany = entity.toManyFields
        let lists = toMany.count > 1 ? try state.members(of: row.id, fields: toMany) : nil
        var list = 0
        for (field, property) in entity.properties.enumerated() {
            switch property {
            case .attribute(let a) where a.isTransient:
                values[field] = transients?[field] ?? a.defaultValue ?? .null
            case .attribute:
                continue
            case .relationship(let r):
                var members: [ObjectID]?
                if r.isToMany, let lists {
                    members = lists[list]
                    list += 1
                }
                values[field] = try relationshipValue(row, field: field, r, state: state, members: members)
            }
        }
        return ManagedObject(id: row.id, entity: entity, version: row.version, values: values)
    }

    /// A relationship's value; for a to-many, `members` are its list when already read.
    static func relationshipValue(
        _ row: StoredObject, field: Int, _ r: Relationship, state: ContextOverlay, members read: [ObjectID]? = nil
    ) throws(KeelError) -> Value {
        if !r.isToMany {
            guard let target = row.values[field].objectID, try state.exists(target) else { return .null }
            return .object(target)
        }
        var members: [ObjectID]
        if let read { members = read } else { members = try state.members(of: row.id, field: field) }
        if mayDangle(r, state.model) {
            var live: [ObjectID] = []
            live.reserveCapacity(members.count)
            for member in members where try state.exists(member) { live.append(member) }
            members = live
        }
        return .objects(members)
    }

    /// A to-many can hold a missing member only when deleting a member leaves it alone: the
    /// inverse's rule is `noAction` (or there is no inverse).
    static func mayDangle(_ r: Relationship, _ model: Model) -> Bool { mayDangle(r, model.entities) }

    /// `mayDangle` with the model's entities (while the model is being built).
    static func mayDangle(_ r: Relationship, _ entities: [Entity]) -> Bool {
        guard let inverse = r.inverse, case .relationship(let back)? = entities[r.destination.index].property(named: inverse) else {
            return true
        }
        return back.deleteRule == .noAction
    }

    func describe(_ id: ObjectID) -> String {
        id.entity.index < model.entities.count ? id.text(in: model) : "\(id.entity)/\(id.number)"
    }
}

/// One object offered to a fetch's filter: its fields by name, relationships read on demand
/// through the context's state (this is what NSPredicate-style predicates evaluate against).
public struct ObjectValues {
    public let id: ObjectID
    public let entity: Entity
    public let version: UInt64
    let row: StoredObject
    let state: ContextOverlay

    init(row: StoredObject, state: ContextOverlay) {
        self.id = row.id
        self.entity = state.model[row.id.entity]
        self.version = row.version
        self.row = row
        self.state = state
    }

    /// The value of a field: attributes as stored (transients as the context holds them), to-one
    /// `.object`/`.null`, to-many `.objects`; missing objects read as missing.
    public func value(field: Int) throws(KeelError) -> Value {
        guard entity.properties.indices.contains(field) else {
            throw KeelError(.noSuchProperty, "\(entity.name) has no property #\(field)")
        }
        switch entity.properties[field] {
        case .attribute(let a) where a.isTransient:
            return state.transients[id]?[field] ?? a.defaultValue ?? .null
        case .attribute:
            return row.values[field]
        case .relationship(let r):
            return try ObjectContext.relationshipValue(row, field: field, r, state: state)
        }
    }

    /// The value of a property by name; nil when the entity has none (or it cannot be read).
    public subscript(name: String) -> Value? {
        guard let field = entity.field(named: name) else { return nil }
        return try? value(field: field)
    }

    /// The object a to-one relationship leads to, for key paths (`department.name`).
    public func related(_ name: String) throws(KeelError) -> ObjectValues? {
        guard let field = entity.field(named: name) else {
            throw KeelError(.noSuchProperty, "\(entity.name) has no property \"\(name)\"")
        }
        guard case .object(let target) = try value(field: field), let row = try state.object(target) else { return nil }
        return ObjectValues(row: row, state: state)
    }
}

extension Model {
    /// Whether `entity`'s relationship `name` may hold targets that were deleted, with no change
    /// of the holder recorded: its inverse's delete rule is `noAction`, or it has no inverse
    /// (`ObjectContext.mayDangle`). False for an attribute or an unknown name.
    public func relationshipMayDangle(_ name: String, of entity: Entity) -> Bool {
        guard case .relationship(let r)? = entity.property(named: name) else { return false }
        return ObjectContext.mayDangle(r, self)
    }
}
