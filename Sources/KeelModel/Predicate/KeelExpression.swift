// The operands of a comparison in the syntax tree (KeelPredicate.swift): literals, lists, `%@`
// arguments, `$VARIABLES`, key paths from the evaluated object, a variable or a SUBQUERY, with
// aggregates (`@count`, `@sum`, …) among their components. Nothing here knows a model; the
// binder decides what a key path means.

/// One side of a comparison.
public indirect enum KeelExpression: Sendable, Hashable {
    case literal(Literal)
    /// `{a, b, c}`: for `IN` and `BETWEEN`.
    case list([KeelExpression], position: SourcePosition)
    /// `%@`: the `index`-th (from 0) of the request's `args`.
    case argument(Int, position: SourcePosition)
    /// A key path, `SELF`, `$NAME` (a key path with a variable base and no components) or a
    /// SUBQUERY with its components.
    case keyPath(PredicateKeyPath)

    /// Where the expression starts in the source.
    public var position: SourcePosition {
        switch self {
        case .literal(let l): l.position
        case .list(_, let p), .argument(_, let p): p
        case .keyPath(let k): k.position
        }
    }
}

/// A constant written in the predicate.
public struct Literal: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// `nil` / `NULL`.
        case null
        /// `TRUE`/`YES`, `FALSE`/`NO`.
        case bool(Bool)
        /// A whole number within Int64 (decimal, `0x`, `0o` or `0b`).
        case int(Int64)
        /// Any other number, kept as written (`-12.50`, `1e3`, `99999999999999999999`) so that
        /// a decimal attribute compares with it exactly; a double one reads it as a Double.
        case real(String)
        case string(String)
    }

    public var kind: Kind
    public var position: SourcePosition

    public init(_ kind: Kind, position: SourcePosition = SourcePosition(0)) {
        self.kind = kind
        self.position = position
    }
}

/// `base.component.component…`
public struct PredicateKeyPath: Sendable, Hashable {
    public enum Base: Sendable, Hashable {
        /// The object being evaluated: no base written, or `SELF`.
        case object
        /// `$NAME`: a SUBQUERY variable, a request variable (`vars`) or `$FETCH_SOURCE`.
        case variable(String)
        /// `SUBQUERY(collection, $var, predicate)`: the elements of `collection` for which
        /// `predicate` holds with `$var` (and SELF) set to the element.
        case subquery(collection: KeelExpression, variable: String, predicate: KeelPredicate)
    }

    public enum Component: Sendable, Hashable {
        /// A property name.
        case key(String)
        /// `@count`, `@sum`, `@avg`, `@min`, `@max`.
        case aggregate(AggregateFunction)
    }

    public var base: Base
    public var components: [Component]
    /// Where the key path starts; `componentPositions[i]` is where component `i` starts.
    public var position: SourcePosition
    public var componentPositions: [SourcePosition]

    public init(
        base: Base = .object, components: [Component], position: SourcePosition = SourcePosition(0),
        componentPositions: [SourcePosition]? = nil
    ) {
        self.base = base
        self.components = components
        self.position = position
        self.componentPositions = componentPositions ?? Array(repeating: position, count: components.count)
    }

    /// `name`, `department.name` (a path of plain keys from the evaluated object).
    public init(_ dotted: String) {
        self.init(components: dotted.split(separator: ".").map { .key(String($0)) })
    }

    /// Source positions are not part of equality; `componentPositions` is ignored the same way.
    public static func == (a: PredicateKeyPath, b: PredicateKeyPath) -> Bool {
        a.base == b.base && a.components == b.components
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(base)
        hasher.combine(components)
    }
}

/// The collection operators of key paths (`employees.@sum.salary`), and the functions of a
/// grouped fetch's aggregates (`FetchAggregate.Function`, named without the `@` on the wire).
public enum AggregateFunction: String, Sendable, Hashable, CaseIterable {
    case count = "@count"
    case sum = "@sum"
    case avg = "@avg"
    case min = "@min"
    case max = "@max"

    /// The name in a fetch's aggregate (`{"function":"sum"}`).
    public var wireName: String { String(rawValue.dropFirst()) }

    /// From an aggregate's wire name (`average` is read as `avg`, Core Data's `average:`).
    public init?(wire: String) {
        if wire == "average" {
            self = .avg
            return
        }
        self.init(rawValue: "@" + wire)
    }
}
