// A fetch request: Core Data's NSFetchRequest for Keel and the FETCH/COUNT/EXPLAIN request of
// the protocol (spec/protocol.md, "FETCH"), decoded straight from its JSON so the daemon maps
// those commands onto `ObjectContext.fetch(_:_:)`, `count(_:)` and `explain(_:)`.
//
//     {"entity":"Employee", "predicate":"age >= $MIN AND department.name BEGINSWITH[c] %@",
//      "args":["sal"], "vars":{"MIN":30}, "sort":[{"key":"name","ascending":true}],
//      "limit":10, "offset":0, "includeSubentities":true, "result":"objects",
//      "properties":["name","age"], "include":["department"]}
// (`"distinct":true` with `"result":"dictionaries"`: each distinct row once.)
// Grouped, with aggregates (Core Data's `propertiesToGroupBy` and `NSExpressionDescription`s in
// `propertiesToFetch`): an object in `properties` is an aggregate, its name the row's key —
//     {"entity":"Employee", "result":"dictionaries", "groupBy":["department.name"],
//      "properties":["department.name", {"name":"headcount","function":"count"},
//                    {"name":"payroll","function":"sum","key":"salary"}]}
// `"having":"payroll > %@", "havingArgs":[20000]` keeps the groups whose row satisfies it (Core
// Data's `havingPredicate`). (FetchGrouping.swift: the rules, run by ObjectContext+Grouping.swift).
//
// Decoding checks kinds only (`BAD_REQUEST` names every problem at once); names are checked when
// the request meets the model (`NO_SUCH_ENTITY`, `NO_SUCH_PROPERTY`, `PREDICATE`), in
// PreparedFetch.swift.

public struct FetchRequest: Sendable {
    /// What each result row is.
    public enum ResultType: String, Sendable, CaseIterable {
        /// The objects (`ManagedObject`; on the wire, the protocol's object JSON).
        case objects
        /// Object IDs only.
        case ids
        /// No rows: only how many objects match.
        case count
        /// Only `properties` of each object, by name.
        case dictionaries
    }

    public var entity: String
    /// NSPredicate format; nil (or empty) for every object.
    public var predicate: String?
    /// What `%@` takes, in order.
    public var args: [JSON]
    /// What `$NAME` takes.
    public var vars: [String: JSON]
    public var sort: [KeelSortDescriptor]
    public var limit: Int?
    public var offset: Int
    public var includeSubentities: Bool
    public var result: ResultType
    /// For `dictionaries`, the properties each row holds, in order (an aggregate by its name);
    /// for `objects`, the properties written in the JSON form (all when nil).
    public var properties: [String]?
    /// Relationships whose objects are embedded, and fetched properties to evaluate.
    public var include: [String]
    /// For `dictionaries`, each distinct row once (Core Data's `returnsDistinctResults`): the first
    /// of equal rows in the fetch's order is kept; `offset` and `limit` count distinct rows.
    public var distinct = false
    /// For `dictionaries`, the keys whose values make a group (Core Data's `propertiesToGroupBy`):
    /// one row per group. Key paths through to-ones too (`department.name`).
    public var groupBy: [String] = []
    /// For `dictionaries`, values computed over each group (over the whole fetch when `groupBy` is
    /// empty: one row): Core Data's `NSExpressionDescription`s. A row holds an aggregate under its
    /// name, at its place in `properties` (or after the other properties when `properties` does
    /// not name it).
    public var aggregates: [FetchAggregate] = []
    /// For grouped rows, the predicate a group's row must satisfy to be returned (Core Data's
    /// `havingPredicate`): over the rows' names — `groupBy` keys and aggregates' names — with
    /// `havingArgs` for its `%@` and `vars` for its `$NAME`s. Applied before `sort`, `offset` and
    /// `limit`.
    public var having: String? = nil
    /// What `%@` in `having` takes, in order.
    public var havingArgs: [JSON] = []
    /// False forces a scan of the hierarchy with the predicate as a filter (tests, benchmarks).
    public var usesIndexes: Bool

    public init(
        entity: String, predicate: String? = nil, args: [JSON] = [], vars: [String: JSON] = [:],
        sort: [KeelSortDescriptor] = [], limit: Int? = nil, offset: Int = 0, includeSubentities: Bool = true,
        result: ResultType = .objects, properties: [String]? = nil, include: [String] = [], usesIndexes: Bool = true
    ) {
        self.entity = entity
        self.predicate = predicate
        self.args = args
        self.vars = vars
        self.sort = sort
        self.limit = limit
        self.offset = offset
        self.includeSubentities = includeSubentities
        self.result = result
        self.properties = properties
        self.include = include
        self.usesIndexes = usesIndexes
    }

    /// The keys a FETCH, COUNT or EXPLAIN request may carry (`context` is the daemon's).
    public static let keys: Set<String> = [
        "entity", "predicate", "args", "vars", "sort", "limit", "offset", "includeSubentities", "result", "properties",
        "distinct", "groupBy", "having", "havingArgs", "include", "context",
    ]

    /// Whether the rows are groups (`groupBy` or aggregates given): ObjectContext+Grouping.swift.
    public var isGrouped: Bool { !groupBy.isEmpty || !aggregates.isEmpty }

