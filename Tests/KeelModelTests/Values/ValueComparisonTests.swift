import Foundation
import KeelStorage
import Testing

@testable import KeelModel

@Suite("Value comparison")
struct ValueComparisonTests {
    private static func dec(_ s: String) -> Value {
        guard case .success(let d) = WireText.decimal(s) else { return .null }
        return .decimal(d)
    }

    @Test(
        "numbers compare by value across int, double and decimal",
        arguments: [
            (Value.int(1), Value.double(1.5), ComparisonResult.orderedAscending), (.double(2), .int(2), .orderedSame),
            (.int(.max), .double(9.223372036854775807e18), .orderedAscending), (.int(.max - 1), .int(.max), .orderedAscending),
            (.int(9_007_199_254_740_993), .double(9_007_199_254_740_992), .orderedDescending),
            (.int(-3), .double(-2.5), .orderedAscending), (.double(-.infinity), .int(.min), .orderedAscending),
            (dec("1234.50"), .int(1234), .orderedDescending), (dec("0.1"), .double(0.1), .orderedSame), (dec("0.30000000000000001"), .double(0.1 + 0.2), .orderedAscending),
            (dec("10"), .int(10), .orderedSame), (.double(1e200), dec("99999999999999999999999999999999999999"), .orderedDescending),
            (dec("-5"), dec("-4.99"), .orderedAscending),
        ])
    func numbers(_ a: Value, _ b: Value, _ expected: ComparisonResult) {
        #expect(Value.compare(a, b) == expected)
        let reversed: ComparisonResult = expected == .orderedAscending ? .orderedDescending : expected == .orderedDescending ? .orderedAscending : .orderedSame
        #expect(Value.compare(b, a) == reversed)
    }

    @Test("dates by instant, strings by bytes, nil first, unrelated kinds and NaN do not compare")
    func others() {
        #expect(Value.compare(.date(-1), .date(0)) == .orderedAscending)
        #expect(Value.compare(.string("Z"), .string("a")) == .orderedAscending)
        #expect(Value.compare(.string("é"), .string("e\u{301}")) == .orderedDescending)  // bytes, not canonical equivalence
        #expect(Value.compare(.string("ab"), .string("abc")) == .orderedAscending)
        #expect(Value.compare(.null, .int(.min)) == .orderedAscending)
        #expect(Value.compare(.string("x"), .null) == .orderedDescending)
        #expect(Value.compare(.null, .null) == .orderedSame)
        #expect(Value.compare(.bool(false), .bool(true)) == .orderedAscending)
        #expect(Value.compare(.string("1"), .int(1)) == nil)
        #expect(Value.compare(.double(.nan), .int(1)) == nil)
        #expect(Value.compare(.double(.nan), .double(.nan)) == nil)
        #expect(Value.compare(.binary([1, 2]), .binary([1, 3])) == .orderedAscending)
    }

    @Test("sortCompare is a total order: kinds first, NaN before other numbers")
    func total() {
        let values: [Value] = [.string("a"), .double(.nan), .int(3), .null, .bool(true), .date(5), .double(-1), .json([1])]
        let sorted = values.sorted { Value.sortCompare($0, $1) == .orderedAscending }
        #expect(sorted.map { "\($0)" } == [Value.null, .bool(true), .double(.nan), .double(-1), .int(3), .date(5), .string("a"), .json([1])].map { "\($0)" })
    }

    @Test("decimals in order from their fields agree with Foundation's order: signs, zeros, exponents far apart, mantissas up to 64 bits and past (KEEL_SEED replays)")
    func decimalsByFields() {
        let seed = SeededRandom.seedFromEnvironment()
        var r = SeededRandom(seed: seed)
        func random() -> Decimal {
            let mantissa: UInt64 = switch r.next() % 5 {
            case 0: 0
            case 1: r.next() % 1000
            case 2: r.next()  // up to 64 bits
            default: r.next() % 10_000_000
            }
            let exponent = Int(r.next() % 9) - 4 + (r.next() % 10 == 0 ? Int(r.next() % 200) - 100 : 0)
            var d = Decimal(sign: r.next() % 3 == 0 ? .minus : .plus, exponent: exponent, significand: Decimal(mantissa))
            if r.next() % 20 == 0 { d *= Decimal(UInt64.max) }  // a mantissa past 64 bits: Foundation's path
            return d
        }
        func foundation(_ x: Decimal, _ y: Decimal) -> ComparisonResult { x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending }
        for _ in 0..<20_000 {
            let x = random()
            // Near pairs too: the same value at another exponent, one unit apart.
            let y: Decimal = switch r.next() % 4 {
            case 0: x
            case 1: x * 10 / 10
            case 2: x + Decimal(sign: .plus, exponent: Int(r.next() % 6) - 3, significand: 1)
            default: random()
            }
            let order = Value.order(x, y)
            #expect(order == foundation(x, y), "seed \(seed): \(x) vs \(y)")
            if order != foundation(x, y) { return }
            #expect(Value.compare(.decimal(x), .int(7)) == foundation(x, 7))
        }
        #expect(Value.order(Decimal(string: "1234.50")!, Decimal(1234.5)) == .orderedSame)
        #expect(Value.order(Decimal(string: "-0.001")!, 0) == .orderedAscending && Value.order(0, Decimal(string: "-0")!) == .orderedSame)
        #expect(Value.order(Decimal(string: "18446744073709551615e-3")!, Decimal(string: "18446744073709551.616")!) == .orderedAscending)
    }
}
