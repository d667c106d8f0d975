// Grouped fetches and aggregates: Core Data's `propertiesToGroupBy` with `NSExpressionDescription`s
// (`count:`, `sum:`, `average:`, `min:`, `max:`) in `propertiesToFetch`, for `dictionaries`.
//
//     "groupBy": ["department.name"],
//     "properties": ["department.name", {"name":"headcount","function":"count"},
//                    {"name":"payroll","function":"sum","key":"salary"}]
//     → {"department.name":"Sales","headcount":3,"payroll":15600}, one row per department
//
// The rules (checked before anything is read; every one a `BAD_REQUEST` unless named otherwise):
// - `groupBy` keys are attributes or to-ones of the entity, or key paths through to-ones
//   (`department.name`); not to-manys. An unknown key is `NO_SUCH_PROPERTY`.
// - With `groupBy` or an aggregate, every other name of `properties` must be a `groupBy` key (a
//   row stands for a group: a property that is not a key has no one value in it). With
//   aggregates and no `groupBy`, the whole fetch is one group and gives one row — also when
//   nothing matches (`count` 0, `sum` 0, the others null), as SQL's aggregates without GROUP BY.
// - An aggregate: `name` (not empty, not starting with `$`, unlike every other name of the row),
//   `function` and `key` (an attribute, or a key path through to-ones to one):
//
//   | function | key | value | no values |
//   | --- | --- | --- | --- |
//   | `count` | none: the group's objects; a key: the objects where it is not null | int | 0 |
//   | `sum` | a number attribute | int until it would overflow, then decimal; decimal if the key is; double if it is double or float | 0 |
//   | `avg` (`average`) | a number attribute | decimal if the key is (or the int sum overflowed), else double | null |
//   | `min`, `max` | a number, date or string attribute | the key's type (strings by UTF-8 bytes, as sorting) | null |
//
//   (The predicate language's `@sum`/`@avg`/… over a to-many, one object at a time, are the
//   same functions: PredicateEvaluator.aggregate and `NumberSum`.)
// - `sort` keys are names of the row: `groupBy` keys and aggregates' names. Without `sort` the
//   rows come in the order of their `groupBy` values, ascending (nulls first), key by key.
// - `offset`, `limit`, COUNT and `distinct` count the groups' rows.
// - `having` (Core Data's `havingPredicate`): a predicate over the rows' names (groupBy keys, shown
//   or not, and aggregates' names; PredicateBinder's `groupRow`), with `havingArgs` for its `%@`;
//   it drops groups before `sort`, `offset`, `limit`, COUNT and `distinct`. An aggregate compares
//   as the predicate's `@sum`… of its key would (`FetchGrouping.type(of:)`).
// - `include` is refused: a group's row embeds no objects. At most 32 `groupBy` keys and 64
//   aggregates (each group holds an accumulator per aggregate).
//
// How it runs (ObjectContext+Grouping.swift): the fetch of the entity with the predicate is
// planned as any fetch, then read the cheapest way that holds everything asked —
// 1. from an index's keys, no object read, when the `groupBy` keys lead the index and the
//    aggregates read its columns (IndexAggregation.swift: SQLite's GROUP BY over a covering index);
// 2. else, for a scan whose predicate reads only the row, on partly decoded rows inside the engine
//    reads (FetchExecutor.visit);
// 3. else the matching objects as a fetch reads them (an index's rows, the context's view).
// The context's pending changes count in 2 and 3 (1 is not taken while the context has any for
// the fetched entities). A `groupBy` key path is grouped by its first to-one's target and followed
// once per group. Memory: the groups (their keys and accumulators), not the rows. A request of
// only `count`s without `groupBy` is a COUNT (an index counted by its keys).

/// An aggregate of a grouped fetch: Core Data's `NSExpressionDescription` with a function over a key.
public struct FetchAggregate: Sendable, Hashable {
    /// The predicate language's collection operators, computed alike (`AggregateAccumulator`).
    public typealias Function = AggregateFunction

    /// The row's key for the value.
    public var name: String
    public var function: Function
    /// What is aggregated: an attribute (or a key path through to-ones to one); nil for `count`
    /// of the group's objects.
    public var key: String?

    public init(name: String, function: Function, key: String? = nil) {
        self.name = name
        self.function = function
        self.key = key
    }

    static let keys: Set<String> = ["name", "function", "key"]

