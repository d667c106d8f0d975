// Turns fetched rows into result values in chunks, so the reads a result needs beyond the row
// are batched: for a chunk of up to 128 objects, one read per to-many relationship (members of
// every object of the chunk), one read for the to-one targets that might be missing, and one
// read for the objects of each `include` (prefetching, as Core Data's
// `relationshipKeyPathsForPrefetching`). A fetched property is a fetch of its own per object
// (through the planner, so `bookUUID == $FETCH_SOURCE.uuid` reads the index), evaluated every
// time it is asked for: nothing is cached across saves.

import KeelStorage

struct FetchMaterializer {
    static let chunkSize = 128

    /// The fetch's state (`graph.state`), shared with its executor, not copied.
    let graph: FetchGraph
    let prepared: PreparedFetch
    private var buffer: [StoredObject] = []
    /// Whether a chunk was handed over (later chunks are reserved whole).
    private var flushed = false

    init(graph: FetchGraph, prepared: PreparedFetch) {
        self.graph = graph
        self.prepared = prepared
    }

    var model: Model { graph.state.model }

    /// Takes one row; hands finished rows to `body` a chunk at a time. False once `body` stopped.
    /// `body` owns each row it is given (a consumer that keeps it moves it, no copy).
    mutating func add(_ row: StoredObject, _ body: (consuming FetchRow) throws(KeelError) -> Bool) throws(KeelError) -> Bool {
        let result = prepared.result
        if result == .ids || result == .count {
            return try body(FetchRow(id: row.id, result: result, object: nil, fields: nil))
        }
        // The first chunk starts with room for 16 rows (most fetches end within it; reserving
        // 128 per request cost more than it saved), the later ones with room for a whole chunk.
        if buffer.capacity == 0 { buffer.reserveCapacity(flushed ? Self.chunkSize : 16) }
        buffer.append(row)
        if buffer.count >= Self.chunkSize { return try flush(body) }
        return true
    }

    /// Hands over what is buffered.
    mutating func flush(_ body: (consuming FetchRow) throws(KeelError) -> Bool) throws(KeelError) -> Bool {
        guard !buffer.isEmpty else { return true }
        // The rows are handed over, not shared, so their value arrays are the materializer's to
        // change in place (a shared array would be copied at the first change, once per row).
        var rows: [StoredObject] = []
        swap(&rows, &buffer)
        flushed = true
        var objects = try Self.managedObjects(consume rows, state: graph.state, include: prepared.inclusions)
        // Each object is moved into its row, not copied out of the array (a copy retains its
        // values, entity and inclusions, and the array's destruction releases them again): the
        // list reversed (its elements moved, nothing retained) and handed on by `popLast`.
        objects.reverse()
        let result = prepared.result, fields = prepared.fields
        while let object = objects.popLast() {
            let id = object.id
            guard try body(FetchRow(id: id, result: result, object: consume object, fields: fields)) else {
                return false
            }
        }
        return true
    }

    // MARK: Objects in batches