    /// Decodes the protocol's request object. Unknown keys and values of the wrong kind are
    /// refused with `BAD_REQUEST`, every problem named.
    public init(json: JSON) throws(KeelError) {
        guard case .object(let members) = json else {
            throw KeelError(.badRequest, "a fetch request is a JSON object, found \(json.kindName)")
        }
        var problems = ProblemReport()
        for key in members.keys where !Self.keys.contains(key) { problems.add("unknown key \"\(ProblemReport.cut(key, to: 100))\"") }
        func text(_ key: String) -> String? {
            guard let value = members[key], !value.isNull else { return nil }
            guard case .string(let s) = value else {
                problems.add("\"\(key)\" must be a string, found \(value.kindName)")
                return nil
            }
            return s
        }
        func count(_ key: String) -> Int? {
            guard let value = members[key], !value.isNull else { return nil }
            guard case .int(let i) = value, i >= 0, i <= Int64(Int32.max) else {
                problems.add("\"\(key)\" must be a whole number ≥ 0, found \(ProblemReport.cut(value.serialized(), to: 100))")
                return nil
            }
            return Int(i)
        }
        func names(_ key: String) -> [String]? {
            guard let value = members[key], !value.isNull else { return nil }
            let items = value.arrayValue ?? []
            let names = items.compactMap(\.stringValue)
            guard value.arrayValue != nil, names.count == items.count else {
                problems.add("\"\(key)\" must be an array of names")
                return nil
            }
            return names
        }
        let entity = text("entity")
        if members["entity"] == nil { problems.add("\"entity\" is missing") }
        self.init(entity: entity ?? "")
        predicate = text("predicate")
        if let value = members["args"], !value.isNull {
            if case .array(let items) = value { args = items } else { problems.add("\"args\" must be an array, found \(value.kindName)") }
        }
        if let value = members["vars"], !value.isNull {
            if case .object(let o) = value {
                vars = Dictionary(o.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
            } else {
                problems.add("\"vars\" must be an object, found \(value.kindName)")
            }
        }
        if let value = members["sort"], !value.isNull {
            sort = Self.sortDescriptors(value, &problems)
        }
        limit = count("limit")
        offset = count("offset") ?? 0
        if let value = members["includeSubentities"], !value.isNull {
            if case .bool(let b) = value { includeSubentities = b } else { problems.add("\"includeSubentities\" must be true or false") }
        }
        if let name = text("result") {
            if let type = ResultType(rawValue: name) {
                result = type
            } else {
                problems.add("\"result\" must be objects, ids, count or dictionaries, found \"\(name)\"")
            }
        }
        if let value = members["properties"], !value.isNull {
            if case .array(let items) = value {
                var names: [String] = []
                for (i, item) in items.enumerated() {
                    switch item {
                    case .string(let name): names.append(name)
                    case .object:
                        guard let aggregate = FetchAggregate(json: item, at: i, &problems) else { continue }
                        names.append(aggregate.name)
                        aggregates.append(aggregate)
                    default:
                        problems.add("\"properties\"[\(i)] must be a name or an aggregate ({\"name\":…,\"function\":…,\"key\":…}), found \(item.kindName)")
                    }
                }
                properties = names
            } else {
                problems.add("\"properties\" must be an array of names and aggregates, found \(value.kindName)")
            }
        }
        groupBy = names("groupBy") ?? []
        having = text("having")
        if let value = members["havingArgs"], !value.isNull {
            if case .array(let items) = value { havingArgs = items } else { problems.add("\"havingArgs\" must be an array, found \(value.kindName)") }
        }
        include = names("include") ?? []
        if let value = members["distinct"], !value.isNull {
            if case .bool(let b) = value { distinct = b } else { problems.add("\"distinct\" must be true or false") }
        }
        if distinct, result != .dictionaries {
            problems.add("\"distinct\" needs \"result\": \"dictionaries\" (rows of objects or IDs are distinct already)")
        }
        if isGrouped, result != .dictionaries {
            problems.add(
                (groupBy.isEmpty ? "aggregates in \"properties\" need" : "\"groupBy\" needs")
                    + " \"result\": \"dictionaries\" (a group's row is a dictionary)")
        }
        if having != nil, !isGrouped {
            problems.add("\"having\" filters grouped rows: it needs \"groupBy\" or aggregates in \"properties\"")
        } else if having == nil, !havingArgs.isEmpty {
            problems.add("\"havingArgs\" are the arguments of \"having\", which is not given")
        }
        if !problems.isEmpty {
            throw KeelError(.badRequest, "bad fetch request: " + problems.listing(), details: problems.details())
        }
    }

    /// `[{"key":…,"ascending":…,"caseInsensitive":…}]`; a bare string is an ascending key.
    static func sortDescriptors(_ value: JSON, _ problems: inout ProblemReport) -> [KeelSortDescriptor] {
        guard case .array(let items) = value else {
            problems.add("\"sort\" must be an array of {\"key\":…} objects")
            return []
        }
        var out: [KeelSortDescriptor] = []
        for item in items {
            if case .string(let key) = item {
                out.append(KeelSortDescriptor(key: key))
                continue
            }
            guard case .object(let o) = item, case .string(let key)? = o["key"] else {
                problems.add("each sort entry needs a \"key\" string")
                continue
            }
            for k in o.keys where !["key", "ascending", "caseInsensitive"].contains(k) {
                problems.add("unknown sort key \"\(ProblemReport.cut(k, to: 100))\"")
            }
            var ascending = true
            var caseInsensitive = false
            if let a = o["ascending"], !a.isNull {
                if case .bool(let b) = a { ascending = b } else { problems.add("sort \"ascending\" must be true or false") }
            }
            if let c = o["caseInsensitive"], !c.isNull {
                if case .bool(let b) = c { caseInsensitive = b } else { problems.add("sort \"caseInsensitive\" must be true or false") }
            }
            out.append(KeelSortDescriptor(key: key, ascending: ascending, caseInsensitive: caseInsensitive))
        }
        return out
    }
}
