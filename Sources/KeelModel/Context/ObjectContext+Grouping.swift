// Grouped fetches (`groupBy`, aggregates in `properties`: Fetch/FetchGrouping.swift has the
// rules) and the steps every fetch whose rows are made in memory ends with: `distinct`, then
// `offset` and `limit` counting the rows those steps made.

extension ObjectContext {
    /// A grouped fetch: its source fetch streamed into the groups, the groups sorted, each
    /// group's row handed over through the result window. Returns how many rows were handed over.
    func runGrouped(_ request: FetchRequest, _ graph: FetchGraph, _ row: (FetchRow) throws(KeelError) -> Bool) throws(KeelError) -> Int {
        let grouping = try FetchGrouping(request, model: model)
        let prepared = try preparedFetch(grouping.source)  // the source's errors even when limit is 0
        var window = ResultWindow(request, model: model)
        if window.isClosed { return 0 }
        var builder = GroupBuilder(grouping)
        if prepared.result == .count {
            builder.counted = try count(prepared, graph)
        } else {
            _ = try run(prepared, graph) { (fetched) throws(KeelError) -> Bool in
                builder.add(fetched)
                return true
            }
        }
        var groups = builder.finish()
        Self.sort(&groups, grouping)
        for group in groups {
            guard try window.offer(group.row(grouping), row) else { break }
        }
        return window.delivered
    }

    /// One group: its `groupBy` values, one accumulator per aggregate, and its first object.
    struct Group {
        let keys: [Value]
        var accumulators: [AggregateAccumulator]
        let first: ObjectID

        /// The group's row: each column's value in the row's order.
        func row(_ grouping: FetchGrouping) -> FetchRow {
            var projected: [FetchRow.ProjectedValue] = []
            projected.reserveCapacity(grouping.columns.count)
            for column in grouping.columns {
                switch column {
                case .key(let k, let name, let property):
                    projected.append(.init(name: name, property: property, value: keys[k]))
                case .aggregate(let a):
                    let aggregate = grouping.aggregates[a]
                    projected.append(.init(name: aggregate.spec.name, property: aggregate.result, value: accumulators[a].value))
                }
            }
            return FetchRow(id: first, result: .dictionaries, object: nil, fields: nil, projected: projected)
        }

        /// A column's value, for sorting.
        func value(_ column: FetchGrouping.Column) -> Value {
            switch column {
            case .key(let k, _, _): keys[k]
            case .aggregate(let a): accumulators[a].value
            }
        }
    }

    /// Sorts the groups by the request's `sort`, then by their `groupBy` values ascending (the
    /// whole order when no sort is given), nulls first as every sort.
    static func sort(_ groups: inout [Group], _ grouping: FetchGrouping) {
        guard groups.count > 1 else { return }
        // Each group's sort values made once (strings folded for `caseInsensitive` keys).
        var decorated: [(values: [Value], group: Group)] = groups.map { group in
            let values = grouping.ordering.map { key -> Value in
                let value = group.value(key.by)
                if key.caseInsensitive, case .string(let s) = value { return .string(TextFolding.fold(s, .caseInsensitive)) }
                return value
            }
            return (values, group)
        }
        groups = []
        decorated.sort { a, b in
            for (i, key) in grouping.ordering.enumerated() {
                let order = Value.sortCompare(a.values[i], b.values[i])
                if order != .orderedSame { return key.ascending ? order == .orderedAscending : order == .orderedDescending }
            }
            for k in 0..<grouping.keyCount {
                let order = Value.sortCompare(a.group.keys[k], b.group.keys[k])
                if order != .orderedSame { return order == .orderedAscending }
            }
            return false
        }
        groups = decorated.map(\.group)
    }

