// Byte ranges over index and unique trees, built from typed values with the order-preserving
// value encoding (KeyEncoding; Docs/FileFormat.md, "Value keys"). A range is half-open,
// [lower, upper): because no value encoding is a prefix of another, "every key that starts with
// the encoding of v" is [enc(v), successor(enc(v))), and that holds for an index key (values ·
// object key) as for a unique key (values only).
//
// Families: values of one attribute type share a tag, so "every number" is [0x11, 0x16) — from
// −∞ to +∞, leaving out null (0x05) and NaN (0x10), which no ordering comparison matches — and
// "every string" is [0x20, 0x21). An open-ended comparison (`salary > 1000`) is bounded by its
// family, so it never reaches null, NaN or another type.

import KeelStorage

/// A half-open range of keys: `lower` ≤ key < `upper` (nil: no upper bound).
public struct KeyRange: Sendable, Hashable {
    public var lower: [UInt8]
    public var upper: [UInt8]?

    public init(lower: [UInt8], upper: [UInt8]?) {
        self.lower = lower
        self.upper = upper
    }

    /// Every key that starts with `prefix`.
    public static func prefix(_ prefix: [UInt8]) -> KeyRange {
        KeyRange(lower: prefix, upper: successor(of: prefix))
    }

    public var isEmpty: Bool {
        guard let upper else { return false }
        return !lower.lexicographicallyPrecedes(upper)
    }

    public func contains(_ key: UnsafeRawBufferPointer) -> Bool {
        if key.lexicographicallyPrecedes(lower) { return false }
        if let upper, !key.lexicographicallyPrecedes(upper) { return false }
        return true
    }

    /// Whether `key` lies below the upper bound (always without one): all a forward read that
    /// started at or after `lower` has to check. In the engine's key order (`KeyOrder`).
    @inline(__always)
    func isBelowUpper(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let upper else { return true }
        return upper.withUnsafeBytes { KeyOrder.compare(key, $0) < 0 }
    }

    /// The smallest byte string greater than every string starting with `prefix` (nil: none,
    /// when the prefix is all 0xFF).
    public static func successor(of prefix: [UInt8]) -> [UInt8]? {
        var out = prefix
        while let last = out.last {
            if last < 0xFF {
                out[out.count - 1] = last + 1
                return out
            }
            out.removeLast()
        }
        return nil
    }

    /// Both ranges' common part.
    public func intersection(_ other: KeyRange) -> KeyRange {
        let low = lower.lexicographicallyPrecedes(other.lower) ? other.lower : lower
        let high: [UInt8]?
        switch (upper, other.upper) {
        case (nil, let b): high = b
        case (let a, nil): high = a
        case (let a?, let b?): high = a.lexicographicallyPrecedes(b) ? a : b
        }
        return KeyRange(lower: low, upper: high)
    }

    /// `ranges` sorted by lower bound with overlapping or touching ones merged, empty ones dropped.
    public static func normalized(_ ranges: [KeyRange]) -> [KeyRange] {
        if ranges.count == 1 { return ranges[0].isEmpty ? [] : ranges }
        let sorted = ranges.filter { !$0.isEmpty }.sorted { $0.lower.lexicographicallyPrecedes($1.lower) }
        var out: [KeyRange] = []
        for range in sorted {
            if let last = out.last {
                guard let lastUpper = last.upper else { continue }
                if !lastUpper.lexicographicallyPrecedes(range.lower) {
                    let upper: [UInt8]? = range.upper.map { lastUpper.lexicographicallyPrecedes($0) ? $0 : lastUpper }
                    out[out.count - 1].upper = upper
                    continue
                }
            }
            out.append(range)
        }
        return out
    }
}

/// The key families of attribute types: the tag range every non-null value of the type encodes in.
enum KeyFamily {
    /// [first tag, tag after the last) of the values an ordering comparison can match, nil when
    /// values of the type are not ordered in keys (JSON).
    static func tags(of type: AttributeType) -> (UInt8, UInt8)? {
        switch type {
        case .int16, .int32, .int64, .double, .float, .decimal: (0x11, 0x16)
        case .string: (0x20, 0x21)
        case .date: (0x30, 0x31)
        case .bool: (0x40, 0x41)
        case .uuid: (0x50, 0x51)
        case .binary: (0x60, 0x61)
        case .uri: (0x70, 0x71)
        case .json: nil
        }
    }

    /// Whether `value` is a constant whose key order agrees with how predicates compare it with
    /// values of `type` (so an index range finds exactly the matches): numbers of the families
    /// the binder gives an attribute, strings for strings, and so on; never NaN.
    static func fits(_ value: Value, _ type: AttributeType) -> Bool {
        switch (type, value) {
        case (.int16, .int), (.int32, .int), (.int64, .int), (.double, .int), (.float, .int): true
        case (.int16, .double(let d)), (.int32, .double(let d)), (.int64, .double(let d)), (.double, .double(let d)),
            (.float, .double(let d)):
            !d.isNaN
        case (.decimal, .decimal(let d)): !d.isNaN
        case (.decimal, .int): true
        case (.string, .string), (.date, .date), (.bool, .bool), (.uuid, .uuid), (.binary, .binary), (.uri, .uri): true
        default: false
        }
    }
}
