// Key paths at evaluation time: hops through to-one relationships (a target that does not exist
// in the reader — deleted, or never there — reads as nil), to-many members (a collection),
// SUBQUERY filtering, and the aggregates:
//
// | aggregate | over | empty collection |
// | --- | --- | --- |
// | `@count` | the elements (nil values too) | 0 |
// | `@sum` | the non-nil numbers; int until it would overflow, then decimal; decimal if any is; double if any is | 0 |
// | `@avg` | the non-nil numbers; decimal if any is, else double | nil |
// | `@min`, `@max` | the non-nil values, by `Value.compare` | nil |
//
// A to-many's members are counted without loading them (`employees.@count` is one
// `members(of:field:)`); objects are loaded only to read through them.

import Foundation

/// Where a key path stands while it is walked: one object (nil when missing) or several.
enum Focus {
    case one(StoredObject?)
    case many([StoredObject])
}

extension PredicateEvaluator {
    mutating func path(_ p: BoundKeyPath, _ object: StoredObject) throws(KeelError) -> Operand {
        let start = try base(p.base, object)
        guard let aggregate = p.aggregate else { return try walk(p.steps[...], from: start) }
        if aggregate.tail.isEmpty {
            return .one(AggregateAccumulator.collection(aggregate.function, try walk(p.steps[...], from: start).elements))
        }
        var values: [Value] = []
        for element in try load(p.steps[...], from: start) {
            if case .one(let v) = try walk(aggregate.tail[...], from: .one(element)) { values.append(v) }
        }
        return .one(AggregateAccumulator.collection(aggregate.function, values))
    }

    private mutating func base(_ base: BoundKeyPath.Base, _ object: StoredObject) throws(KeelError) -> Focus {
        switch base {
        case .object: return .one(object)
        case .variable(let slot): return .one(slots[slot])
        case .subquery(let subquery):
            let elements = try load(subquery.collection.steps[...], from: try self.base(subquery.collection.base, object))
            let saved = slots[subquery.slot]
            defer { slots[subquery.slot] = saved }
            var kept: [StoredObject] = []
            for element in elements {
                slots[subquery.slot] = element
                if try node(subquery.predicate, element) { kept.append(element) }
            }
            return .many(kept)
        }
    }

    /// Walks `steps`; the last one gives values (an attribute) or IDs (a relationship).
    private func walk(_ steps: ArraySlice<BoundKeyPath.Step>, from start: Focus) throws(KeelError) -> Operand {
        var focus = start
        for (i, step) in zip(steps.indices, steps) {
            let last = i == steps.index(before: steps.endIndex)
            switch (step, focus) {
            case (.attribute(let f), .one(let o)):
                return .one(o.map { Self.value($0, f) } ?? .null)
            case (.attribute(let f), .many(let os)):
                return .many(os.map { Self.value($0, f) })
            case (.toOne(let f), .one(let o)):
                let target = try o.flatMap { o throws(KeelError) in try follow(o, f) }
                if last { return .one(target.map { .object($0.id) } ?? .null) }
                focus = .one(target)
            case (.toOne(let f), .many(let os)):
                var targets: [StoredObject?] = []
                for o in os { targets.append(try follow(o, f)) }
                if last { return .many(targets.map { $0.map { .object($0.id) } ?? .null }) }
                focus = .many(targets.compactMap { $0 })
            case (.toMany(let f), _):
                let ids = try members(focus, f)
                if last { return .many(ids.map { .object($0) }) }
                var objects: [StoredObject] = []
                for id in ids {
                    if let o = try graph.object(id) { objects.append(o) }
                }
                focus = .many(objects)
            }
        }
        switch focus {
        case .one(let o): return .one(o.map { .object($0.id) } ?? .null)
        case .many(let os): return .many(os.map { .object($0.id) })
        }
    }

    /// Walks relationship `steps` and loads the objects they reach.
    private func load(_ steps: ArraySlice<BoundKeyPath.Step>, from start: Focus) throws(KeelError) -> [StoredObject] {
        var focus = start
        for step in steps {
            switch (step, focus) {
            case (.attribute, _): return []
            case (.toOne(let f), .one(let o)): focus = .one(try o.flatMap { o throws(KeelError) in try follow(o, f) })
            case (.toOne(let f), .many(let os)):
                var targets: [StoredObject] = []
                for o in os {
                    if let t = try follow(o, f) { targets.append(t) }
                }
                focus = .many(targets)
            case (.toMany(let f), _):
                var objects: [StoredObject] = []
                for id in try members(focus, f) {
                    if let o = try graph.object(id) { objects.append(o) }
                }
                focus = .many(objects)
            }
        }
        switch focus {
        case .one(let o): return o.map { [$0] } ?? []
        case .many(let os): return os
        }
    }