    /// `{"name":…,"function":…,"key":…}`, the `i`th item of `properties`; nil (with the problems
    /// added to `problems`) when it is not one.
    init?(json: JSON, at i: Int, _ problems: inout ProblemReport) {
        guard case .object(let members) = json else { return nil }
        let place = "\"properties\"[\(i)]"
        var ok = true
        for key in members.keys where !Self.keys.contains(key) {
            problems.add("\(place): unknown key \"\(ProblemReport.cut(key, to: 100))\" (an aggregate takes name, function and key)")
            ok = false
        }
        var name = ""
        if case .string(let s)? = members["name"] {
            name = s
            if s.isEmpty || s.hasPrefix("$") {
                problems.add("\(place): an aggregate's \"name\" must not be empty or start with $")
                ok = false
            }
        } else {
            problems.add("\(place): an aggregate needs a \"name\" string")
            ok = false
        }
        var function = Function.count
        if case .string(let s)? = members["function"], let f = Function(wire: s) {
            function = f
        } else {
            let found = members["function"].map { ProblemReport.cut($0.serialized(), to: 100) } ?? "nothing"
            problems.add("\(place): \"function\" must be count, sum, avg (or average), min or max, found \(found)")
            ok = false
        }
        var key: String? = nil
        switch members["key"] {
        case nil, .null?: break
        case .string(let s)?: key = s
        case let other?:
            problems.add("\(place): \"key\" must be a string, found \(other.kindName)")
            ok = false
        }
        if key == nil, function != .count {
            problems.add("\(place): \(function.wireName) needs a \"key\" to aggregate")
            ok = false
        }
        guard ok else { return nil }
        self.init(name: name, function: function, key: key)
    }

    /// The wire form, as an item of `properties`.
    public var json: JSON {
        var members: [(String, JSON)] = [("name", .string(name)), ("function", .string(function.wireName))]
        if let key { members.append(("key", .string(key))) }
        return .object(.init(members, uniquingKeysWith: { a, _ in a }))
    }
}

/// A grouped request checked against the model: what to fetch for it, how each row of that fetch
/// feeds the groups, and how a group becomes a row.
struct FetchGrouping: Sendable {
    let entity: EntityID
    /// The fetch whose objects are grouped (its entity, predicate and sub-entities; `ids`, or a
    /// COUNT when `countsOnly`): prepared and planned as any fetch.
    let source: FetchRequest
    /// What is read of each object: the `groupBy` keys first, in order, then the aggregates' keys.
    let inputs: [KeyPathProjection]
    /// How many of `inputs` are the `groupBy` keys.
    let keyCount: Int
    let aggregates: [Aggregate]
    /// The row's names in order.
    let columns: [Column]
    /// The groups' order (`sort`); empty: by the groupBy keys, ascending.
    let ordering: [SortKey]
    /// A request of only counts of objects, without groupBy: the source's COUNT is the answer.
    let countsOnly: Bool
    /// `having`, bound over the groups' rows: field `k` is the `k`th groupBy key, field
    /// `keyCount + a` the `a`th aggregate (`Group.havingRow`).
    let having: BoundPredicate?

    struct Aggregate: Sendable {
        let spec: FetchAggregate
        /// The source property it reads (nil: `count` of objects).
        let input: Int?
        /// How its value is written: the key's property for min and max, else a number attribute.
        let result: Property
    }

    static let maxAggregates = 64
    static let maxKeys = 32

    struct SortKey: Sendable {
        let by: Column
        let ascending: Bool
        let caseInsensitive: Bool
    }

    enum Column: Sendable {
        /// The `i`th groupBy key.
        case key(Int, name: String, Property)
        /// The `i`th aggregate.
        case aggregate(Int)
    }

