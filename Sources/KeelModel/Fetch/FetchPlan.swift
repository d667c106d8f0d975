// How a fetch runs, as the planner (FetchPlanner.swift) chose it: where candidates come from (a
// scan of the hierarchy's object tree, one index's key ranges, a union of index scans, or
// nothing), what is still evaluated on each candidate (the residual filter), whether the order
// comes from the index or from an in-memory sort, and an estimate of the rows read. `explain`
// is the text EXPLAIN returns.

/// One index read over key ranges.
public struct IndexAccess: Sendable {
    public let index: Index
    /// Sorted, disjoint key ranges.
    public let ranges: [KeyRange]
    /// The conditions the ranges stand for, as written ("department == Department/3").
    public let conditions: [String]
    /// Indices of the conjunction's terms the ranges serve exactly (they need no filter).
    let served: [Int]
    /// Leading index columns fixed to one value by equality.
    let fixedColumns: Int
    /// Candidates counted in the ranges (at most the cap used), when counted.
    var counted: Int?
    var capped = false

    var text: String {
        let on = conditions.isEmpty ? "all entries" : conditions.joined(separator: ", ")
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
    let residualText: String?
    /// The whole predicate: what the context's pending rows are evaluated on.
    public let predicate: BoundPredicate?
    /// True when the access yields objects in the requested sort order (or no sort was asked).
    public let orderedByAccess: Bool
    /// Read the index ranges backwards (a descending sort).
    public let reverse: Bool
    public let sortText: String?
    public let limit: Int?
    public let offset: Int
    /// Rows the access is expected to read (filled in for EXPLAIN).
    public var estimatedRows: Int?
    /// False for a request with `usesIndexes = false`: the plainest path everywhere (a scan
    /// through the overlay evaluating whole rows), the baseline tests compare against.
    var usesFastPaths = true

    /// The plan in words: access → filter → sort → limit; estimate.
    public func explain(in model: Model) -> String {
        var parts: [String] = []
        let name = model[entity].name
        let family = includeSubentities && model[entity].family.count > 1 ? " and sub-entities" : ""
        switch access {
        case .nothing(let why): parts.append("NOTHING (\(why))")
        case .scan: parts.append("SCAN \(name)\(family)")
        case .index(let a): parts.append(a.text + (reverse ? " backwards" : ""))
        case .union(let accesses): parts.append("UNION OF " + accesses.map(\.text).joined(separator: " | "))
        }
        if let residualText { parts.append("filter: \(residualText)") }
        if let sortText {
            parts.append(orderedByAccess ? "sort: by index (\(sortText))" : "sort: in memory (\(sortText))")
        }
        if offset > 0 { parts.append("offset \(offset)") }
        if let limit { parts.append("limit \(limit)") }
        var text = parts.joined(separator: " → ")
        if let estimatedRows { text += "; about \(estimatedRows) row\(estimatedRows == 1 ? "" : "s")" }
        return text
    }
}
