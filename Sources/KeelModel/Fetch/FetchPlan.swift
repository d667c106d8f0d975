// How a fetch runs, as the planner (FetchPlanner.swift) chose it: where candidates come from (a
// scan of the hierarchy's object tree, one index's key ranges, a union of index scans, or
// nothing), what is still evaluated on each candidate (the residual filter), whether the order
// comes from the index or from an in-memory sort, and an estimate of the rows read. `explain`
// is the text EXPLAIN returns.
//
// The texts are kept as their pieces (`PlanCondition`, the residual's parsed source, the sort
// descriptors) and written out only by `explain`: a fetch plans every request and never reads
// them, so building "name == \"Pobabalo\"" per request was a cost of every query.

/// A condition of an index read as EXPLAIN shows it ("department == Department/3"), written out
/// only when asked. Only the semi-join, which holds a condition, is boxed: a comparison (every
/// request's atom makes one) is stored inline, not allocated and freed per request.
public enum PlanCondition: Sendable {
    /// `name op other`; a list shows its first five values.
    case comparison(String, ComparisonOperator, BoundExpression)
    /// A semi-join: the condition on the destination, then the to-one `IN` the objects it found
    /// (shown sorted).
    indirect case semiJoin(PlanCondition, toOne: String, targets: [Value])
    /// Branches of an OR read on one index, each the AND of its conditions.
    case either([[PlanCondition]])

    public func text(in model: Model) -> String {
        switch self {
        case .comparison(let name, let op, let other):
            switch other {
            case .constant(let v): return "\(name) \(op.rawValue) \(Self.valueText(v, model))"
            case .list(let vs):
                let shown = vs.prefix(5).map { Self.valueText($0, model) }.joined(separator: ", ") + (vs.count > 5 ? ", … \(vs.count) values" : "")
                return "\(name) \(op.rawValue) {\(shown)}"
            default: return "\(name) \(op.rawValue) …"
            }
        case .semiJoin(let inner, let name, let targets):
            let sorted = targets.sorted { Value.sortCompare($0, $1) == .orderedAscending }
            return inner.text(in: model) + " → " + PlanCondition.comparison(name, .in, .list(sorted)).text(in: model)
        case .either(let branches):
            return branches.map { $0.map { $0.text(in: model) }.joined(separator: " AND ") }.joined(separator: " OR ")
        }
    }

    static func valueText(_ value: Value, _ model: Model) -> String {
        switch value {
        case .null: return "nil"
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .decimal(let d): return d.description
        case .bool(let b): return b ? "TRUE" : "FALSE"
        case .string(let s), .uri(let s): return JSON.string(s).serialized()
        case .date(let ms): return "\"\(WireDate.format(ms))\""
        case .object(let id): return id.entity.index < model.entities.count ? id.text(in: model) : "?"
        case .uuid(let u): return "\"\(u.uuidString)\""
        case .binary(let b): return "<\(b.count) bytes>"
        case .json(let j): return j.serialized()
        case .objects(let ids): return "{\(ids.count) objects}"
        }
    }
}

/// One index read over key ranges.
public struct IndexAccess: Sendable {
    public let index: Index
    /// Sorted, disjoint key ranges.
    public let ranges: [KeyRange]
    /// The conditions the ranges stand for, as written ("department == Department/3").
    public let conditions: [PlanCondition]
    /// Indices of the conjunction's terms the ranges serve exactly (they need no filter).
    let served: SmallIntSet
    /// Leading index columns fixed to one value by equality.
    let fixedColumns: Int
    /// Candidates counted in the ranges (at most the cap used), when counted.
    var counted: Int?
    var capped = false

    func text(in model: Model) -> String {
        let on = conditions.isEmpty ? "all entries" : conditions.map { $0.text(in: model) }.joined(separator: ", ")
        return "INDEX \(index.name)\(index.isUnique ? " (unique)" : "") (\(on))"
    }
}

public struct FetchPlan: Sendable {
    public enum Access: Sendable {
        /// Nothing can match (`FALSEPREDICATE`, or a condition no object meets).
        case nothing(String)
        /// Every object of the entity (and its sub-entities), in ID order.
        case scan
        case index(IndexAccess)
        /// `a OR b` where every branch has an index: each read, duplicates dropped.
        case union([IndexAccess])
    }