    init(_ request: FetchRequest, model: Model) throws(KeelError) {
        guard let entity = model.entity(named: request.entity) else {
            throw KeelError(.noSuchEntity, "no entity \"\(request.entity)\" in model \(model.name)", details: ["entity": .string(request.entity)])
        }
        self.entity = entity.id
        // Each group holds an accumulator per aggregate (~130 bytes): bounded, as a row is.
        if request.aggregates.count > Self.maxAggregates || request.groupBy.count > Self.maxKeys {
            throw KeelError(
                .badRequest,
                "a grouped fetch takes at most \(Self.maxKeys) groupBy keys and \(Self.maxAggregates) aggregates (found \(request.groupBy.count) and \(request.aggregates.count))")
        }
        if !request.include.isEmpty {
            throw KeelError(.badRequest, "\"include\" cannot be used with \"groupBy\" or aggregates: a group's row embeds no objects")
        }
        var inputs: [KeyPathProjection] = []
        func input(_ name: String, _ path: KeyPathProjection) -> Int {
            if let i = inputs.firstIndex(where: { $0.name == name }) { return i }
            inputs.append(path)
            return inputs.count - 1
        }
        for name in request.groupBy {
            guard !inputs.contains(where: { $0.name == name }) else { throw KeelError(.badRequest, "\"groupBy\" names \"\(name)\" twice") }
            _ = input(name, try KeyPathProjection(name, from: entity, in: model))
        }
        keyCount = inputs.count
        var aggregates: [Aggregate] = []
        var aggregateNames = Set<String>()
        for spec in request.aggregates {
            guard aggregateNames.insert(spec.name).inserted else {
                throw KeelError(.badRequest, "two aggregates are named \"\(spec.name)\"")
            }
            if request.groupBy.contains(spec.name) {
                throw KeelError(.badRequest, "the aggregate \"\(spec.name)\" has the name of a groupBy key: a row holds each name once")
            }
            // Numbers are written by their kind (an int sum that overflowed is a decimal).
            let number = Property.attribute(Attribute(name: spec.name, type: spec.function == .count ? .int64 : .double, declaredIn: entity.id))
            guard let key = spec.key else {
                aggregates.append(Aggregate(spec: spec, input: nil, result: number))
                continue
            }
            let path = try KeyPathProjection(key, from: entity, in: model)
            try Self.check(spec, path.property)
            let minOrMax = spec.function == .min || spec.function == .max
            aggregates.append(Aggregate(spec: spec, input: input(key, path), result: minOrMax ? path.property : number))
        }
        self.aggregates = aggregates
        var columns: [Column] = []
        var named = Set<String>()
        for name in request.properties ?? request.groupBy {
            guard named.insert(name).inserted else { throw KeelError(.badRequest, "\"properties\" names \"\(name)\" twice") }
            if let a = aggregates.firstIndex(where: { $0.spec.name == name }) {
                columns.append(.aggregate(a))
            } else if let k = request.groupBy.firstIndex(of: name) {
                columns.append(.key(k, name: name, inputs[k].property))
            } else {
                _ = try KeyPathProjection(name, from: entity, in: model)  // an unknown name is NO_SUCH_PROPERTY first
                throw KeelError(
                    .badRequest,
                    request.groupBy.isEmpty
                        ? "\"\(name)\" cannot be fetched with aggregates and no \"groupBy\": the row stands for every object fetched (group by it, or aggregate it)"
                        : "\"\(name)\" is neither a \"groupBy\" key nor an aggregate: a row stands for a group, which has no one value of it")
            }
        }
        for (a, aggregate) in aggregates.enumerated() where !named.contains(aggregate.spec.name) { columns.append(.aggregate(a)) }
        self.columns = columns
        var ordering: [SortKey] = []
        for descriptor in request.sort {
            let by: Column
            if let a = aggregates.firstIndex(where: { $0.spec.name == descriptor.key }) {
                by = .aggregate(a)
            } else if let k = request.groupBy.firstIndex(of: descriptor.key) {
                by = .key(k, name: descriptor.key, inputs[k].property)  // shown in the row or not
            } else {
                throw KeelError(
                    .badRequest,
                    "sort key \"\(descriptor.key)\" is not a name of the grouped rows: sort them by groupBy keys or aggregates' names",
                    details: ["key": .string(descriptor.key)])
            }
            ordering.append(SortKey(by: by, ascending: descriptor.ascending, caseInsensitive: descriptor.caseInsensitive))
        }
        self.ordering = ordering
        self.inputs = inputs
        if let text = request.having, !text.isEmpty {
            var binder = PredicateBinder(model: model, args: request.havingArgs, vars: request.vars)
            var row: [String: (field: Int, type: OperandType)] = [:]
            for (k, name) in request.groupBy.enumerated() {
                switch inputs[k].property {
                case .attribute(let a): row[name] = (k, .attribute(a.type))
                case .relationship(let r): row[name] = (k, .object(r.destination))
                }
            }
            for (a, aggregate) in aggregates.enumerated() {
                row[aggregate.spec.name] = (keyCount + a, Self.type(of: aggregate, inputs))
            }
            binder.groupRow = row
            having = try binder.bind(text, to: entity.id)
        } else {
            having = nil
        }
        countsOnly = request.groupBy.isEmpty && aggregates.allSatisfy { $0.spec.function == .count && $0.input == nil }
        source = FetchRequest(
            entity: request.entity, predicate: request.predicate, args: request.args, vars: request.vars,
            includeSubentities: request.includeSubentities, result: countsOnly ? .count : .ids, usesIndexes: request.usesIndexes)
    }

