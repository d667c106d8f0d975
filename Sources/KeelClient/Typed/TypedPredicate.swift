// Predicates from typed keys: `Employee.age > 30 && Employee.department.name == "Sales"`
// builds the text `(age > %@) AND (department.name == %@)` with the arguments `[30, "Sales"]` —
// every value travels as an argument in its wire encoding, never pasted into the text, so no
// value can change the predicate's meaning (Docs/Predicates.md: `%@` takes the next argument).
// Keys are checked at compile time against the entity (`Root`) and the value's Swift type.

/// A predicate over `Root` objects: its text and its arguments, in order.
public struct TypedPredicate<Root: KeelObject>: Sendable, CustomStringConvertible {
    /// NSPredicate-format text with `%@` for each argument.
    public let format: String
    /// The values for the `%@`s, in wire JSON.
    public let arguments: [JSON]

    /// A predicate from text and arguments (for what the typed operators do not cover:
    /// `TypedPredicate("employees.@avg.age < %@", [30])`).
    public init(_ format: String, _ arguments: [JSON] = []) {
        self.format = format
        self.arguments = arguments
    }

    /// Every object.
    public static var all: TypedPredicate { TypedPredicate("TRUEPREDICATE") }
    /// No object.
    public static var none: TypedPredicate { TypedPredicate("FALSEPREDICATE") }

    public var description: String {
        arguments.isEmpty ? format : "\(format) \(JSON.array(arguments).serialized())"
    }

    public static func && (a: TypedPredicate, b: TypedPredicate) -> TypedPredicate {
        TypedPredicate("(\(a.format)) AND (\(b.format))", a.arguments + b.arguments)
    }

    public static func || (a: TypedPredicate, b: TypedPredicate) -> TypedPredicate {
        TypedPredicate("(\(a.format)) OR (\(b.format))", a.arguments + b.arguments)
    }

    public static prefix func ! (a: TypedPredicate) -> TypedPredicate {
        TypedPredicate("NOT (\(a.format))", a.arguments)
    }

    /// `key OP %@` with `value` as the argument.
    static func compare(_ key: String, _ op: String, _ value: JSON, _ options: StringMatch = []) -> TypedPredicate {
        TypedPredicate("\(key) \(op)\(options.text) %@", [value])
    }
}

/// `[c]`, `[d]`, `[cd]`: case- and diacritic-insensitive text comparison.
public struct StringMatch: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `[c]`: Unicode case folding (`ß` matches `ss`).
    public static let caseInsensitive = StringMatch(rawValue: 1)
    /// `[d]`: accents and other marks ignored.
    public static let diacriticInsensitive = StringMatch(rawValue: 2)

    var text: String {
        switch (contains(.caseInsensitive), contains(.diacriticInsensitive)) {
        case (true, true): "[cd]"
        case (true, false): "[c]"
        case (false, true): "[d]"
        case (false, false): ""
        }
    }
}

// MARK: Attributes and aggregates

/// What a typed predicate compares with values of one Swift type: an attribute's key
/// (`Employee.age`, `Employee.department.name`) or, in `having:`, a group's aggregate
/// (`Employee.salary.sum(as: "payroll")`). Both get the same operators from here.
public protocol ComparisonKey<Root, Value>: Sendable {
    associatedtype Root: KeelObject
    associatedtype Value: KeelValue
    /// The key as predicate text (keywords escaped: `#in`).
    var predicateText: String { get }
}

extension ComparisonKey {
    public static func == (key: Self, value: Value) -> TypedPredicate<Root> {
        .compare(key.predicateText, "==", value.wire)
    }

    public static func != (key: Self, value: Value) -> TypedPredicate<Root> {
        .compare(key.predicateText, "!=", value.wire)
    }

    /// `key == nil`: unset (or behind an unset to-one); for an aggregate, no value in the group
    /// (avg, min or max over no values).
    public static func == (key: Self, _: _OptionalNilComparisonType) -> TypedPredicate<Root> {
        TypedPredicate("\(key.predicateText) == nil")
    }

    public static func != (key: Self, _: _OptionalNilComparisonType) -> TypedPredicate<Root> {
        TypedPredicate("\(key.predicateText) != nil")
    }

    /// `key IN %@`: equal to one of `values`.
    public func `in`(_ values: [Value]) -> TypedPredicate<Root> {
        TypedPredicate("\(predicateText) IN %@", [.array(values.map(\.wire))])
    }
}

extension ComparisonKey where Value: Comparable {
    public static func < (key: Self, value: Value) -> TypedPredicate<Root> {
        .compare(key.predicateText, "<", value.wire)
    }

    public static func <= (key: Self, value: Value) -> TypedPredicate<Root> {
        .compare(key.predicateText, "<=", value.wire)
    }

    public static func > (key: Self, value: Value) -> TypedPredicate<Root> {
        .compare(key.predicateText, ">", value.wire)
    }

    public static func >= (key: Self, value: Value) -> TypedPredicate<Root> {
        .compare(key.predicateText, ">=", value.wire)
    }

    /// `key BETWEEN {lower, upper}` (inclusive).
    public func between(_ lower: Value, _ upper: Value) -> TypedPredicate<Root> {
        TypedPredicate("\(predicateText) BETWEEN %@", [.array([lower.wire, upper.wire])])
    }

    /// `key BETWEEN` a closed range.
    public func isIn(_ range: ClosedRange<Value>) -> TypedPredicate<Root> {
        between(range.lowerBound, range.upperBound)
    }
}

