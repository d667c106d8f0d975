// The predicate language's syntax tree: what `KeelPredicate.parse` (PredicateParser.swift) makes of
// an `NSPredicate(format:)` string, before it meets a model. Independent of storage and of any
// entity: `PredicateBinder` resolves key paths, arguments and variables against a `Model` and
// turns this tree into a `BoundPredicate`, which is what evaluation and the planner read.
//
// Equality and hashing compare meaning, not spelling: `a AND b AND c` and `(a AND b) AND c` are
// the same tree (AND/OR are flattened), `SOME` is `ANY`, `=<` is `<=`, `SELF.name` is `name`, and
// source positions (kept for error messages) never take part. So `parse(description)` gives back
// an equal tree for every tree `parse` made (tests: PredicateRoundTripTests).

/// A parsed predicate: a boolean combination of comparisons.
public indirect enum KeelPredicate: Sendable, Hashable {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    /// `NOT p` / `!p`.
    case not(KeelPredicate)
    /// `a AND b AND …` (never nested directly in another `and`; use `KeelPredicate.and(_:)`).
    case and([KeelPredicate])
    /// `a OR b OR …` (never nested directly in another `or`).
    case or([KeelPredicate])
    case comparison(Comparison)

    /// A conjunction with nested conjunctions flattened (what the parser builds).
    public static func and(flattening terms: [KeelPredicate]) -> KeelPredicate {
        var flat: [KeelPredicate] = []
        for term in terms {
            if case .and(let inner) = term { flat.append(contentsOf: inner) } else { flat.append(term) }
        }
        return flat.count == 1 ? flat[0] : .and(flat)
    }

    /// A disjunction with nested disjunctions flattened.
    public static func or(flattening terms: [KeelPredicate]) -> KeelPredicate {
        var flat: [KeelPredicate] = []
        for term in terms {
            if case .or(let inner) = term { flat.append(contentsOf: inner) } else { flat.append(term) }
        }
        return flat.count == 1 ? flat[0] : .or(flat)
    }
}

/// `left op[options] right`, optionally under `ANY`/`ALL`/`NONE`.
public struct Comparison: Sendable, Hashable {
    public var modifier: ComparisonModifier
    public var left: KeelExpression
    public var op: ComparisonOperator
    public var options: StringOptions
    public var right: KeelExpression
    /// Where the operator starts in the source (not part of equality).
    public var position: SourcePosition

    public init(
        modifier: ComparisonModifier = .direct, left: KeelExpression, op: ComparisonOperator, options: StringOptions = [],
        right: KeelExpression, position: SourcePosition = SourcePosition(0)
    ) {
        self.modifier = modifier
        self.left = left
        self.op = op
        self.options = options
        self.right = right
        self.position = position
    }
}

/// The quantifier of a comparison whose left side is a collection (a to-many key path).
public enum ComparisonModifier: String, Sendable, Hashable {
    /// No quantifier: the left side is one value.
    case direct = ""
    /// `ANY` / `SOME`: true when some element satisfies the comparison.
    case any = "ANY"
    /// `ALL`: true when every element does (so true for an empty collection).
    case all = "ALL"
    /// `NONE`: true when no element does (so true for an empty collection).
    case none = "NONE"
}

/// The comparison operators, spelled canonically.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case between = "BETWEEN"
    case `in` = "IN"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case matches = "MATCHES"

    /// The operators that read their operands as text.
    public var isStringOperator: Bool {
        switch self {
        case .beginsWith, .endsWith, .contains, .like, .matches: true
        default: false
        }
    }

    /// `<`, `<=`, `>`, `>=`.
    public var isOrdering: Bool {
        switch self {
        case .less, .lessOrEqual, .greater, .greaterOrEqual: true
        default: false
        }
    }
}

/// `[c]`, `[d]`, `[cd]`: how strings are compared.
public struct StringOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `c`: Unicode case folding (full folding: `ß` matches `ss`).
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// `d`: diacritics removed (`é` matches `e`).
    public static let diacriticInsensitive = StringOptions(rawValue: 2)

    /// `[c]`, `[d]`, `[cd]`, or empty.
    public var text: String {
        if isEmpty { return "" }
        return "[" + (contains(.caseInsensitive) ? "c" : "") + (contains(.diacriticInsensitive) ? "d" : "") + "]"
    }
}

/// An offset into the predicate text, in Unicode scalars from 0, for error messages. Never part
/// of a tree's equality or hash, so trees parsed from different spellings compare equal.
public struct SourcePosition: Sendable, Hashable, CustomStringConvertible {
    public var offset: Int
    public init(_ offset: Int) { self.offset = offset }
    public static func == (_: SourcePosition, _: SourcePosition) -> Bool { true }
    public func hash(into hasher: inout Hasher) {}
    public var description: String { String(offset) }
}

extension KeelPredicate {
    /// Whether evaluating the predicate for an object may read another object: a key path of
    /// more than one property (`department.name`), a collection operator (`employees.@count`), a
    /// SUBQUERY, or a variable with properties after it (`$FETCH_SOURCE.uuid`). False means the
    /// answer for an object changes only when that object does — but for a relationship whose
    /// targets may be deleted without the object recording it (`comparedKeys`,
    /// `Model.relationshipMayDangle`) — and live results follow only its entity then (KeelClient's
    /// KeelFetchedResults).
    public var readsOtherObjects: Bool {
        switch self {
        case .constant: false
        case .not(let p): p.readsOtherObjects
        case .and(let terms), .or(let terms): terms.contains { $0.readsOtherObjects }
        case .comparison(let c): c.left.readsOtherObjects || c.right.readsOtherObjects
        }
    }

    /// The single properties of the evaluated object a comparison reads, on either side and with
    /// any operator (`owner == nil`, `owner == %@`, `nil != department`, `ANY computers == %@`).
    /// For a relationship whose targets may dangle the answer changes when a target is deleted,
    /// which records no change of the object itself.
    public var comparedKeys: Set<String> {
        switch self {
        case .constant: []
        case .not(let p): p.comparedKeys
        case .and(let terms), .or(let terms): terms.reduce(into: []) { $0.formUnion($1.comparedKeys) }
        case .comparison(let c): Set([c.left.singleKey, c.right.singleKey].compactMap { $0 })
        }
    }
}

extension KeelExpression {
    /// See `KeelPredicate.readsOtherObjects`.
    public var readsOtherObjects: Bool {
        switch self {
        case .literal, .argument: false
        case .list(let items, _): items.contains { $0.readsOtherObjects }
        case .keyPath(let path):
            switch path.base {
            case .subquery: true
            case .variable: !path.components.isEmpty
            case .object:
                path.components.count > 1 || path.components.contains { if case .aggregate = $0 { true } else { false } }
            }
        }
    }

    /// The property name when this is a key path of one property of the evaluated object.
    var singleKey: String? {
        guard case .keyPath(let path) = self, case .object = path.base, path.components.count == 1, case .key(let name) = path.components[0]
        else { return nil }
        return name
    }
}