    /// EXPLAIN of a grouped request: the source fetch's plan, then the in-memory steps.
    func groupedPlan(_ request: FetchRequest, _ state: ContextOverlay) throws(KeelError) -> FetchPlan {
        let grouping = try FetchGrouping(request, model: model)
        var plan = try preparedFetch(grouping.source).plan(in: state, explaining: true)
        let aggregates = grouping.aggregates.map { a in
            "\(a.spec.name) = \(a.spec.function.rawValue)" + (a.spec.key.map { " of \($0)" } ?? "")
        }
        let words = (request.groupBy.isEmpty ? "aggregate" : "group by \(request.groupBy.joined(separator: ", "))")
            + (aggregates.isEmpty ? "" : " (\(aggregates.joined(separator: ", ")))")
        plan.inMemory = FetchPlan.InMemorySteps(
            grouping: words, sort: request.sort.isEmpty ? nil : FetchPlan.text(of: request.sort), distinct: request.distinct,
            offset: request.offset, limit: request.limit)
        return plan
    }
}

/// The groups of a grouped fetch's source rows, in the order each was first met.
struct GroupBuilder {
    typealias Group = ObjectContext.Group
    let grouping: FetchGrouping
    private let fresh: [AggregateAccumulator]
    private var groups: [Group] = []
    private var index: [[Value]: Int] = [:]
    /// The count a source that is a COUNT gave (`FetchGrouping.countsOnly`).
    var counted: Int? = nil

    init(_ grouping: FetchGrouping) {
        self.grouping = grouping
        fresh = grouping.aggregates.map { AggregateAccumulator($0.spec.function) }
    }

    /// One row of the source (`dictionaries` of the groupBy keys, then the aggregates' keys).
    mutating func add(_ fetched: FetchRow) {
        let values = fetched.values
        let keys = Array(values[..<grouping.keyCount])
        let g: Int
        if let found = index[keys] {
            g = found
        } else {
            g = groups.count
            index[keys] = g
            groups.append(Group(keys: keys, accumulators: fresh, first: fetched.id))
        }
        for (a, aggregate) in grouping.aggregates.enumerated() {
            // A count of objects counts every row: a value that is never null.
            groups[g].accumulators[a].add(aggregate.input.map { values[$0] } ?? .bool(true))
        }
    }

    /// The groups. Aggregates without `groupBy` make one group even over no rows.
    consuming func finish() -> [Group] {
        if groups.isEmpty, grouping.keyCount == 0 {
            var accumulators = fresh
            if let counted {
                for a in accumulators.indices { accumulators[a].setCount(counted) }
            }
            groups.append(Group(keys: [], accumulators: accumulators, first: ObjectID(entity: grouping.entity, number: .max)))
        }
        return groups
    }
}

/// The last steps of a fetch whose rows are made in memory: with `distinct`, each distinct row
/// once (by its wire text, the first kept); then `offset` rows skipped and at most `limit` handed over.
struct ResultWindow {
    let distinct: Bool
    let offset: Int
    let limit: Int?
    let model: Model
    private var seen = Set<[UInt8]>()
    private var skipped = 0
    private(set) var delivered = 0

    init(_ request: FetchRequest, model: Model) {
        distinct = request.distinct
        offset = request.offset
        limit = request.limit
        self.model = model
    }

    /// No row can pass (`limit` 0).
    var isClosed: Bool { limit.map { $0 <= 0 } ?? false }

    /// Offers `fetched`: handed to `deliver` when it passes. Returns false when no more rows are
    /// wanted (the limit is reached, or `deliver` returned false).
    mutating func offer(_ fetched: FetchRow, _ deliver: (FetchRow) throws(KeelError) -> Bool) throws(KeelError) -> Bool {
        if distinct {
            var text: [UInt8] = []
            fetched.write(to: &text, in: model)
            guard seen.insert(text).inserted else { return true }
        }
        if skipped < offset {
            skipped += 1
            return true
        }
        delivered += 1
        guard try deliver(fetched) else { return false }
        if let limit, delivered >= limit { return false }
        return true
    }
}