extension ComparisonKey where Value == String {
    public func beginsWith(_ prefix: String, _ options: StringMatch = []) -> TypedPredicate<Root> {
        .compare(predicateText, "BEGINSWITH", .string(prefix), options)
    }

    public func endsWith(_ suffix: String, _ options: StringMatch = []) -> TypedPredicate<Root> {
        .compare(predicateText, "ENDSWITH", .string(suffix), options)
    }

    public func contains(_ text: String, _ options: StringMatch = []) -> TypedPredicate<Root> {
        .compare(predicateText, "CONTAINS", .string(text), options)
    }

    /// Whole-text wildcards: `*` any run, `?` one character.
    public func like(_ pattern: String, _ options: StringMatch = []) -> TypedPredicate<Root> {
        .compare(predicateText, "LIKE", .string(pattern), options)
    }

    /// The whole text matches a regular expression.
    public func matches(_ regex: String, _ options: StringMatch = []) -> TypedPredicate<Root> {
        .compare(predicateText, "MATCHES", .string(regex), options)
    }

    /// `==[c]` and friends.
    public func equals(_ text: String, _ options: StringMatch) -> TypedPredicate<Root> {
        .compare(predicateText, "==", .string(text), options)
    }
}

extension AttributeKey: ComparisonKey {}

// MARK: Relationships

extension ToOneKey {
    /// The to-one points at `id`.
    public static func == (key: ToOneKey, id: KeelID<Target>) -> TypedPredicate<Root> {
        .compare(key.predicateText, "==", id.wire)
    }

    public static func != (key: ToOneKey, id: KeelID<Target>) -> TypedPredicate<Root> {
        .compare(key.predicateText, "!=", id.wire)
    }

    /// Unset, or pointing at an object that no longer exists.
    public static func == (key: ToOneKey, _: _OptionalNilComparisonType) -> TypedPredicate<Root> {
        TypedPredicate("\(key.predicateText) == nil")
    }

    public static func != (key: ToOneKey, _: _OptionalNilComparisonType) -> TypedPredicate<Root> {
        TypedPredicate("\(key.predicateText) != nil")
    }

    /// The to-one points at one of `ids`.
    public func `in`(_ ids: [KeelID<Target>]) -> TypedPredicate<Root> {
        TypedPredicate("\(predicateText) IN %@", [ids.wire])
    }
}

extension ToManyKey {
    /// The number of members (`employees.@count`), for comparisons: `Department.employees.count > 3`.
    public var count: CountKey<Root> { CountKey(text: predicateText + ".@count") }

    /// `employees CONTAINS %@`: `id` is a member.
    public func contains(_ id: KeelID<Target>) -> TypedPredicate<Root> {
        TypedPredicate("\(predicateText) CONTAINS %@", [id.wire])
    }

    /// Some member satisfies `predicate` (a predicate over the members' entity).
    public func any(_ predicate: TypedPredicate<Target>) -> TypedPredicate<Root> {
        subquery(predicate.format, predicate.arguments, "> 0")
    }

    /// Every member satisfies `predicate` (true when there is none).
    public func all(_ predicate: TypedPredicate<Target>) -> TypedPredicate<Root> {
        subquery("NOT (\(predicate.format))", predicate.arguments, "== 0")
    }

    /// No member satisfies `predicate`.
    public func none(_ predicate: TypedPredicate<Target>) -> TypedPredicate<Root> {
        subquery(predicate.format, predicate.arguments, "== 0")
    }

    /// `SUBQUERY(key, $mN, inner).@count test`; inside, keys read the member (it is `SELF`). The
    /// variable is numbered by nesting depth so nested subqueries never share one.
    private func subquery(_ inner: String, _ arguments: [JSON], _ test: String) -> TypedPredicate<Root> {
        let depth = inner.components(separatedBy: "SUBQUERY(").count - 1
        return TypedPredicate("SUBQUERY(\(predicateText), $m\(depth), \(inner)).@count \(test)", arguments)
    }
}

/// The member count of a to-many, compared with a number.
public struct CountKey<Root: KeelObject>: Sendable {
    let text: String

    public static func == (key: CountKey, n: Int) -> TypedPredicate<Root> { .compare(key.text, "==", .int(Int64(n))) }
    public static func != (key: CountKey, n: Int) -> TypedPredicate<Root> { .compare(key.text, "!=", .int(Int64(n))) }
    public static func < (key: CountKey, n: Int) -> TypedPredicate<Root> { .compare(key.text, "<", .int(Int64(n))) }
    public static func <= (key: CountKey, n: Int) -> TypedPredicate<Root> { .compare(key.text, "<=", .int(Int64(n))) }
    public static func > (key: CountKey, n: Int) -> TypedPredicate<Root> { .compare(key.text, ">", .int(Int64(n))) }
    public static func >= (key: CountKey, n: Int) -> TypedPredicate<Root> { .compare(key.text, ">=", .int(Int64(n))) }
}

/// `SELF == %@`: the object with this ID.
public func == <Root>(_: KeelSelf<Root>, id: KeelID<Root>) -> TypedPredicate<Root> {
    .compare("SELF", "==", id.wire)
}

/// Stands for the object itself in a predicate: `KeelSelf<Employee>() == id`.
public struct KeelSelf<Root: KeelObject>: Sendable {
    public init() {}

    /// `SELF IN %@`: one of `ids`.
    public func `in`(_ ids: [KeelID<Root>]) -> TypedPredicate<Root> {
        TypedPredicate("SELF IN %@", [ids.wire])
    }
}
