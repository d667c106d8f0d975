// A typed FETCH (Core Data's NSFetchRequest): the entity, a typed predicate, sorts, limit,
// offset, sub-entities, and relationships or fetched properties to embed. Its JSON is the
// protocol's FETCH request (spec/protocol.md, "FETCH"); a context runs it (`fetch`, `count`,
// `explain`).

public struct KeelFetchRequest<Entity: KeelObject>: Sendable {
    public var predicate: TypedPredicate<Entity>?
    public var sortedBy: [TypedSort<Entity>]
    public var limit: Int?
    public var offset: Int
    /// Objects of sub-entities too (default true: a fetch of `Person` gives employees and students).
    public var includesSubentities: Bool
    /// Relationships and fetched properties to embed as objects (`object.included(key)`).
    public var including: [any IncludableKey<Entity>]

    public init(
        _ entity: Entity.Type = Entity.self, where predicate: TypedPredicate<Entity>? = nil, sortedBy: [TypedSort<Entity>] = [],
        limit: Int? = nil, offset: Int = 0, includesSubentities: Bool = true, including: [any IncludableKey<Entity>] = []
    ) {
        self.predicate = predicate
        self.sortedBy = sortedBy
        self.limit = limit
        self.offset = offset
        self.includesSubentities = includesSubentities
        self.including = including
    }

    /// The FETCH request (`result`: `objects`, or `ids`).
    func json(result: String = "objects") -> JSON {
        var members: [(String, JSON)] = [("entity", .string(Entity.entity.name))]
        if let predicate {
            members.append(("predicate", .string(predicate.format)))
            if !predicate.arguments.isEmpty { members.append(("args", .array(predicate.arguments))) }
        }
        if !sortedBy.isEmpty { members.append(("sort", .array(sortedBy.map(\.json)))) }
        if let limit { members.append(("limit", .int(Int64(limit)))) }
        if offset != 0 { members.append(("offset", .int(Int64(offset)))) }
        if !includesSubentities { members.append(("includeSubentities", false)) }
        if result != "objects" { members.append(("result", .string(result))) }
        if !including.isEmpty { members.append(("include", .array(including.map { .string($0.includeName) }))) }
        return .object(.init(members, uniquingKeysWith: { a, _ in a }))
    }
}
