// Fetching only some properties (Core Data's `NSDictionaryResultType` with `propertiesToFetch`):
// `context.fetchProperties(Employee.self, Employee.name, Employee.salary, where: …)` streams one
// `KeelProperties<Employee>` per object, holding the values of just those properties, read back
// through the same typed keys (`try row[Employee.name]`). It is FETCH with `result:
// "dictionaries"` and `properties`: the context makes no object, so a list of names costs the
// names. The keys are the entity's attributes and relationships (inherited ones included), key
// paths through to-ones ending at an attribute or a to-one (`Employee.department.name`, read from
// the related object as the context sees it; null when a to-one on the way is unset), and
// `KeelSelf<Employee>()` for each object's ID (`"$id"`; not with `groupedBy:` or aggregates). With
// `groupedBy:` and aggregates among the keys (KeelAggregate.swift), one row per group.

public import Collections

/// An attribute or relationship whose value a properties fetch returns.
public protocol ProjectableKey<Root>: Sendable {
    associatedtype Root: KeelObject
    /// The name given in `properties` (a key path's components joined by dots), and the row's key.
    var propertyName: String { get }
    /// The item of `properties` (the name; an aggregate's object).
    var propertyJSON: JSON { get }
}

extension ProjectableKey {
    public var propertyJSON: JSON { .string(propertyName) }
}

/// A key whose values can make groups (`groupedBy:`): an attribute or a to-one, or a key path
/// through to-ones to one.
public protocol GroupableKey<Root>: ProjectableKey {}

extension AttributeKey: GroupableKey {}
extension ToOneKey: GroupableKey {}

// The names the keys already give sorts and `include`: a key path's components joined by dots.
extension AttributeKey: ProjectableKey {
    public var propertyName: String { sortKey }
}

extension ToOneKey: ProjectableKey {
    public var propertyName: String { includeName }
}

extension ToManyKey: ProjectableKey {
    public var propertyName: String { includeName }
}

/// The object itself among the properties (Core Data's evaluated object in `propertiesToFetch`):
/// each row's object ID, `"$id"` on the wire, read back by `row[KeelSelf<Employee>()]`.
extension KeelSelf: ProjectableKey {
    public var propertyName: String { "$id" }
}

/// The fetched properties of one object, read by their typed keys. A key that was not fetched is
/// `BAD_REQUEST` (a null value is nil: the two are never confused).
public struct KeelProperties<Entity: KeelObject>: Sendable {
    /// The values as replied, by property name, in the order asked for.
    public let values: OrderedDictionary<String, JSON>

    /// Reads one row of a `dictionaries` FETCH; `TYPE` when it is not an object.
    public init(_ json: JSON) throws(KeelError) {
        guard let members = json.objectValue else {
            throw KeelError(.type, "expected an object of properties in the reply, found \(json.kindName)")
        }
        values = members
    }

    /// An attribute's value; nil when it is null.
    public subscript<V: KeelValue>(key: AttributeKey<Entity, V>) -> V? {
        get throws(KeelError) { try V.decodeOptional(value(key.propertyName), owner: owner(key.propertyName)) }
    }

    /// A to-one's target; nil when unset.
    public subscript<T: KeelObject>(key: ToOneKey<Entity, T>) -> KeelID<T>? {
        get throws(KeelError) {
            let json = try value(key.propertyName)
            if json.isNull { return nil }
            return KeelID(unchecked: try KeelObjectID(parsing: json, owner(key.propertyName)))
        }
    }

    /// A to-many's members, in order for an ordered relationship.
    public subscript<T: KeelObject>(key: ToManyKey<Entity, T>) -> [KeelID<T>] {
        get throws(KeelError) {
            let json = try value(key.propertyName)
            if json.isNull { return [] }
            guard let items = json.arrayValue else {
                throw KeelError(.type, "\(owner(key.propertyName)): expected a list of object IDs, found \(json.kindName)")
            }
            var ids: [KeelID<T>] = []
            ids.reserveCapacity(items.count)
            for item in items { ids.append(KeelID(unchecked: try KeelObjectID(parsing: item, owner(key.propertyName)))) }
            return ids
        }
    }

