// Aggregates in the typed API (Core Data's `NSExpressionDescription` in `propertiesToFetch`, with
// `propertiesToGroupBy`): a value computed over a group of objects, named, read back typed.
//
//     let payroll = Employee.salary.sum(as: "payroll")            // KeelAggregate<Employee, Decimal>
//     let rows = try await context.fetchProperties(
//         Employee.self, Employee.department.name, KeelAggregate.count(of: Employee.self, as: "headcount"), payroll,
//         groupedBy: [Employee.department.name], sortedBy: .descending(payroll)).collect()
//     try rows[0][Employee.department.name]                        // "Sales"
//     try rows[0][payroll]                                         // 9300.5
//
// `having:` keeps the groups whose row satisfies a predicate over the grouped keys and the
// aggregates (`payroll > 10_000 && Employee.department.name != nil`), written with the same
// operators as any typed predicate; it is sent as the request's `having` and `havingArgs`.
//
// The value's Swift type follows the server's rules (Docs/Contexts.md, "Groups and aggregates"):
// a count is `Int64`; a sum of integers `Int64`, of `Double`/`Float` `Double`, of `Decimal`
// `Decimal`; an average `Double` (`Decimal` for `Decimal`); min and max the key's own type. (An
// integer sum past `Int64`'s range comes back as a decimal: read as `Int64` it is `TYPE`.)

public import Foundation

/// An aggregate over the objects of a group: its name in the row, its function and key.
public struct KeelAggregate<Root: KeelObject, Value: KeelValue>: Sendable, Hashable {
    /// The row's key for the value.
    public let name: String
    public let function: FetchAggregate.Function
    /// The aggregated key path (nil: `count` of the objects).
    public let key: String?

    init(_ name: String, _ function: FetchAggregate.Function, _ key: String?) {
        self.name = name
        self.function = function
        self.key = key
    }
}

extension KeelAggregate: ProjectableKey {
    public var propertyName: String { name }
    public var propertyJSON: JSON { FetchAggregate(name: name, function: function, key: key).json }
}

extension KeelAggregate where Value == Int64 {
    /// How many objects a group has: `KeelAggregate.count(of: Employee.self, as: "headcount")`.
    public static func count(of entity: Root.Type, as name: String) -> KeelAggregate<Root, Int64> {
        KeelAggregate(name, .count, nil)
    }
}

extension AttributeKey {
    /// How many objects of a group have a value (not null) for this key.
    public func count(as name: String) -> KeelAggregate<Root, Int64> { KeelAggregate(name, .count, sortKey) }

    /// The smallest value (numbers, dates, strings by their UTF-8 bytes); nil when none has one.
    public func min(as name: String) -> KeelAggregate<Root, Value> { KeelAggregate(name, .min, sortKey) }

    /// The largest value; nil when none has one.
    public func max(as name: String) -> KeelAggregate<Root, Value> { KeelAggregate(name, .max, sortKey) }
}

extension AttributeKey where Value: BinaryInteger {
    /// The sum of the values (0 when none has one).
    public func sum(as name: String) -> KeelAggregate<Root, Int64> { KeelAggregate(name, .sum, sortKey) }

    /// The mean of the values; nil when none has one.
    public func average(as name: String) -> KeelAggregate<Root, Double> { KeelAggregate(name, .avg, sortKey) }
}

extension AttributeKey where Value: BinaryFloatingPoint {
    public func sum(as name: String) -> KeelAggregate<Root, Double> { KeelAggregate(name, .sum, sortKey) }
    public func average(as name: String) -> KeelAggregate<Root, Double> { KeelAggregate(name, .avg, sortKey) }
}

extension AttributeKey where Value == Decimal {
    public func sum(as name: String) -> KeelAggregate<Root, Decimal> { KeelAggregate(name, .sum, sortKey) }
    public func average(as name: String) -> KeelAggregate<Root, Decimal> { KeelAggregate(name, .avg, sortKey) }
}

// MARK: Comparisons, for `having:` (Core Data's `havingPredicate`): the operators of
// `ComparisonKey` (TypedPredicate.swift), over the aggregate's name in the group's row.

extension KeelAggregate: ComparisonKey {
    /// The aggregate's name as predicate text (keywords escaped: `#count`).
    public var predicateText: String { PredicateKeyPath.escapedKey(name) }
}

extension KeelProperties {
    /// An aggregate's value in a group's row; nil when it is null (`avg`, `min`, `max` over no values).
    public subscript<V: KeelValue>(aggregate: KeelAggregate<Entity, V>) -> V? {
        get throws(KeelError) { try V.decodeOptional(value(aggregate.name), owner: "\(Entity.entity.name) \(aggregate.name)") }
    }
}

extension TypedSort {
    /// Groups' rows by an aggregate: `.descending(payroll)`.
    public static func ascending<V>(_ aggregate: KeelAggregate<Root, V>) -> TypedSort {
        TypedSort(key: aggregate.name, ascending: true, caseInsensitive: false)
    }

    public static func descending<V>(_ aggregate: KeelAggregate<Root, V>) -> TypedSort {
        TypedSort(key: aggregate.name, ascending: false, caseInsensitive: false)
    }
}
