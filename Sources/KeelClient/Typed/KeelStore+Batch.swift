// Batch requests in the typed API (Core Data's NSBatchInsertRequest, NSBatchUpdateRequest and
// NSBatchDeleteRequest): one store transaction each that bypasses contexts — validated, inverses
// kept, delete rules applied, events sent — the same embedded and against keeld (BATCH.INSERT,
// BATCH.UPDATE, BATCH.DELETE; the store runs them with the same code either way).
//
//     let ids = try await store.batchInsert(employees).objectIDs        // one save for them all
//     try await store.batchUpdate(Employee.self, where: Employee.age >= 65, set: Employee.isManager.to(false))
//     try await store.batchDelete(Employee.self, where: Employee.department == nil)
//
// Like Core Data's, they do not pass through a context: a context that has read the objects keeps
// what it read until it refreshes (`refresh()`, or after its own save), and its pending changes to
// them meet the batch at save as any other save's (merge policies, Contexts.md).

import Collections
public import KeelModel

/// One property a batch update sets, with its value in wire form: `Employee.salary.to(5000)`,
/// `Employee.address.to(nil)`, `Employee.department.to(sales)`, `Department.employees.to([a, b])`.
public struct KeelAssignment<Root: KeelObject>: Sendable {
    /// The property's key path (one name: a batch update sets the entity's own properties).
    public let path: [String]
    public let value: JSON
}

extension AttributeKey {
    /// Sets the attribute to `value` (nil: null) in a batch update.
    public func to(_ value: Value?) -> KeelAssignment<Root> {
        KeelAssignment(path: path, value: value.map(\.wire) ?? .null)
    }
}

extension ToOneKey {
    /// Points the to-one at `id` (nil: clears it) in a batch update; inverses follow.
    public func to(_ id: KeelID<Target>?) -> KeelAssignment<Root> {
        KeelAssignment(path: path, value: id.map(\.wire) ?? .null)
    }
}

extension ToManyKey {
    /// Makes `ids` the members of the to-many in a batch update; inverses follow.
    public func to(_ ids: [KeelID<Target>]) -> KeelAssignment<Root> {
        KeelAssignment(path: path, value: ids.wire)
    }
}

/// What a batch insert made: the new objects' IDs, in the order the objects were given.
public struct KeelBatchInsertResult<Entity: KeelObject>: Sendable, Hashable {
    public let objectIDs: [KeelID<Entity>]
    /// The batch's transaction; nil when there was nothing to insert.
    public let transaction: Int64?
}

/// What a batch update or delete did.
public struct KeelBatchResult: Sendable, Hashable {
    /// Update: the objects the predicate matched. Delete: the objects deleted, cascades included.
    public let count: Int
    /// The batch's transaction; nil when nothing matched (nothing was written).
    public let transaction: Int64?
}

extension KeelStore {
    /// Inserts `objects` — all of one concrete entity (an array of `Person` may hold employees,
    /// then only employees) — in one transaction (Core Data's `NSBatchInsertRequest`), validated
    /// as a save is: one bad object fails the batch and nothing is written (the error's message
    /// names `objects[i]`). Their relationships name objects by ID, as an insert's do. The objects
    /// themselves are left as they are (not inserted in any context); the result has their IDs,
    /// in order.
    @discardableResult
    public func batchInsert<E: KeelObject>(_ objects: [E]) async throws(KeelError) -> KeelBatchInsertResult<E> {
        guard let concrete = objects.first.map({ type(of: $0) }) else { return KeelBatchInsertResult(objectIDs: [], transaction: nil) }
        try core.check(concrete)
        let entity = concrete.entity
        var items: [JSON] = []
        items.reserveCapacity(objects.count)
        for object in objects {
            guard type(of: object) == concrete else {
                throw KeelError(
                    .badRequest,
                    "a batch inserts objects of one entity: \(type(of: object).entity.name) among \(entity.name) (make one batch per entity)")
            }
            guard object.anyObjectID == nil else {
                throw KeelError(.badRequest, "\(object.describe()) is inserted already: a batch inserts new objects")
            }
            items.append(concrete.insertValues(try object.currentValues()))
        }
        let reply = try await mainContext.backend.batch(
            "BATCH.INSERT", ["entity": .string(entity.name), "objects": .array(items)])
        let first = try KeelObjectID(parsing: reply["first"] ?? .null, "BATCH.INSERT's first")
        guard reply["inserted"]?.intValue == Int64(items.count) else {
            throw KeelError(.type, "BATCH.INSERT's reply does not count \(items.count) objects: \(reply.serialized())")
        }
        // The store numbers a batch's objects consecutively (Protocol.md, BATCH.INSERT).
        let ids = (0..<UInt64(items.count)).map {
            KeelID<E>(unchecked: KeelObjectID(entityName: first.entityName, number: first.number + $0))
        }
        return KeelBatchInsertResult(objectIDs: ids, transaction: reply["txn"]?.intValue)
    }

    /// Sets `values` on every object of `type` (and its sub-entities) that `predicate` matches
    /// (every one when nil), in one transaction (Core Data's `NSBatchUpdateRequest`), validated
    /// and with inverses kept. `count` is the objects matched.
    @discardableResult
    public func batchUpdate<E: KeelObject>(
        _ type: E.Type, where predicate: TypedPredicate<E>? = nil, set values: KeelAssignment<E>...
    ) async throws(KeelError) -> KeelBatchResult {
        try core.check(type)
        var members: OrderedDictionary<String, JSON> = [:]
        for assignment in values {
            guard assignment.path.count == 1, let name = assignment.path.first else {
                throw KeelError(
                    .badRequest,
                    "a batch update sets \(type.entity.name)'s own properties, not \(assignment.path.joined(separator: "."))")
            }
            members[name] = assignment.value
        }
        guard !members.isEmpty else { throw KeelError(.badRequest, "a batch update sets at least one property") }
        var arguments = Self.batchArguments(type, predicate)
        arguments["values"] = .object(members)
        return try Self.batchResult(await mainContext.backend.batch("BATCH.UPDATE", .object(arguments)), "updated")
    }

    /// Deletes every object of `type` (and its sub-entities) that `predicate` matches (every one
    /// when nil), with their delete rules, in one transaction (Core Data's
    /// `NSBatchDeleteRequest`, which skips the rules; Keel applies them): a `deny` fails the whole
    /// batch. `count` is the objects deleted, cascades included.
    @discardableResult
    public func batchDelete<E: KeelObject>(_ type: E.Type, where predicate: TypedPredicate<E>? = nil) async throws(KeelError) -> KeelBatchResult {
        try core.check(type)
        return try Self.batchResult(await mainContext.backend.batch("BATCH.DELETE", .object(Self.batchArguments(type, predicate))), "deleted")
    }

    private static func batchArguments<E: KeelObject>(_ type: E.Type, _ predicate: TypedPredicate<E>?) -> OrderedDictionary<String, JSON> {
        var arguments: OrderedDictionary<String, JSON> = ["entity": .string(type.entity.name)]
        if let predicate {
            arguments["predicate"] = .string(predicate.format)
            if !predicate.arguments.isEmpty { arguments["args"] = .array(predicate.arguments) }
        }
        return arguments
    }

    private static func batchResult(_ reply: JSON, _ key: String) throws(KeelError) -> KeelBatchResult {
        guard let count = reply[key]?.intValue else { throw KeelError(.type, "the batch's reply lacks \"\(key)\": \(reply.serialized())") }
        return KeelBatchResult(count: Int(count), transaction: reply["txn"]?.intValue)
    }
}
