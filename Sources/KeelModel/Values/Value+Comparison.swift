// Comparing values by meaning, for validation bounds (minValue/maxValue) now and predicates and
// sorts later:
// - numbers compare by value across `.int`, `.double` and `.decimal` (an Int64 against a Double
//   exactly, without rounding the integer to a Double; a Decimal against a Double by the Double's
//   shortest decimal digits, so "0.1" == 0.1); NaN is unordered (`compare` gives nil);
// - dates by instant; strings and URIs by their UTF-8 bytes (the same as Unicode scalar order,
//   and what index keys store — not Swift's canonical-equivalence order); binary, UUIDs by bytes;
//   booleans false < true; object IDs by (entity, number);
// - `null` is ordered before every other value (0004: "nil first");
// - values of unrelated kinds (a string and a number) and JSON values do not compare (nil).
// `sortCompare` extends this to a total order for sorting mixed or NaN values.

public import Foundation

extension Value {
    /// The order of two values by meaning, or nil when they do not compare.
    public static func compare(_ a: Value, _ b: Value) -> ComparisonResult? {
        switch (a, b) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case (.int(let x), .int(let y)): return order(x, y)
        case (.double(let x), .double(let y)):
            if x.isNaN || y.isNaN { return nil }
            return order(x, y)
        case (.int(let x), .double(let y)): return compare(x, y)
        case (.double(let x), .int(let y)): return compare(y, x).map(reversed)
        case (.decimal(let x), .decimal(let y)): return order(x, y)
        case (.decimal(let x), .int(let y)): return order(x, Decimal(y))
        case (.int(let x), .decimal(let y)): return order(Decimal(x), y)
        case (.decimal(let x), .double(let y)): return compare(x, y)
        case (.double(let x), .decimal(let y)): return compare(y, x).map(reversed)
        case (.date(let x), .date(let y)): return order(x, y)
        case (.bool(let x), .bool(let y)): return order(x ? 1 : 0, y ? 1 : 0)
        case (.string(let x), .string(let y)), (.uri(let x), .uri(let y)): return bytes(x.utf8, y.utf8)
        case (.binary(let x), .binary(let y)): return bytes(x, y)
        case (.uuid(let x), .uuid(let y)): return bytes(uuidBytes(x), uuidBytes(y))
        case (.object(let x), .object(let y)): return order(x, y)
        case (.json(let x), .json(let y)): return x == y ? .orderedSame : nil
        default: return nil
        }
    }

    /// A total order for sorting: `compare` where it answers; otherwise by kind (null, bool,
    /// numbers with NaN first, date, string, uri, uuid, binary, json, object, objects), JSON by
    /// its text, to-many lists element by element.
    public static func sortCompare(_ a: Value, _ b: Value) -> ComparisonResult {
        if let result = compare(a, b) { return result }
        let ra = a.kindRank, rb = b.kindRank
        if ra != rb { return ra < rb ? .orderedAscending : .orderedDescending }
        switch (a, b) {
        case (.json(let x), .json(let y)): return bytes(x.serialized().utf8, y.serialized().utf8)
        case (.objects(let x), .objects(let y)):
            for (p, q) in zip(x, y) where p != q { return p < q ? .orderedAscending : .orderedDescending }
            return order(x.count, y.count)
        default:
            // Numbers with a NaN: NaN first, two NaNs the same.
            let an = a.isNaN, bn = b.isNaN
            if an && bn { return .orderedSame }
            return an ? .orderedAscending : .orderedDescending
        }
    }

    private var isNaN: Bool {
        if case .double(let d) = self { return d.isNaN }
        return false
    }

    private var kindRank: Int {
        switch self {
        case .null: 0
        case .bool: 1
        case .int, .double, .decimal: 2
        case .date: 3
        case .string: 4
        case .uri: 5
        case .uuid: 6
        case .binary: 7
        case .json: 8
        case .object: 9
        case .objects: 10
        }
    }

    private static func order<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
        x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending
    }

    /// Two decimals in order: from their fields when both mantissas fit 64 bits (`decimalFields`),
    /// else by Foundation, whose comparison brings both to one exponent through allocated
    /// buffers — a cost per row for a scan comparing a decimal attribute with a constant.
    static func order(_ x: Decimal, _ y: Decimal) -> ComparisonResult {
        guard let a = decimalFields(x), let b = decimalFields(y) else { return x < y ? .orderedAscending : x == y ? .orderedSame : .orderedDescending }
        if a.sign != b.sign { return a.sign < b.sign ? .orderedAscending : .orderedDescending }
        if a.sign == 0 { return .orderedSame }
        // One sign: the magnitudes, the one of the larger exponent brought down to the other's.
        let magnitude: ComparisonResult
        if a.exponent == b.exponent {
            magnitude = order(a.mantissa, b.mantissa)
        } else if a.exponent > b.exponent {
            // Past 64 bits it is larger than the other's, which fits.
            magnitude = a.mantissa.timesPowerOfTen(a.exponent - b.exponent).map { order($0, b.mantissa) } ?? .orderedDescending
        } else {
            magnitude = b.mantissa.timesPowerOfTen(b.exponent - a.exponent).map { order(a.mantissa, $0) } ?? .orderedAscending
        }
        return a.sign > 0 ? magnitude : reversed(magnitude)
    }

    /// A decimal's sign (-1, 0, 1), mantissa and exponent, read from its layout (DecimalLayout);
    /// nil for NaN, a mantissa past 64 bits, or a layout not verified on this platform.
    private static func decimalFields(_ d: Decimal) -> (sign: Int, mantissa: UInt64, exponent: Int)? {
        guard DecimalLayout.verified, !d.isNaN else { return nil }
        let f = DecimalLayout.fields(of: d)
        guard f.high == 0 else { return nil }
        if f.low == 0 { return (0, 0, 0) }
        return (f.flags & 1 != 0 ? -1 : 1, f.low, Int(f.exponent))
    }

    private static func reversed(_ r: ComparisonResult) -> ComparisonResult {
        switch r {
        case .orderedAscending: .orderedDescending
        case .orderedDescending: .orderedAscending
        case .orderedSame: .orderedSame
        }
    }

    /// An Int64 against a Double, exactly.
    private static func compare(_ x: Int64, _ y: Double) -> ComparisonResult? {
        if y.isNaN { return nil }
        if y >= 9.223_372_036_854_775_808e18 { return .orderedAscending }
        if y < -9.223_372_036_854_775_808e18 { return .orderedDescending }
        let whole = y.rounded(.towardZero)
        let w = Int64(whole)
        if x != w { return order(x, w) }
        let fraction = y - whole
        return fraction > 0 ? .orderedAscending : fraction < 0 ? .orderedDescending : .orderedSame
    }

    /// A Decimal against a Double: the Double is read as its shortest round-tripping decimal
    /// digits (Foundation's `Decimal(Double)`), so `"0.1"` equals `0.1` as a user expects;
    /// Doubles beyond Decimal's range compare by sign.
    private static func compare(_ x: Decimal, _ y: Double) -> ComparisonResult? {
        if y.isNaN { return nil }
        if y.isInfinite || abs(y) > 1e120 { return y > 0 ? .orderedAscending : .orderedDescending }
        return order(x, Decimal(y))
    }

    private static func bytes(_ x: some Sequence<UInt8>, _ y: some Sequence<UInt8>) -> ComparisonResult {
        var i = x.makeIterator(), j = y.makeIterator()
        while true {
            switch (i.next(), j.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let p?, let q?) where p != q: return p < q ? .orderedAscending : .orderedDescending
            default: continue
            }
        }
    }

    private static func uuidBytes(_ u: UUID) -> [UInt8] {
        withUnsafeBytes(of: u.uuid) { Array($0) }
    }
}