    /// Whether every aggregate reads a field of the object itself (no key path): then the objects
    /// can be aggregated inside the engine reads on partly decoded rows (FetchExecutor.visit),
    /// the `groupBy` key paths followed once per group afterwards.
    var aggregatesReadTheRow: Bool {
        aggregates.allSatisfy { a in a.input.map { inputs[$0].hops.isEmpty } ?? true }
    }

    /// The fields of the fetched object the inputs start with (a key path's first to-one).
    func wanted(fieldCount: Int) -> [Bool] {
        var mask = [Bool](repeating: false, count: fieldCount)
        for input in inputs where input.firstField < fieldCount { mask[input.firstField] = true }
        return mask
    }

    /// What an aggregate's value is compared as in `having`: the type the predicate language's
    /// `@count`, `@sum`… give over the same key.
    static func type(of aggregate: Aggregate, _ inputs: [KeyPathProjection]) -> OperandType {
        guard let input = aggregate.input, case .attribute(let key) = inputs[input].property else { return .attribute(.int64) }
        switch (aggregate.spec.function, key.type) {
        case (.count, _): return .attribute(.int64)
        case (.min, let t), (.max, let t): return .attribute(t)
        case (_, .decimal): return .attribute(.decimal)
        case (.sum, .int16), (.sum, .int32), (.sum, .int64): return .attribute(.int64)
        default: return .attribute(.double)
        }
    }

    /// Whether `function` applies to values of `property`.
    static func check(_ spec: FetchAggregate, _ property: Property) throws(KeelError) {
        guard spec.function != .count else { return }
        let what: String
        if case .attribute(let a) = property {
            switch (spec.function, a.type) {
            case (.sum, .int16), (.sum, .int32), (.sum, .int64), (.sum, .double), (.sum, .float), (.sum, .decimal),
                (.avg, .int16), (.avg, .int32), (.avg, .int64), (.avg, .double), (.avg, .float), (.avg, .decimal):
                return
            case (.min, let t), (.max, let t):
                if [.int16, .int32, .int64, .double, .float, .decimal, .date, .string].contains(t) { return }
            default: break
            }
            what = "a \(a.type.rawValue) attribute"
        } else {
            what = "a relationship"
        }
        let wants = spec.function == .min || spec.function == .max ? "a number, date or string attribute" : "a number attribute"
        throw KeelError(
            .badRequest, "the aggregate \"\(spec.name)\": \(spec.function.wireName) of \"\(spec.key ?? "")\", \(what), needs \(wants)",
            details: ["aggregate": .string(spec.name)])
    }
}

/// One aggregate's running value over a group's rows — and over a to-many's values for the
/// predicate language's `@sum`, `@avg`, `@min` and `@max` (PredicateEvaluator+Paths.swift), so both
/// order values alike: min and max by `Value.sortCompare` (NaN first), whatever order they come in.
struct AggregateAccumulator: Sendable {
    let function: FetchAggregate.Function
    private var count = 0
    private var sum = NumberSum()
    private var best: Value = .null

    init(_ function: FetchAggregate.Function) {
        self.function = function
    }

    /// The predicate language's `employees.@max.salary`: `function` over a to-many's values.
    /// `@count` counts them all, nulls included (a grouped fetch's `count` of a key skips nulls).
    static func collection(_ function: AggregateFunction, _ values: [Value]) -> Value {
        if function == .count { return .int(Int64(values.count)) }
        var accumulator = AggregateAccumulator(function)
        for v in values { accumulator.add(v) }
        return accumulator.value
    }

    /// Adds one row's value (`.null` for a null; a `count` of objects is given `.bool(true)`).
    mutating func add(_ value: Value) {
        switch function {
        case .count:
            if !value.isNull { count += 1 }
        case .sum, .avg:
            sum.add(value)
        case .min, .max:
            guard !value.isNull else { return }
            if best.isNull {
                best = value
                return
            }
            let order = Value.sortCompare(value, best)
            if function == .min ? order == .orderedAscending : order == .orderedDescending { best = value }
        }
    }

    /// Adds the decimal `value` × 10^`scale` to a sum or an average (a number key's parts).
    mutating func addDecimal(_ value: Int64, scale: Int) {
        sum.addDecimal(value, scale: scale)
    }

    /// Adds what `other` (of the same function) took: two groups found to be one.
    mutating func merge(_ other: AggregateAccumulator) {
        count += other.count
        sum.merge(other.sum)
        if function == .min || function == .max { add(other.best) }
    }

    /// The count of a `count` of objects without reading a row (a COUNT's answer).
    mutating func setCount(_ n: Int) {
        count = n
    }

    var value: Value {
        switch function {
        case .count: .int(Int64(count))
        case .sum: sum.total
        case .avg: sum.average
        case .min, .max: best
        }
    }
}
