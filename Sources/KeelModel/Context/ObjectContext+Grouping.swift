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
            let plan = try prepared.plan(in: graph, explaining: false)
            var visited = false
            // From an index's keys when one holds everything asked (no object read); else a scan
            // aggregates inside the engine reads on the fields it needs; anything else reads the
            // matching objects as a fetch does.
            if let aggregation = IndexAggregation(grouping, plan: plan, state: graph.state), let reading = graph.state.base?.indexReading {
                visited = try aggregation.run(reading, into: &builder)
            }
            let executor = FetchExecutor(graph: graph, plan: plan, ordering: nil)
            if !visited, grouping.aggregatesReadTheRow {
                visited = try executor.visit(decoding: grouping.wanted(fieldCount: prepared.entity.properties.count)) {
                    (row) throws(KeelError) in try builder.add(row, graph: nil)
                }
            }
            if !visited {
                try executor.run { (row) throws(KeelError) -> Bool in
                    try builder.add(row, graph: graph)
                    return true
                }
            }
        }
        var groups = try builder.finish(graph)
        if let having = grouping.having {
            var kept: [Group] = []
            for group in groups where try having.evaluate(group.havingRow, in: graph) { kept.append(group) }
            groups = kept
        }
        Self.sort(&groups, grouping)
        for group in groups {
            guard try window.offer(group.row(grouping), row) else { break }
        }
        return window.delivered
    }

    /// One group: its `groupBy` values, one accumulator per aggregate, and its first object.
    struct Group {
        var keys: [Value]
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

        /// What `having` is evaluated on: the `groupBy` values, then each aggregate's value.
        var havingRow: StoredObject {
            StoredObject(id: first, version: 0, values: keys + accumulators.map(\.value))
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
            "\(a.spec.name) = \(a.spec.function.wireName)" + (a.spec.key.map { " of \($0)" } ?? "")
        }
        let words = (request.groupBy.isEmpty ? "aggregate" : "group by \(request.groupBy.joined(separator: ", "))")
            + (aggregates.isEmpty ? "" : " (\(aggregates.joined(separator: ", ")))")
        plan.inMemory = FetchPlan.InMemorySteps(
            grouping: words, having: grouping.having?.source.description,
            sort: request.sort.isEmpty ? nil : FetchPlan.text(of: request.sort), distinct: request.distinct,
            offset: request.offset, limit: request.limit)
        if !grouping.countsOnly, let aggregation = IndexAggregation(grouping, plan: plan, state: state) {
            plan.inMemory?.keysOf = aggregation.index
        }
        return plan
    }
}

/// The groups of a grouped fetch's objects. While the objects are read, a `groupBy` key path is
/// grouped by its first to-one's target (`department`, for `department.name`), so that no object
/// is read on the way per row; `finish` follows each path once per group and merges the groups
/// that meet at one value (two departments of one name).
struct GroupBuilder {
    typealias Group = ObjectContext.Group
    let grouping: FetchGrouping
    private let fresh: [AggregateAccumulator]
    /// Per row, only plain numbers are read from `grouping` (not its structs, which a read copies).
    private let firstFields: [Int]
    /// Per aggregate: the input it reads (-1: a count of objects), and whether that is a key path.
    private let aggregateInputs: [Int]
    private let aggregatePaths: [Bool]
    /// Each group's key and first object, and its accumulators (`fresh.count` a group, in order).
    private var keys: [[Value]] = []
    private var firsts: [ObjectID] = []
    private var accumulators: [AggregateAccumulator] = []
    /// Groups by their key: one value, or several.
    private var byValue: [Value: Int] = [:]
    private var byValues: [[Value]: Int] = [:]
    /// The count a source that is a COUNT gave (`FetchGrouping.countsOnly`).
    var counted: Int? = nil