    public let entity: EntityID
    public let includeSubentities: Bool
    public let access: Access
    /// Evaluated on every candidate the access reads from the store; nil when every candidate
    /// matches (the index ranges are the whole predicate).
    public let residual: BoundPredicate?
    /// The whole predicate: what the context's pending rows are evaluated on.
    public let predicate: BoundPredicate?
    /// True when the access yields objects in the requested sort order (or no sort was asked).
    public let orderedByAccess: Bool
    /// Read the index ranges backwards (a descending sort).
    public let reverse: Bool
    /// The requested sort (nil or no keys: none).
    let ordering: ObjectOrdering?
    public let limit: Int?
    public let offset: Int
    /// Rows the access is expected to read (filled in for EXPLAIN).
    public var estimatedRows: Int?
    /// The last steps of a request whose rows are made in memory — grouped (ObjectContext+Grouping.swift)
    /// or `distinct` (ObjectContext.runDistinct): it is planned without its offset and limit, which
    /// count the rows those steps make; nil for any other request.
    public var inMemory: InMemorySteps?

    public struct InMemorySteps: Sendable {
        /// "group by department.name (headcount = count, payroll = sum of salary)"; nil: not grouped.
        public var grouping: String?
        /// The groups' `having` predicate as text; nil: none.
        public var having: String? = nil
        /// The groups' sort in words; nil: none asked.
        public var sort: String?
        public var distinct: Bool
        public let offset: Int
        public let limit: Int?
        /// The index whose keys a grouped fetch reads instead of the objects (IndexAggregation).
        public var keysOf: Index? = nil
    }
    /// False for a request with `usesIndexes = false`: the plainest path everywhere (a scan
    /// through the overlay evaluating whole rows), the baseline tests compare against.
    var usesFastPaths = true

    /// Sort descriptors in words: "name, age descending, title [c]".
    static func text(of descriptors: [KeelSortDescriptor]) -> String {
        descriptors.map { d in d.key + (d.ascending ? "" : " descending") + (d.caseInsensitive ? " [c]" : "") }.joined(separator: ", ")
    }

    /// The plan in words: access → filter → sort → (group → sort →) distinct → offset → limit; estimate.
    public func explain(in model: Model) -> String {
        var parts: [String] = []
        let name = model[entity].name
        let family = includeSubentities && model[entity].family.count > 1 ? " and sub-entities" : ""
        switch access {
        case .nothing(let why): parts.append("NOTHING (\(why))")
        case .scan: parts.append("SCAN \(name)\(family)")
        case .index(let a): parts.append(a.text(in: model) + (reverse ? " backwards" : ""))
        case .union(let accesses): parts.append("UNION OF " + accesses.map { $0.text(in: model) }.joined(separator: " | "))
        }
        if let index = inMemory?.keysOf {
            // Read from an index's keys, no object: the access says which.
            if case .index = access { parts[0] += ", keys only" } else { parts[0] = "INDEX \(index.name) (all entries), keys only" }
        }
        if let residual { parts.append("filter: \(residual.source.description)") }
        if let ordering, !ordering.keys.isEmpty {
            let sortText = Self.text(of: ordering.keys.map(\.descriptor))
            parts.append(orderedByAccess ? "sort: by index (\(sortText))" : "sort: in memory (\(sortText))")
        }
        if offset > 0 { parts.append("offset \(offset)") }
        if let limit { parts.append("limit \(limit)") }
        if let inMemory {
            if let grouping = inMemory.grouping { parts.append("\(grouping): in memory") }
            if let having = inMemory.having { parts.append("having: \(having)") }
            if let sort = inMemory.sort { parts.append("sort: in memory (\(sort))") }
            if inMemory.distinct { parts.append("distinct: in memory") }
            if inMemory.offset > 0 { parts.append("offset \(inMemory.offset)") }
            if let limit = inMemory.limit { parts.append("limit \(limit)") }
        }
        var text = parts.joined(separator: " → ")
        if let estimatedRows { text += "; about \(estimatedRows) row\(estimatedRows == 1 ? "" : "s")" }
        return text
    }
}
