// Batch requests (spec/protocol.md, BATCH.*): each is one save of its own — one transaction,
// validated, with inverses and delete rules applied — that bypasses contexts. They take the
// save lock, so they never meet a conflict. The filter is a Swift closure over the stored row
// for now; the predicate engine (issue 4) will compile predicates to such a filter.

import KeelStorage

extension ObjectStore {
    /// Inserts one object per dictionary (field → value; to-many fields as `.objects`). IDs are
    /// consecutive; `SaveResult.inserted` lists them in order.
    public func batchInsert(entity: EntityID, objects: [[Int: Value]]) throws(KeelError) -> SaveResult {
        try checkEntity(entity)
        if objects.isEmpty { return SaveResult(saveID: nil) }
        let first = try reserveNumbers(for: entity, count: objects.count)
        var changes: [Change] = []
        changes.reserveCapacity(objects.count)
        for (i, values) in objects.enumerated() {
            changes.append(.insert(ObjectID(entity: entity, number: first + UInt64(i)), values: values))
        }
        let set = ChangeSet(changes: changes)
        return try performSave(stores: [storeIndex(of: entity)]) { (session, marks) throws(KeelError) -> [ObjectID: ObjectID] in
            var replay = SaveReplay(session: session, policy: .error, reservedMarks: marks)
            try replay.run(set)
            return [:]
        }
    }

    /// Sets `values` on every object of `entity` (and its sub-entities) that `filter` accepts.
    public func batchUpdate(
        entity: EntityID, includeSubentities: Bool = true, where filter: (StoredObject) -> Bool, values: [Int: Value]
    ) throws(KeelError) -> SaveResult {
        try checkEntity(entity)
        var set = 0
        var result = try performSave(stores: [storeIndex(of: entity)]) { (session, marks) throws(KeelError) -> [ObjectID: ObjectID] in
            var matched: [ObjectID] = []
            try session.scanStored(entity, includeSubentities: includeSubentities) { object in
                if filter(object) { matched.append(object.id) }
                return true
            }
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

    /// Deletes every object of `entity` (and its sub-entities) that `filter` accepts, with delete
    /// rules (cascades reach further objects; a `deny` fails the whole batch).
    public func batchDelete(
        entity: EntityID, includeSubentities: Bool = true, where filter: (StoredObject) -> Bool
    ) throws(KeelError) -> SaveResult {
        try checkEntity(entity)
        return try performSave(stores: [storeIndex(of: entity)]) { (session, marks) throws(KeelError) -> [ObjectID: ObjectID] in
            var matched: [ObjectID] = []
            try session.scanStored(entity, includeSubentities: includeSubentities) { object in
                if filter(object) { matched.append(object.id) }
                return true
            }
            var editor = session
            for id in matched where try session.exists(id) {
                let outcome = try GraphRules.delete(&editor, id)
                session.denials.append(contentsOf: outcome.denials)
            }
            return [:]
        }
    }
}