    /// The values of `rows` as the context reads them, with `include` embedded.
    static func managedObjects(
        _ rows: consuming [StoredObject], state: ContextOverlay, include: [PreparedFetch.Inclusion]
    ) throws(KeelError) -> [ManagedObject] {
        guard !rows.isEmpty else { return [] }
        let model = state.model
        // The value arrays are moved out of the rows (not shared with them), so filling in
        // to-many members and transients changes them in place instead of copying each — unless
        // a fetched property needs the rows as stored (its `$FETCH_SOURCE`).
        let keepsRows = include.contains { if case .fetched = $0 { true } else { false } }
        var values: [[Value]] = []
        values.reserveCapacity(rows.count)
        for i in rows.indices {
            if keepsRows {
                values.append(rows[i].values)
            } else {
                // Moved out (swapped with an empty list): no reference taken and dropped per row.
                values.append([])
                swap(&values[i], &rows[i].values)
            }
        }
        let rows = rows
        // To-one targets that might be missing, and to-many members, per field; what each
        // entity's rows need is its `RowShape` (worked out with the model).
        var uncertain: [ObjectID] = []
        // To-many field and the entity declaring its relationship (sibling sub-entities may have
        // different ones at one field number), whether its members may be missing, the rows that
        // have it (a chunk has a handful of such fields: searched in place, no hashing per row).
        var manyFields: [(field: Int, declaredIn: EntityID, mayDangle: Bool, positions: [Int])] = []
        var shapeOf = rows[0].id.entity
        var shape = model.rowShape(of: shapeOf)
        // By index, the row's ID read in place: `enumerated()` copied each row (a retain and a
        // release of its emptied values list per row), and a loop over a shape's list copies
        // the list (another pair per list and row).
        for i in rows.indices {
            let id = rows[i].id
            if shapeOf != id.entity {
                shape = model.rowShape(of: id.entity)
                shapeOf = id.entity
            }
            if !shape.transients.isEmpty {
                let transients = state.transients[id]
                for (field, fallback) in shape.transients { values[i][field] = transients?[field] ?? fallback }
            }
            for m in shape.toMany.indices {
                let (field, declaredIn, mayDangle) = shape.toMany[m]
                if let k = manyFields.firstIndex(where: { $0.field == field && $0.declaredIn == declaredIn }) {
                    manyFields[k].positions.append(i)
                } else {
                    var positions: [Int] = []
                    positions.reserveCapacity(rows.count - i)
                    positions.append(i)
                    manyFields.append((field, declaredIn, mayDangle, positions))
                }
            }
            for o in shape.toOne.indices {
                let (field, mayDangle) = shape.toOne[o]
                guard case .object(let target) = values[i][field] else {
                    values[i][field] = .null
                    continue
                }
                if !state.deleted.isEmpty, state.deleted.contains(target) {  // not hashed when nothing is deleted
                    values[i][field] = .null
                } else if mayDangle, state.rows[target] == nil {
                    uncertain.append(target)
                }
            }
        }
        manyFields.sort { ($0.field, $0.declaredIn.index) < ($1.field, $1.declaredIn.index) }
        // Per entry of manyFields, per row of it; nil: no row has a member (known without a read).
        var members: [[[ObjectID]]?] = []
        members.reserveCapacity(manyFields.count)
        for (field, _, mayDangle, positions) in manyFields {
            let lists = try Self.members(positions.map { rows[$0].id }, field: field, state: state)
            members.append(lists)
            guard mayDangle, let lists else { continue }
            for target in lists.joined() where !state.deleted.contains(target) && state.rows[target] == nil {
                uncertain.append(target)
            }
        }
        let missing = try Self.missing(uncertain, state: state)
        if !missing.isEmpty {
            for (i, row) in rows.enumerated() {
                for (field, _) in model.rowShape(of: row.id.entity).toOne {
                    if case .object(let target) = values[i][field], missing.contains(target) { values[i][field] = .null }
                }
            }
        }
        let filtering = !missing.isEmpty || !state.deleted.isEmpty
        for (k, (field, _, _, positions)) in manyFields.enumerated() {
            guard let lists = members[k] else {
                for i in positions { values[i][field] = .objects([]) }
                continue
            }
            for (n, i) in positions.enumerated() {
                let list = lists[n]
                values[i][field] = .objects(filtering ? list.filter { !missing.contains($0) && !state.deleted.contains($0) } : list)
            }
        }
        var included: [[String: [ManagedObject]]] = include.isEmpty ? [] : Array(repeating: [:], count: rows.count)
        for inclusion in include {
            switch inclusion {
            case .relationship(let name, let field, _):
                var targets: [ObjectID] = []
                var seen = Set<ObjectID>()
                for v in values {
                    for t in Self.targets(v[field]) where seen.insert(t).inserted { targets.append(t) }
                }
                let loaded = try Self.load(targets, state: state)
                let embedded = try Self.managedObjects(loaded.compactMap { $0 }, state: state, include: [])
                let byID = Dictionary(embedded.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
                for i in rows.indices { included[i][name] = Self.targets(values[i][field]).compactMap { byID[$0] } }
            case .fetched(let property):
                for (i, row) in rows.enumerated() {
                    included[i][property.name] = try Self.fetched(property, source: row, state: state)
                }
            }
        }
        var out: [ManagedObject] = []
        out.reserveCapacity(rows.count)
        var entity = model[rows[0].id.entity]
        for i in rows.indices {
            if entity.id != rows[i].id.entity { entity = model[rows[i].id.entity] }
            // The row's values moved into its object (`values` is not read again).
            var objectValues: [Value] = []
            swap(&objectValues, &values[i])
            out.append(
                ManagedObject(
                    id: rows[i].id, entity: entity, version: rows[i].version, values: objectValues,
                    // `Dictionary()`, not the `[:]` literal (a call building it from an empty
                    // list of pairs, per row).
                    included: include.isEmpty ? Dictionary() : included[i]))
        }
        return out
    }

    /// The objects of a fetched property for one source object: its predicate bound with
    /// `$FETCH_SOURCE` = the source, its sort, planned and run over the same state.
    static func fetched(_ property: FetchedProperty, source: StoredObject, state: ContextOverlay) throws(KeelError) -> [ManagedObject] {
        let model = state.model
        let request = FetchRequest(entity: model[property.destination].name, predicate: property.predicate, sort: property.sort)
        let prepared = try PreparedFetch(request, model: model, fetchSource: FetchSource(object: source, graph: state))
        let graph = FetchGraph(state)
        let plan = try prepared.plan(in: graph, explaining: false)
        var rows: [StoredObject] = []
        try FetchExecutor(graph: graph, plan: plan, ordering: prepared.ordering).run { row in
            rows.append(row)
            return true
        }
        return try managedObjects(rows, state: state, include: [])
    }

    static func targets(_ value: Value) -> [ObjectID] {
        switch value {
        case .object(let id): [id]
        case .objects(let ids): ids
        default: []
        }
    }

    /// Members of `field` for each object: pending edits from the overlay, the rest in one read;
    /// nil when none of them has a member, known without a read (no pending edit of any, their
    /// link trees already found missing by the snapshot: `membersUnlessNone`).
    static func members(_ ids: [ObjectID], field: Int, state: ContextOverlay) throws(KeelError) -> [[ObjectID]]? {
        let snapshot = state.base?.objectSnapshot
        // No pending edit of any of them (the usual fetch): the snapshot's lists are the answer,
        // as they come (no second list of lists filled from them).
        let untouched = state.rows.isEmpty && state.members.isEmpty && state.deleted.isEmpty
        if let snapshot, untouched || !ids.contains(where: { state.hasPendingMembers($0, field: field) }) {
            return try snapshot.membersUnlessNone(of: ids, field: field)
        }
        var out = [[ObjectID]](filling: [], count: ids.count)
        var fromBase: [Int] = []
        fromBase.reserveCapacity(ids.count)
        for (i, id) in ids.enumerated() {
            if state.hasPendingMembers(id, field: field) {
                out[i] = try state.members(of: id, field: field)
            } else {
                fromBase.append(i)
            }
        }
        guard !fromBase.isEmpty else { return out }
        if let snapshot {
            let lists = try snapshot.members(of: fromBase.map { ids[$0] }, field: field)
            for (n, i) in fromBase.enumerated() { out[i] = lists[n] }
        } else {
            for i in fromBase { out[i] = try state.members(of: ids[i], field: field) }
        }
        return out
    }

    /// Which of `ids` (none deleted or pending in the context) do not exist in the snapshot.
    static func missing(_ ids: [ObjectID], state: ContextOverlay) throws(KeelError) -> Set<ObjectID> {
        guard !ids.isEmpty else { return [] }
        let unique = Array(Set(ids))
        let rows = try load(unique, state: state)
        return Set(zip(unique, rows).compactMap { $1 == nil ? $0 : nil })
    }

    /// Rows as the context sees them: pending ones from the overlay, the rest in one read per store.
    static func load(_ ids: [ObjectID], state: ContextOverlay) throws(KeelError) -> [StoredObject?] {
        var out = [StoredObject?](filling: nil, count: ids.count)
        var fromBase: [Int] = []
        for (i, id) in ids.enumerated() {
            if state.deleted.contains(id) { continue }
            if let row = state.rows[id] {
                out[i] = StoredObject(id: id, version: row.version, values: row.values)
            } else if id.entity.index < state.model.entities.count {
                fromBase.append(i)
            }
        }
        guard !fromBase.isEmpty else { return out }
        if let snapshot = state.base?.objectSnapshot {
            let rows = try snapshot.objects(fromBase.map { ids[$0] })
            for (n, i) in fromBase.enumerated() { out[i] = rows[n] }
        } else {
            for i in fromBase { out[i] = try state.object(ids[i]) }
        }
        return out
    }
}

/// What materializing a row of one entity needs beyond its stored values: its transient
/// attributes (with their defaults), its to-many fields (members read in a batch), and its to-one
/// fields with whether their targets may be missing. Worked out once per entity when the model is
/// built (`Model.rowShape(of:)`), not per fetch.
struct RowShape: Sendable {
    var transients: [(Int, Value)] = []
    /// To-many fields, with the entity declaring the relationship and whether its members may be
    /// missing.
    var toMany: [(Int, EntityID, Bool)] = []
    var toOne: [(Int, Bool)] = []

    init(_ entity: Entity, entities: [Entity]) {
        for (field, property) in entity.properties.enumerated() {
            switch property {
            case .attribute(let a) where a.isTransient: transients.append((field, a.defaultValue ?? .null))
            case .attribute: continue
            case .relationship(let r) where r.isToMany: toMany.append((field, r.declaredIn, ObjectContext.mayDangle(r, entities)))
            case .relationship(let r): toOne.append((field, ObjectContext.mayDangle(r, entities)))
            }
        }
    }
}