    init(_ grouping: FetchGrouping) {
        self.grouping = grouping
        fresh = grouping.aggregates.map { AggregateAccumulator($0.spec.function) }
        firstFields = grouping.inputs.map(\.firstField)
        aggregateInputs = grouping.aggregates.map { $0.input ?? -1 }
        aggregatePaths = grouping.aggregates.map { a in a.input.map { !grouping.inputs[$0].hops.isEmpty } ?? false }
    }

    /// One object of the fetch. `graph` reads the aggregates' key paths (nil: they read the row
    /// alone, `FetchGrouping.aggregatesReadTheRow`).
    mutating func add(_ row: StoredObject, graph: FetchGraph?) throws(KeelError) {
        let values = row.values
        let g: Int
        switch grouping.keyCount {
        case 0:
            if keys.isEmpty { open([], row.id) }
            g = 0
        case 1:
            let f = firstFields[0]
            let key = f < values.count ? values[f] : .null
            if let found = byValue[Self.lookup(key)] {
                g = found
            } else {
                g = keys.count
                byValue[Self.lookup(key)] = g
                open([key], row.id)
            }
        default:
            let key = firstFields[..<grouping.keyCount].map { $0 < values.count ? values[$0] : .null }
            if let found = byValues[key.map(Self.lookup)] {
                g = found
            } else {
                g = keys.count
                byValues[key.map(Self.lookup)] = g
                open(key, row.id)
            }
        }
        let base = g * fresh.count
        for a in 0..<fresh.count {
            let input = aggregateInputs[a]
            // A count of objects counts every row: a value that is never null.
            var value = Value.bool(true)
            if input >= 0 {
                if let graph, aggregatePaths[a] {
                    value = try grouping.inputs[input].value(from: values, graph: graph)
                } else {
                    let f = firstFields[input]
                    value = f < values.count ? values[f] : .null
                }
            }
            accumulators[base + a].add(value)
        }
    }

    /// Accumulators for a new group, one per aggregate.
    var freshAccumulators: [AggregateAccumulator] { fresh }

    /// A whole group read elsewhere (IndexAggregation: a run of keys), of a key no other group has.
    mutating func append(keys key: [Value], accumulators group: [AggregateAccumulator], first: ObjectID) {
        keys.append(key)
        firsts.append(first)
        accumulators.append(contentsOf: group)
    }

    /// The value a group is found by: its key, except that NaN (which equals nothing, itself
    /// included) is found by a value no number column holds — NaNs are one group, as in an index,
    /// whose NaN keys are equal bytes.
    static func lookup(_ value: Value) -> Value {
        if case .double(let d) = value, d.isNaN { return .json("NaN") }
        return value
    }

    private mutating func open(_ key: [Value], _ first: ObjectID) {
        keys.append(key)
        firsts.append(first)
        accumulators.append(contentsOf: fresh)
    }

    /// The groups, their key paths followed. Aggregates without `groupBy` make one group even
    /// over no objects.
    consuming func finish(_ graph: FetchGraph) throws(KeelError) -> [Group] {
        if keys.isEmpty, grouping.keyCount == 0 {
            var accumulators = fresh
            if let counted {
                for a in accumulators.indices { accumulators[a].setCount(counted) }
            }
            return [Group(keys: [], accumulators: accumulators, first: ObjectID(entity: grouping.entity, number: .max))]
        }
        let n = fresh.count
        let groups = keys.indices.map { g in Group(keys: keys[g], accumulators: Array(accumulators[g * n..<(g + 1) * n]), first: firsts[g]) }
        let paths = (0..<grouping.keyCount).filter { !grouping.inputs[$0].hops.isEmpty }
        guard !paths.isEmpty else { return groups }
        var merged: [Group] = []
        var index: [[Value]: Int] = [:]
        for var group in groups {
            for k in paths { group.keys[k] = try grouping.inputs[k].value(throughFirst: group.keys[k], graph: graph) }
            if let found = index[group.keys.map(Self.lookup)] {
                for a in group.accumulators.indices { merged[found].accumulators[a].merge(group.accumulators[a]) }
            } else {
                index[group.keys.map(Self.lookup)] = merged.count
                merged.append(group)
            }
        }
        return merged
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
