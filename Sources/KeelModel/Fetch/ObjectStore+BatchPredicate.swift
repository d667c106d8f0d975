// BATCH.UPDATE and BATCH.DELETE with a predicate: the objects are chosen by the planner (indexes
// included) over a snapshot taken inside the batch's save, under the save lock — so no other
// save comes between choosing and changing — and then changed as the closure variants change
// them (ObjectStore+Batch.swift): one transaction, validated, inverses and delete rules applied.

extension ObjectStore {
    /// Sets `values` on every object of `entity` (and its sub-entities) that `predicate` matches
    /// (every object when nil).
    public func batchUpdate(
        entity: EntityID, includeSubentities: Bool = true, predicate: BoundPredicate?, values: [Int: Value]
    ) throws(KeelError) -> SaveResult {
        try checkEntity(entity)
        var set = 0
        var result = try performSave(stores: [storeIndex(of: entity)]) { (session, marks) throws(KeelError) -> [ObjectID: ObjectID] in
            let matched = try matching(entity, includeSubentities, predicate)
            let replay = SaveReplay(session: session, policy: .error, reservedMarks: marks)
            let ordered = values.sorted { $0.key < $1.key }
            set = 0
            for id in matched where try session.exists(id) {
                for (field, value) in ordered { try replay.set(id, field, value) }
                set += 1
            }
            return [:]
        }
        result.matched = set
        return result
    }

    /// Deletes every object of `entity` (and its sub-entities) that `predicate` matches, with
    /// delete rules (cascades reach further objects; a `deny` fails the whole batch).
    public func batchDelete(entity: EntityID, includeSubentities: Bool = true, predicate: BoundPredicate?) throws(KeelError) -> SaveResult {
        try checkEntity(entity)
        return try performSave(stores: [storeIndex(of: entity)]) { (session, marks) throws(KeelError) -> [ObjectID: ObjectID] in
            let matched = try matching(entity, includeSubentities, predicate)
            var editor = session
            for id in matched where try session.exists(id) {
                let outcome = try GraphRules.delete(&editor, id)
                session.denials.append(contentsOf: outcome.denials)
            }
            return [:]
        }
    }

    /// The IDs `predicate` matches in the current committed state, in ID order.
    func matching(_ entity: EntityID, _ includeSubentities: Bool, _ predicate: BoundPredicate?) throws(KeelError) -> [ObjectID] {
        let snapshot = try self.snapshot()
        defer { snapshot.close() }
        var state = ContextOverlay(model: model)
        state.base = snapshot
        let graph = FetchGraph(state)
        let planner = FetchPlanner(
            graph: graph, entity: entity, includeSubentities: includeSubentities, predicate: predicate, ordering: nil,
            limit: nil, offset: 0, indexes: snapshot, explaining: false)
        var out: [ObjectID] = []
        try FetchExecutor(graph: graph, plan: try planner.plan(), ordering: nil).run { row in
            out.append(row.id)
            return true
        }
        return out.sorted()
    }
}