    private func follow(_ object: StoredObject, _ field: Int) throws(KeelError) -> StoredObject? {
        guard case .object(let target) = Self.value(object, field) else { return nil }
        return try graph.object(target)
    }

    private func members(_ focus: Focus, _ field: Int) throws(KeelError) -> [ObjectID] {
        switch focus {
        case .one(let o): return try o.map { o throws(KeelError) in try graph.members(of: o.id, field: field) } ?? []
        case .many(let os):
            var ids: [ObjectID] = []
            for o in os { ids.append(contentsOf: try graph.members(of: o.id, field: field)) }
            return ids
        }
    }

    static func value(_ object: StoredObject, _ field: Int) -> Value {
        field < object.values.count ? object.values[field] : .null
    }

}

/// A running sum of numbers of mixed kinds (nil and non-numbers skipped).
struct NumberSum {
    private var integer: Int64 = 0
    private var decimal = Decimal(0)
    /// Decimals given as whole numbers and a power of ten (`addDecimal(_:scale:)`), summed as
    /// `scaled` × 10^`scale` while that fits: Foundation's Decimal addition costs far more.
    private var scaled: Int64 = 0
    private var scale = 0
    private var double = 0.0
    private var hasDecimal = false
    private var hasDouble = false
    private(set) var count = 0

    mutating func add(_ value: Value) {
        switch value {
        case .int(let i):
            let (sum, overflow) = integer.addingReportingOverflow(i)
            if overflow {
                decimal += Decimal(i)
                hasDecimal = true
            } else {
                integer = sum
            }
        case .double(let d):
            double += d
            hasDouble = true
        case .decimal(let d):
            hasDecimal = true
            // A mantissa that fits is summed as a whole number (addScaled), not by Foundation.
            if DecimalLayout.verified, !d.isNaN {
                let f = DecimalLayout.fields(of: d)
                if f.high == 0, f.low <= UInt64(Int64.max), addScaled(f.flags & 1 != 0 ? -Int64(f.low) : Int64(f.low), Int(f.exponent)) { break }
            }
            decimal += d
        default: return
        }
        count += 1
    }

    /// Adds the decimal `value` × 10^`scale` (a number key's parts: IndexAggregation).
    mutating func addDecimal(_ value: Int64, scale: Int) {
        count += 1
        hasDecimal = true
        if addScaled(value, scale) { return }
        decimal += Decimal(sign: value < 0 ? .minus : .plus, exponent: scale, significand: Decimal(value.magnitude))
    }

    /// `scaled` += value × 10^scale when it fits in an Int64 at the smaller of the two scales.
    private mutating func addScaled(_ value: Int64, _ scale: Int) -> Bool {
        if scaled == 0 { self.scale = scale }
        var value = value
        if scale > self.scale {
            guard let v = value.timesPowerOfTen(scale - self.scale) else { return false }
            value = v
        } else if scale < self.scale {
            guard let s = scaled.timesPowerOfTen(self.scale - scale) else { return false }
            scaled = s
            self.scale = scale
        }
        let (sum, overflow) = scaled.addingReportingOverflow(value)
        guard !overflow else { return false }
        scaled = sum
        return true
    }

    /// The decimals summed, the scaled part included.
    private var decimals: Decimal {
        scaled == 0 ? decimal : decimal + Decimal(sign: scaled < 0 ? .minus : .plus, exponent: scale, significand: Decimal(scaled.magnitude))
    }

    /// Adds another running sum's numbers.
    mutating func merge(_ other: NumberSum) {
        add(.int(other.integer))
        count -= 1  // the int part above is not a number of its own
        if other.scaled != 0, !addScaled(other.scaled, other.scale) {
            decimal += Decimal(sign: other.scaled < 0 ? .minus : .plus, exponent: other.scale, significand: Decimal(other.scaled.magnitude))
        }
        decimal += other.decimal
        double += other.double
        hasDecimal = hasDecimal || other.hasDecimal
        hasDouble = hasDouble || other.hasDouble
        count += other.count
    }

    var total: Value {
        if hasDouble { return .double(double + Double(integer) + NSDecimalNumber(decimal: decimals).doubleValue) }
        if hasDecimal { return .decimal(decimals + Decimal(integer)) }
        return .int(integer)
    }

    var average: Value {
        guard count > 0 else { return .null }
        switch total {
        case .decimal(let d): return .decimal(d / Decimal(count))
        case .int(let i): return .double(Double(i) / Double(count))
        case .double(let d): return .double(d / Double(count))
        default: return .null
        }
    }
}
