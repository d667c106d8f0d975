// The object store as an import's target (ImportRun.swift): IDs reserved before each insert, so
// one save may hold objects of any entities linked to each other; inserts, fix-ups and the undo
// are ordinary saves (validation, inverses, delete rules, unique constraints all apply).

public import KeelStorage
extension ObjectStore {
    /// Imports a checked plan in saves of `chunkSize` objects; a failure undoes every save made
    /// (see ImportRun.swift) and throws the error with the lines of the objects it names.
    public func importObjects(_ plan: ImportPlan, chunkSize: Int = 5000, progress: ProgressHandler = { _ in }) throws(KeelError) -> ImportResult {
        precondition(plan.model.hash == model.hash, "the plan was made for another model")
        var run = ImportRun(plan: plan, target: StoreImportTarget(store: self), chunkSize: chunkSize)
        let result = try run.run(progress: progress)
        logger.info("imported objects", metadata: ["import.objects": "\(result.total)", "import.saves": "\(result.saves)"])
        return result
    }
}

struct StoreImportTarget: ImportTarget {
    let store: ObjectStore

    mutating func reserveIDs(for entity: EntityID, count: Int) throws(KeelError) -> [ObjectID]? {
        let first = try store.reserveNumbers(for: entity, count: count)
        return (0..<UInt64(count)).map { ObjectID(entity: entity, number: first + $0) }
    }

    mutating func insert(_ objects: [(entity: EntityID, values: [Int: Value])], ids: [ObjectID]?) throws(KeelError) -> [ObjectID] {
        guard let ids else { preconditionFailure("the store reserves IDs before inserts") }
        let changes = zip(ids, objects).map { Change.insert($0, values: $1.values) }
        _ = try store.save(ChangeSet(changes: changes))
        return ids
    }

    mutating func set(_ values: [(object: ObjectID, field: Int, value: Value)]) throws(KeelError) {
        _ = try store.save(ChangeSet(changes: values.map { Change.set($0.object, field: $0.field, value: $0.value) }))
    }

    mutating func remove(_ objects: [ObjectID]) throws(KeelError) {
        var changes: [Change] = []
        for id in objects {
            for (field, r) in store.model[id.entity].relationships {
                changes.append(.set(id, field: field, value: r.isToMany ? .objects([]) : .null))
            }
        }
        for id in objects { changes.append(.delete(id)) }
        _ = try store.save(ChangeSet(changes: changes))
    }
}
