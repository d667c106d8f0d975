// INSERT, UPDATE, DELETE, RELATE: decoded and checked first, then applied to the overlay with
// inverses and delete rules (GraphRules) and recorded in the change log, all or nothing.

extension ObjectContext {
    /// `INSERT`: a new object of a concrete entity with wire values (spec/model.md); attributes
    /// left out take their `defaultValue`. Relationships take IDs (`"Department/2"`, or an array
    /// for a to-many). Returns the object's permanent ID.
    @discardableResult
    public func insert(entity name: String, values: JSON = [:]) throws(KeelError) -> ObjectID {
        try insert(entity: name, values: values, fast: true)
    }

    /// `insert(entity:values:)`; `fast: false` skips the fast path (tests compare the two).
    func insert(entity name: String, values: JSON, fast: Bool) throws(KeelError) -> ObjectID {
        let entity = try insertable(name)
        if fast, case .object(let members) = values, let id = try fastInsert(entity, wire: members) { return id }
        let reads = Self.namesRelationship(entity, values.objectValue?.keys)
        if reads { try prepare() }
        let inputs = try inputs(values, for: entity, state: overlay)
        return try insert(entity, inputs, reads: reads)
    }

    /// `INSERT` with typed values: relationships as `.object(id)`/`.null` or `.objects([ids])`.
    @discardableResult
    public func insert(entity name: String, typedValues values: [String: Value]) throws(KeelError) -> ObjectID {
        let entity = try insertable(name)
        if let id = try fastInsert(entity, values) { return id }
        let reads = Self.namesRelationship(entity, values.keys)
        if reads { try prepare() }
        let inputs = try inputs(values, for: entity, state: overlay)
        return try insert(entity, inputs, reads: reads)
    }

    /// Whether an insert with these property names reads the snapshot: only a relationship does
    /// (its targets must exist, its inverses are kept in step). An insert of attributes alone
    /// reads nothing, so it takes no snapshot (spec/protocol.md: the snapshot is taken at the
    /// context's first read) — a client that inserts and saves in a loop then pins no engine
    /// snapshot the store's checkpoints would have to wait for. A name the entity lacks counts
    /// as a read: the general path reports it.
    static func namesRelationship<Names: Sequence<String>>(_ entity: Entity, _ names: Names?) -> Bool {
        guard let names else { return true }
        for name in names {
            guard let field = entity.field(named: name), case .attribute = entity.properties[field] else { return true }
        }
        return false
    }

    /// `UPDATE`: sets the given properties (wire values). A to-many value replaces the members.
    public func update(_ id: ObjectID, values: JSON) throws(KeelError) {
        try prepare()
        try requireExists(id)
        let inputs = try inputs(values, for: model[id.entity], state: overlay)
        try perform { (o) throws(KeelError) in try o.applyUpdate(id, inputs: inputs) }
    }

    /// `UPDATE` with typed values.
    public func update(_ id: ObjectID, typedValues values: [String: Value]) throws(KeelError) {
        try prepare()
        try requireExists(id)
        let inputs = try inputs(values, for: model[id.entity], state: overlay)
        try perform { (o) throws(KeelError) in try o.applyUpdate(id, inputs: inputs) }
    }

    /// `DELETE`: deletes the object and applies its delete rules in this context at once
    /// (cascades deleted recursively, nullified inverses cleared; `deny` is checked at save).
    /// Returns every object deleted, the given one first.
    @discardableResult
    public func delete(_ id: ObjectID) throws(KeelError) -> [ObjectID] {
        try prepare()
        try requireExists(id)
        return try perform { (o) throws(KeelError) in try o.applyDelete(id) }
    }

    /// `RELATE`: removes then adds members of a relationship, inverses kept in step. On an ordered
    /// to-many, `at` places the added objects (nil: at the end). On a to-one, `add` takes one ID
    /// (it becomes the target) and `remove` clears the target if it is the one given.
    public func relate(
        _ id: ObjectID, relationship name: String, add: [ObjectID] = [], remove: [ObjectID] = [], at position: Int? = nil
    ) throws(KeelError) {
        try prepare()
        try requireExists(id)
        let entity = model[id.entity]
        let (field, property) = try property(name, of: entity)
        guard case .relationship(let r) = property else {
            throw KeelError(.type, "\(entity.name).\(name) is an attribute, not a relationship")
        }
        for target in add { try checkTarget(target, of: r, in: entity, state: overlay) }
        for target in remove where !model[r.destination].includes(target.entity) {
            throw KeelError(
                .type, "\(entity.name).\(r.name) takes \(model[r.destination].name) objects, not \(target.text(in: model))")
        }
        if r.isToMany {
            try perform { (o) throws(KeelError) in
                if !remove.isEmpty { try o.applyRemove(id, field: field, members: remove) }
                if !add.isEmpty { try o.applyAdd(id, field: field, members: add, at: position) }
            }
            return
        }
        guard add.count <= 1 else {
            throw KeelError(.type, "\(entity.name).\(r.name) is to-one: add takes at most one object")
        }
        try perform { (o) throws(KeelError) in
            if let current = try o.value(of: id, field: field).objectID, remove.contains(current) {
                try o.applySet(id, field: field, value: .null)
            }
            if let target = add.first { try o.applySet(id, field: field, value: .object(target)) }
        }
    }

    // MARK: Internals

    private func insertable(_ name: String) throws(KeelError) -> Entity {
        // An insert loop names one entity again and again: compared, not hashed into the model.
        if let last = lastInsertable, last.name == name { return last }
        let entity = try entity(named: name)
        guard !entity.isAbstract else {
            let concrete = entity.family.filter { !model[$0].isAbstract }.map { model[$0].name }
            throw KeelError(
                .badRequest,
                "\(entity.name) is abstract: insert one of its sub-entities (\(concrete.joined(separator: ", ")))")
        }
        lastInsertable = entity
        return entity
    }

    private func insert(_ entity: Entity, _ given: [PropertyInput], reads: Bool) throws(KeelError) -> ObjectID {
        var row = [Value](repeating: .null, count: entity.properties.count)
        var inputs = given
        var set = Set<Int>()
        for input in given {
            switch input {
            case .attribute(let field, let value):
                row[field] = value
                set.insert(field)
            case .transient(let field, _): set.insert(field)
            default: break
            }
        }
        for (field, a) in entity.attributes where !set.contains(field) {
            guard let value = a.defaultValue else { continue }
            if a.isTransient { inputs.append(.transient(field: field, value)) } else { row[field] = value }
        }
        let id = try root.newObjectID(for: entity.id)
        guard id.entity == entity.id else {
            throw KeelError(.internal, "the store gave \(id.text(in: model)) for a new \(entity.name)")
        }
        let finalInputs = inputs
        try perform(reads: reads) { (o) throws(KeelError) in try o.applyInsert(id, row: row, inputs: finalInputs) }
        return id
    }

    func requireExists(_ id: ObjectID) throws(KeelError) {
        guard id.entity.index < model.entities.count else {
            throw KeelError(.notFound, "no object \(id.entity)/\(id.number) (the model has no such entity)")
        }
        guard try overlay.exists(id) else {
            throw KeelError(.notFound, "no object \(id.text(in: model)) (it does not exist or is deleted)")
        }
    }
}