    /// The row's object ID, when the fetch asked for `KeelSelf` (of `Entity` or one of its
    /// sub-entities, as a fetch of `Entity` returns).
    public subscript(key: KeelSelf<Entity>) -> KeelID<Entity> {
        get throws(KeelError) {
            KeelID(unchecked: try KeelObjectID(parsing: try value(key.propertyName), "\(Entity.entity.name) object ID"))
        }
    }

    func value(_ name: String) throws(KeelError) -> JSON {
        guard let json = values[name] else {
            throw KeelError(.badRequest, "\(owner(name)) was not fetched: the fetch asked for \(values.keys.joined(separator: ", "))")
        }
        return json
    }

    private func owner(_ name: String) -> String { "\(Entity.entity.name).\(name)" }
}

extension KeelContext {
    /// FETCH with `result: "dictionaries"`: the values of `properties` only, one
    /// `KeelProperties` per object, streamed. At least one property; `BAD_REQUEST` otherwise.
    /// `distinct`: each distinct set of values once (Core Data's `returnsDistinctResults`), the
    /// first in the fetch's order; `offset` and `limit` then count distinct rows.
    /// `groupedBy` (Core Data's `propertiesToGroupBy`): one row per group of equal values of these
    /// keys, with the aggregates among `properties` computed over it (without `groupedBy`,
    /// aggregates make one row over every object fetched); the other `properties` must be among
    /// `groupedBy`, sorts name `groupedBy` keys or aggregates, and `offset`/`limit` count groups.
    /// `having` (Core Data's `havingPredicate`) keeps the groups whose row satisfies it: a
    /// predicate over the `groupedBy` keys and the aggregates (`payroll > 10_000`), applied before
    /// the sort and the limit.
    public func fetchProperties<E: KeelObject>(
        _ type: E.Type, _ properties: any ProjectableKey<E>..., groupedBy: [any GroupableKey<E>] = [],
        having: TypedPredicate<E>? = nil, where predicate: TypedPredicate<E>? = nil, sortedBy sorts: TypedSort<E>...,
        limit: Int? = nil, offset: Int = 0, includesSubentities: Bool = true, distinct: Bool = false
    ) -> FetchResults<KeelProperties<E>> {
        fetchProperties(
            properties,
            of: KeelFetchRequest(
                type, where: predicate, sortedBy: sorts, limit: limit, offset: offset, includesSubentities: includesSubentities),
            groupedBy: groupedBy, having: having, distinct: distinct)
    }

    /// A request's objects, `properties` of each (each distinct set once with `distinct`; one row
    /// per group with `groupedBy`, those `having` keeps).
    public func fetchProperties<E: KeelObject>(
        _ properties: [any ProjectableKey<E>], of request: KeelFetchRequest<E>, groupedBy: [any GroupableKey<E>] = [],
        having: TypedPredicate<E>? = nil, distinct: Bool = false
    ) -> FetchResults<KeelProperties<E>> {
        var json = request.json(result: "dictionaries")
        if case .object(var members) = json {
            members["properties"] = .array(properties.map(\.propertyJSON))
            if !groupedBy.isEmpty { members["groupBy"] = .array(groupedBy.map { .string($0.propertyName) }) }
            if let having {
                members["having"] = .string(having.format)
                if !having.arguments.isEmpty { members["havingArgs"] = .array(having.arguments) }
            }
            if distinct { members["distinct"] = true }
            json = .object(members)
        }
        let core = store
        return FetchResults(backend: backend, request: json) { (row) throws(KeelError) -> KeelProperties<E> in
            try core.check(E.self)  // the generated class against the store's model, once
            return try KeelProperties(row)
        }
    }
}
