// Evaluating a bound predicate on one object, with Core Data's (in-memory NSPredicate's)
// meaning. Two-valued logic, not SQL's three: a comparison involving nil is simply true or
// false (Docs/Predicates.md, "nil"), so `NOT (age < 30)` holds for an object without an age.
//
// - `==`/`!=`: `Value.compare` by meaning (numbers across int/double/decimal, dates by instant,
//   strings by bytes, IDs); nil equals only nil; values of unrelated kinds are unequal.
// - `<` `<=` `>` `>=` and BETWEEN (inclusive): false when either side is nil or the kinds do not
//   compare.
// - `[c]`/`[d]`: both sides folded (TextFolding.swift), then bytes. Constants are folded once
//   at bind time; only the object's side is folded here, and ASCII text without allocating.
// - IN: equal to some element of a list or to-many; with a string on the right, a substring.
// - String operators on a nil or non-text side: false.
// - ANY: some element satisfies (false when empty); ALL: every one (true when empty); NONE: no
//   element (true when empty).
// Per object, the common shapes (`attribute op constant`) read the row directly: no lookups and
// no allocation.

import Foundation

extension BoundPredicate {
    /// Whether `object` — of the bound entity or one below it — satisfies the predicate.
    /// Relationships are followed through `graph` (a store snapshot or a context's overlay).
    public func evaluate(_ object: StoredObject, in graph: some ObjectGraphReading) throws(KeelError) -> Bool {
        var evaluator = PredicateEvaluator(graph: graph, slotCount: slotCount)
        return try evaluator.node(root, object)
    }
}

/// One side of a comparison, evaluated.
enum Operand {
    case one(Value)
    case many([Value])

    var elements: [Value] {
        switch self {
        case .one(let v): [v]
        case .many(let vs): vs
        }
    }
}

struct PredicateEvaluator<Graph: ObjectGraphReading> {
    let graph: Graph
    /// SUBQUERY variables' current elements.
    var slots: [StoredObject?]

    init(graph: Graph, slotCount: Int) {
        self.graph = graph
        self.slots = Array(repeating: nil, count: slotCount)
    }

    mutating func node(_ node: BoundNode, _ object: StoredObject) throws(KeelError) -> Bool {
        switch node {
        case .constant(let b): return b
        case .not(let inner): return try !self.node(inner, object)
        case .and(let terms):
            for term in terms {
                if try !self.node(term, object) { return false }
            }
            return true
        case .or(let terms):
            for term in terms {
                if try self.node(term, object) { return true }
            }
            return false
        case .comparison(let c): return try comparison(c, object)
        }
    }

    mutating func expression(_ expression: BoundExpression, _ object: StoredObject) throws(KeelError) -> Operand {
        switch expression {
        case .constant(let v): return .one(v)
        case .list(let vs): return .many(vs)
        case .field(let f): return .one(f < object.values.count ? object.values[f] : .null)
        case .path(let p): return try path(p, object)
        }
    }

    private mutating func comparison(_ c: BoundComparison, _ object: StoredObject) throws(KeelError) -> Bool {
        let left = try expression(c.left, object)
        let right: Operand = c.pattern == nil ? try expression(c.right, object) : .one(.null)
        let foldRight: Bool
        switch c.right {
        case .constant, .list: foldRight = false
        default: foldRight = !c.options.isEmpty
        }
        switch c.modifier {
        case .direct:
            switch left {
            case .one(let v): return try test(v, c, right, foldRight)
            case .many(let vs):
                // `collection CONTAINS value`: membership.
                guard case .one(let r) = right else { return false }
                return vs.contains { equal($0, r, c.options, foldRight) }
            }
        case .any:
            for element in left.elements { if try test(element, c, right, foldRight) { return true } }
            return false
        case .all:
            for element in left.elements { if !(try test(element, c, right, foldRight)) { return false } }
            return true
        case .none:
            for element in left.elements { if try test(element, c, right, foldRight) { return false } }
            return true
        }
    }

    /// One value of the left side against the right side. Throws only what a MATCHES pattern
    /// throws (a text that exhausts its backtracking budget).
    private func test(_ l: Value, _ c: BoundComparison, _ right: Operand, _ foldRight: Bool) throws(KeelError) -> Bool {
        switch c.op {
        case .equal:
            if let pattern = c.pattern {
                guard let text = Self.text(l) else { return false }
                return try pattern.matches(text)
            }
            guard case .one(let r) = right else { return false }
            return equal(l, r, c.options, foldRight)
        case .notEqual:
            if let pattern = c.pattern {
                guard let text = Self.text(l) else { return true }
                return !(try pattern.matches(text))
            }
            guard case .one(let r) = right else { return true }
            return !equal(l, r, c.options, foldRight)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard case .one(let r) = right, let order = order(l, r, c.options, foldRight) else { return false }
            switch c.op {
            case .less: return order == .orderedAscending
            case .lessOrEqual: return order != .orderedDescending
            case .greater: return order == .orderedDescending
            default: return order != .orderedAscending
            }
        case .between:
            guard case .many(let bounds) = right, bounds.count == 2,
                let low = order(l, bounds[0], c.options, foldRight), let high = order(l, bounds[1], c.options, foldRight)
            else { return false }
            return low != .orderedAscending && high != .orderedDescending
        case .in:
            switch right {
            case .many(let vs): return vs.contains { equal(l, $0, c.options, foldRight) }
            case .one(let r):
                if let needle = Self.text(l), let haystack = Self.text(r) {
                    guard let pattern = try? StringPattern(.contains, needle, options: c.options, position: c.position) else { return false }
                    return try pattern.matches(haystack)
                }
                return equal(l, r, c.options, foldRight)
            }
        case .beginsWith, .endsWith, .contains, .like, .matches:
            guard let text = Self.text(l) else { return false }
            if let pattern = c.pattern { return try pattern.matches(text) }
            // A pattern from the object itself (`name BEGINSWITH nickname`): prepared per object.
            guard case .one(let r) = right, let patternText = Self.text(r),
                let pattern = try? StringPattern(c.op, patternText, options: c.options, position: c.position)
            else { return false }
            return try pattern.matches(text)
        }
    }

    private func equal(_ l: Value, _ r: Value, _ options: StringOptions, _ foldRight: Bool) -> Bool {
        if !options.isEmpty, let a = Self.text(l), let b = Self.text(r) {
            return TextFolding.fold(a, options).utf8.elementsEqual(foldRight ? TextFolding.fold(b, options).utf8 : b.utf8)
        }
        return Value.compare(l, r) == .orderedSame
    }

    /// The order of two non-nil values, nil when either is nil or they do not compare.
    private func order(_ l: Value, _ r: Value, _ options: StringOptions, _ foldRight: Bool) -> ComparisonResult? {
        if l.isNull || r.isNull { return nil }
        if !options.isEmpty, let a = Self.text(l), let b = Self.text(r) {
            return Value.compare(.string(TextFolding.fold(a, options)), .string(foldRight ? TextFolding.fold(b, options) : b))
        }
        return Value.compare(l, r)
    }

    static func text(_ value: Value) -> String? {
        switch value {
        case .string(let s), .uri(let s): s
        default: nil
        }
    }
}
