// The predicate language's `@count`, `@sum`, `@avg`, `@min`, `@max` over a to-many's values are
// computed by a grouped fetch's accumulator: min and max by the sort order (NaN first), so the
// answer does not depend on the order the members come in; `@count` counts nulls too.

import Foundation
import Testing

@testable import KeelModel

@Suite("Collection aggregates")
struct CollectionAggregateTests {
    /// Every order of `values`.
    static func permutations(_ values: [Value]) -> [[Value]] {
        guard let first = values.first else { return [[]] }
        return permutations(Array(values.dropFirst())).flatMap { rest in
            (0...rest.count).map { i in
                var p = rest
                p.insert(first, at: i)
                return p
            }
        }
    }

    @Test("min and max do not depend on the members' order, NaN and null included; they agree with a grouped fetch's")
    func orderIndependent() {
        let values: [Value] = [.double(3), .double(.nan), .null, .double(-1), .double(2)]
        for function in [AggregateFunction.min, .max, .sum, .avg] {
            var answers: [String] = []
            for order in Self.permutations(values) {
                answers.append("\(AggregateAccumulator.collection(function, order))")
            }
            #expect(Set(answers).count == 1, "\(function.rawValue) gave \(Set(answers))")
        }
        #expect(AggregateAccumulator.collection(.max, values) == .double(3))
        #expect("\(AggregateAccumulator.collection(.min, values))" == "\(Value.double(.nan))")
        var grouped = AggregateAccumulator(.max)
        for v in values.reversed() { grouped.add(v) }
        #expect(grouped.value == AggregateAccumulator.collection(.max, values))
    }

    @Test("@count counts every member's value, nulls included; sum and avg skip nulls; nothing gives nil")
    func countsAndEmpties() {
        #expect(AggregateAccumulator.collection(.count, [.int(1), .null, .int(2)]) == .int(3))
        #expect(AggregateAccumulator.collection(.sum, [.int(1), .null, .int(2)]) == .int(3))
        #expect(AggregateAccumulator.collection(.avg, [.int(1), .null, .int(2)]) == .double(1.5))
        #expect(AggregateAccumulator.collection(.count, []) == .int(0))
        #expect(AggregateAccumulator.collection(.max, []) == .null && AggregateAccumulator.collection(.avg, []) == .null)
        #expect(AggregateAccumulator.collection(.min, [.string("b"), .string("a")]) == .string("a"))
    }

    @Test("a grouped fetch's function names: the wire's, without the @; average is avg")
    func wireNames() {
        #expect(AggregateFunction.allCases.map(\.wireName) == ["count", "sum", "avg", "min", "max"])
        #expect(AggregateFunction.allCases.allSatisfy { AggregateFunction(wire: $0.wireName) == $0 })
        #expect(AggregateFunction(wire: "average") == .avg && AggregateFunction(wire: "@sum") == nil && AggregateFunction(wire: "") == nil)
    }
}
