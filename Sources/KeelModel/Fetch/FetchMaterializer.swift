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
        var objects = try flushReversed()
        if let keyPaths = prepared.keyPaths {
            // Key paths in a dictionary's properties: read through the fetch's graph, row by row.
            while let object = objects.popLast() {
                guard try body(try Self.row(object, keyPaths, graph: graph, prepared)) else { return false }
            }
            return true
        }
        while let object = objects.popLast() {
            guard try body(Self.row(consume object, prepared)) else { return false }
        }
        return true
    }

    /// What is buffered, materialized last row first: the caller hands the rows over in order by
    /// `popLast` (`row(_:_:)`). Each object is moved into its row, not copied out of the array (a
    /// copy retains its values, entity and inclusions, and the array's destruction releases them
    /// again), and the list needs no `reverse()` (which copied each object, ~1k instructions a
    /// chunk of ten).
    mutating func flushReversed() throws(KeelError) -> [ManagedObject] {
        guard !buffer.isEmpty else { return [] }
        // The rows are handed over, not shared, so their value arrays are the materializer's to
        // change in place (a shared array would be copied at the first change, once per row).
        var rows: [StoredObject] = []
        swap(&rows, &buffer)
        flushed = true
        // The overlay borrowed through a local reference to the graph: `graph.state` read through
        // `self` (inout here) was copied for the call, a dozen retains and releases a chunk.
        let graph = self.graph
        return try Self.managedObjects(consume rows, state: graph.state, include: prepared.inclusions, reversed: true)
    }

    /// The row handed over for `object` (one of `flushReversed()`'s) of a fetch of `prepared`.
    static func row(_ object: consuming ManagedObject, _ prepared: PreparedFetch) -> FetchRow {
        let id = object.id
        return FetchRow(id: id, result: prepared.result, object: object, fields: prepared.fields)
    }

    /// The row of a `dictionaries` fetch whose properties hold key paths or `"$id"`: each name's
    /// value in the request's order, a key path's read from the objects on its way.
    static func row(_ object: ManagedObject, _ keyPaths: [Projected], graph: FetchGraph, _ prepared: PreparedFetch) throws(KeelError) -> FetchRow {
        var projected: [FetchRow.ProjectedValue] = []
        projected.reserveCapacity(keyPaths.count)
        for item in keyPaths {
            switch item {
            case .field(let field):
                let property = object.entity.properties[field]
                projected.append(.init(name: property.name, property: property, value: object.values[field]))
            case .path(let path):
                projected.append(.init(name: path.name, property: path.property, value: try path.value(from: object, graph: graph)))
            case .objectID:
                projected.append(.init(name: Projected.objectIDName, property: nil, value: .object(object.id)))
            }
        }
        return FetchRow(id: object.id, result: prepared.result, object: object, fields: prepared.fields, projected: projected)
    }

    // MARK: Objects in batches

    /// The values of `rows` as the context reads them, with `include` embedded; in the rows'
    /// order, or last row first when `reversed` (`flush` hands them on by `popLast`: no
    /// `reverse()`, which copies each object).
    static func managedObjects(
        _ rows: consuming [StoredObject], state: ContextOverlay, include: [PreparedFetch.Inclusion], reversed: Bool = false
    ) throws(KeelError) -> [ManagedObject] {
        guard !rows.isEmpty else { return [] }
        let model = state.model
        let n = rows.count
        // A chunk's rows are nearly always of one entity: every row has the same to-many fields,
        // so a field's members come back one list per row, in row order (no position list).
        let firstEntity = rows[0].id.entity
        let oneEntity = !rows.contains { $0.id.entity != firstEntity }
        // First pass, reading the rows in place (nothing written): the to-one targets that might
        // be missing, and each to-many field's owners — the entity declaring its relationship
        // (sibling sub-entities may have different ones at one field number), whether its
        // members may be missing, the owners' IDs, and for a chunk of several entities each
        // row's place in that list (-1: the row has no such field; a chunk has a handful of such
        // fields: searched in place, no hashing per row).
        var uncertain: [ObjectID] = []
        var manyFields: [ManyField] = []
        var shapeOf = firstEntity
        var shape = model.rowShape(of: shapeOf)
        if oneEntity, !shape.toMany.isEmpty {
            var ids: [ObjectID] = []
            ids.reserveCapacity(n)
            for i in rows.indices { ids.append(rows[i].id) }
            for m in shape.toMany.indices {
                let (field, declaredIn, mayDangle) = shape.toMany[m]
                manyFields.append(ManyField(field: field, declaredIn: declaredIn, mayDangle: mayDangle, ids: ids, slots: nil))
            }
        }
        // By index, the row's ID read in place: `enumerated()` copied each row (a retain and a
        // release of its values list per row), and a loop over a shape's list copies the list
        // (another pair per list and row).
        for i in rows.indices {
            let id = rows[i].id
            if shapeOf != id.entity {
                shape = model.rowShape(of: id.entity)
                shapeOf = id.entity
            }
            if !oneEntity {
                for m in shape.toMany.indices {
                    let (field, declaredIn, mayDangle) = shape.toMany[m]
                    let k: Int
                    if let found = manyFields.firstIndex(where: { $0.field == field && $0.declaredIn == declaredIn }) {
                        k = found
                    } else {
                        var ids: [ObjectID] = []
                        ids.reserveCapacity(n - i)
                        manyFields.append(ManyField(field: field, declaredIn: declaredIn, mayDangle: mayDangle, ids: ids, slots: Array(repeating: -1, count: n)))
                        k = manyFields.count - 1
                    }
                    let place = manyFields[k].ids.count
                    manyFields[k].slots?[i] = place
                    manyFields[k].ids.append(id)
                }
            }
            for o in shape.toOne.indices {
                let (field, mayDangle) = shape.toOne[o]
                guard mayDangle, case .object(let target) = rows[i].values[field] else { continue }
                // A deleted target is cleared in the second pass, with no read.
                if (state.deleted.isEmpty || !state.deleted.contains(target)) && state.rows[target] == nil {
                    uncertain.append(target)
                }
            }
        }
        if manyFields.count > 1 {
            manyFields.sort { ($0.field, $0.declaredIn.index) < ($1.field, $1.declaredIn.index) }
        }
        // Each field's members, kept with it (no list of them per chunk).
        for k in manyFields.indices {
            let lists = try Self.members(manyFields[k].ids, field: manyFields[k].field, state: state)
            manyFields[k].lists = lists
            guard manyFields[k].mayDangle, let lists else { continue }
            for target in lists.joined() where !state.deleted.contains(target) && state.rows[target] == nil {
                uncertain.append(target)
            }
        }
        let missing = try Self.missing(uncertain, state: state)
        let filtering = !missing.isEmpty || !state.deleted.isEmpty
        // Second pass: each row's values moved out of it (not shared with it, so they are changed
        // in place — unless a fetched property needs the rows as stored, its `$FETCH_SOURCE`),
        // finished in a list of their own (one uniqueness check a write, not the two of a write
        // into a list of lists), and moved into the row's object.
        let keepsRows = include.contains { if case .fetched = $0 { true } else { false } }
        var out: [ManagedObject] = []
        out.reserveCapacity(n)
        shapeOf = firstEntity
        shape = model.rowShape(of: shapeOf)
        var entity = model[firstEntity]
        for j in 0..<n {
            let i = reversed ? n - 1 - j : j
            let id = rows[i].id
            if shapeOf != id.entity {
                shape = model.rowShape(of: id.entity)
                shapeOf = id.entity
                entity = model[id.entity]
            }
            var values: [Value] = []
            if keepsRows {
                values = rows[i].values
            } else {
                swap(&values, &rows[i].values)  // moved out: no reference taken and dropped per row
            }
            if !shape.transients.isEmpty {
                let transients = state.transients[id]
                for (field, fallback) in shape.transients { values[field] = transients?[field] ?? fallback }
            }
            for o in shape.toOne.indices {
                let field = shape.toOne[o].0
                switch values[field] {
                case .null: continue  // not written again
                case .object(let target):
                    // Neither set hashed when it is empty (nothing deleted, nothing missing).
                    guard (!state.deleted.isEmpty && state.deleted.contains(target)) || (!missing.isEmpty && missing.contains(target)) else {
                        continue
                    }
                    values[field] = .null
                default: values[field] = .null
                }
            }
            for k in manyFields.indices {
                let place: Int
                if let slots = manyFields[k].slots {
                    place = slots[i]
                    guard place >= 0 else { continue }
                } else {
                    place = i
                }
                guard let lists = manyFields[k].lists else {
                    values[manyFields[k].field] = .objects([])
                    continue
                }
                let list = lists[place]
                values[manyFields[k].field] = .objects(filtering ? list.filter { !missing.contains($0) && !state.deleted.contains($0) } : list)
            }
            out.append(
                ManagedObject(
                    // The values consumed (without `consume`, retained for the object and
                    // released after it).
                    id: id, entity: entity, version: rows[i].version, values: consume values,
                    // `Dictionary()`, not the `[:]` literal (a call building it from an empty
                    // list of pairs, per row).
                    included: Dictionary()))
        }
        guard !include.isEmpty else { return out }
        // `include`: out[j] is the object of row `reversed ? n - 1 - j : j`.
        var included: [[String: [ManagedObject]]] = Array(repeating: [:], count: n)
        for inclusion in include {
            switch inclusion {
            case .relationship(let name, let field, _):
                var targets: [ObjectID] = []
                var seen = Set<ObjectID>()
                for j in out.indices {
                    for t in Self.targets(out[reversed ? n - 1 - j : j].values[field]) where seen.insert(t).inserted { targets.append(t) }
                }
                let loaded = try Self.load(targets, state: state)
                let embedded = try Self.managedObjects(loaded.compactMap { $0 }, state: state, include: [])
                let byID = Dictionary(embedded.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
                for j in out.indices { included[j][name] = Self.targets(out[j].values[field]).compactMap { byID[$0] } }
            case .fetched(let property):
                for j in out.indices {
                    included[j][property.name] = try Self.fetched(property, source: rows[reversed ? n - 1 - j : j], state: state)
                }
            }
        }
        for j in out.indices {
            let object = out[j]
            out[j] = ManagedObject(id: object.id, entity: object.entity, version: object.version, values: object.values, included: included[j])
        }
        return out
    }

    /// A to-many field of a chunk's rows: the entity declaring its relationship, whether its
    /// members may be missing, its owners' IDs in row order, and — for a chunk of several
    /// entities — each row's place in that list (-1: the row has no such field); nil when every
    /// row is an owner (a chunk of one entity: row i's place is i); once read, the owners'
    /// members, one list per owner (nil: no owner has a member, known without a read).
    struct ManyField {
        let field: Int
        let declaredIn: EntityID
        let mayDangle: Bool
        var ids: [ObjectID]
        var slots: [Int]?
        var lists: [[ObjectID]]? = nil
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
