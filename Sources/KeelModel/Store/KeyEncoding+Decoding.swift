// Reading value keys back (the layout is KeyEncoding.swift's): where one value's encoding ends,
// and the value it stands for, given the attribute type it was written for — numbers share one
// encoding (int 2 = 2.0 = 2 dec), so the type says which kind to rebuild. A grouped fetch reads an
// index's keys this way instead of the objects' rows (IndexAggregation.swift).

import Foundation

extension KeyEncoding {
    /// The offset just past the value key that starts at `offset`; nil when the bytes there are
    /// not one (damaged, or cut short).
    static func valueEnd(_ b: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        guard offset < b.count else { return nil }
        var i = offset + 1
        switch b[offset] {
        case Tag.null, Tag.nan, Tag.negativeInfinity, Tag.zero, Tag.positiveInfinity:
            return i
        case Tag.positive, Tag.negative:
            // The exponent, then digit bytes up to the last: even for a positive number (2·Xn),
            // odd for a negative one (complemented).
            let lastParity: UInt8 = b[offset] == Tag.positive ? 0 : 1
            i += 2
            while i < b.count {
                defer { i += 1 }
                if b[i] & 1 == lastParity { return i + 1 }
            }
            return nil
        case Tag.string, Tag.binary, Tag.uri, Tag.json:
            while i + 1 < b.count {
                if b[i] == 0 {
                    if b[i + 1] == 0 { return i + 2 }
                    i += 2  // an escaped 0x00 (00 FF)
                    continue
                }
                i += 1
            }
            return nil
        case Tag.date: i += 8
        case Tag.bool: i += 1
        case Tag.uuid: i += 16
        case Tag.object: i += objectKeySize
        default: return nil
        }
        return i <= b.count ? i : nil
    }

    /// The value of the key `b[offset..<end]` (`end` from `valueEnd`) for a property of `type`
    /// (nil: a to-one relationship). Nil when the bytes are not a value of that type.
    static func decodeValue(_ b: UnsafeRawBufferPointer, _ offset: Int, _ end: Int, as type: AttributeType?) -> Value? {
        let tag = b[offset]
        if tag == Tag.null { return .null }
        guard let type else {
            guard tag == Tag.object, end - offset == 1 + objectKeySize else { return nil }
            return objectID(b, at: offset + 1).map { .object($0) }
        }
        switch type {
        case .int16, .int32, .int64, .double, .float, .decimal:
            return number(b, offset, end, as: type)
        case .string, .uri, .json:
            guard tag == (type == .string ? Tag.string : type == .uri ? Tag.uri : Tag.json) else { return nil }
            let text = String(decoding: unescaped(b, offset + 1, end), as: UTF8.self)
            switch type {
            case .string: return .string(text)
            case .uri: return .uri(text)
            default: return (try? JSON.parse(Array(text.utf8))).map { .json($0) }
            }
        case .binary:
            guard tag == Tag.binary else { return nil }
            return .binary(unescaped(b, offset + 1, end))
        case .date:
            guard tag == Tag.date, end - offset == 9 else { return nil }
            return .date(Int64(bitPattern: readU64(b, at: offset + 1) ^ (1 << 63)))
        case .bool:
            guard tag == Tag.bool, end - offset == 2 else { return nil }
            return .bool(b[offset + 1] != 0)
        case .uuid:
            guard tag == Tag.uuid, end - offset == 17 else { return nil }
            var u = UUID().uuid
            withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: b[(offset + 1)..<end])) }
            return .uuid(UUID(uuid: u))
        }
    }

    /// A number key as a whole number and a power of ten (value = `value` × 10^`scale`), read
    /// without building anything; nil when it is not a finite number or its digits do not fit an
    /// Int64 (read it with `decodeValue`).
    static func numberParts(_ b: UnsafeRawBufferPointer, _ offset: Int, _ end: Int) -> (value: Int64, scale: Int)? {
        let tag = b[offset]
        if tag == Tag.zero { return (0, 0) }
        guard tag == Tag.positive || tag == Tag.negative, end - offset >= 4, end - offset - 3 <= 9 else { return nil }
        let flip: UInt8 = tag == Tag.negative ? 0xFF : 0
        let exponent = Int(UInt16(b[offset + 1] ^ flip) << 8 | UInt16(b[offset + 2] ^ flip)) - 0x8000
        let count = end - offset - 3
        var m: Int64 = 0  // at most 9 base-100 digits: below 10^18
        for i in 0..<count {
            let byte = b[offset + 3 + i] ^ flip
            let x = i == count - 1 ? byte / 2 : (byte - 1) / 2
            guard x < 100 else { return nil }
            m = m * 100 + Int64(x)
        }
        return (flip == 0 ? m : -m, 2 * (exponent - count))
    }

    /// The bytes of an escaped string or binary payload, `from` up to its `00 00` end.
    private static func unescaped(_ b: UnsafeRawBufferPointer, _ from: Int, _ end: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(end - from - 2)
        var i = from
        while i < end - 2 {
            out.append(b[i])
            i += b[i] == 0 ? 2 : 1
        }
        return out
    }

    /// A number key as a value of a number attribute type.
    private static func number(_ b: UnsafeRawBufferPointer, _ offset: Int, _ end: Int, as type: AttributeType) -> Value? {
        let double = type == .double || type == .float
        switch b[offset] {
        case Tag.zero: return type == .decimal ? .decimal(0) : double ? .double(0) : .int(0)
        case Tag.nan: return double ? .double(.nan) : type == .decimal ? .decimal(.nan) : nil
        case Tag.negativeInfinity: return double ? .double(-.infinity) : nil
        case Tag.positiveInfinity: return double ? .double(.infinity) : nil
        case Tag.positive, Tag.negative: break
        default: return nil
        }
        let negative = b[offset] == Tag.negative
        // Most numbers have at most 18 digits: read as a whole number and a power of ten.
        if let (value, scale) = numberParts(b, offset, end) {
            switch type {
            case .int16, .int32, .int64:
                guard scale >= 0, let whole = value.timesPowerOfTen(scale) else { return nil }
                return .int(whole)
            case .decimal:
                return .decimal(Decimal(sign: value < 0 ? .minus : .plus, exponent: scale, significand: Decimal(value.magnitude)))
            default:
                if scale >= 0, let whole = value.timesPowerOfTen(scale), whole.magnitude <= 1 << 53 { return .double(Double(whole)) }
            }
        }
        let flip: UInt8 = negative ? 0xFF : 0
        guard end - offset >= 4 else { return nil }
        let exponent = Int(UInt16(b[offset + 1] ^ flip) << 8 | UInt16(b[offset + 2] ^ flip)) - 0x8000
        // The base-100 digits X1…Xn: value = X1X2…Xn × 100^(exponent − n).
        let count = end - offset - 3
        var digits: [UInt8] = []
        digits.reserveCapacity(2 * count)
        for i in 0..<count {
            let byte = b[offset + 3 + i] ^ flip
            let x = i == count - 1 ? byte / 2 : (byte - 1) / 2
            guard x < 100 else { return nil }
            digits.append(x / 10)
            digits.append(x % 10)
        }
        let scale = 2 * (exponent - count)  // value = digits (as an integer) × 10^scale
        // A whole number of base-100 digits may start with a padding 0.
        if digits.first == 0 { digits.removeFirst() }
        switch type {
        case .int16, .int32, .int64:
            guard scale >= 0, digits.count + scale <= 19 else { return nil }
            var m: UInt64 = 0  // the magnitude: Int64.min's is past Int64.max
            for d in digits {
                let (times, o1) = m.multipliedReportingOverflow(by: 10)
                let (plus, o2) = times.addingReportingOverflow(UInt64(d))
                guard !o1, !o2 else { return nil }
                m = plus
            }
            for _ in 0..<scale {
                let (times, overflow) = m.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                m = times
            }
            if negative { return m <= 1 << 63 ? .int(Int64(bitPattern: 0 &- m)) : nil }
            return Int64(exactly: m).map { .int($0) }
        case .decimal:
            guard digits.count <= 38 else { return nil }
            var significand = Decimal(0)
            if digits.count <= 19 {
                var m: UInt64 = 0
                for d in digits { m = m * 10 + UInt64(d) }
                significand = Decimal(m)
            } else {
                for d in digits { significand = significand * 10 + Decimal(Int(d)) }
            }
            return .decimal(Decimal(sign: negative ? .minus : .plus, exponent: scale, significand: significand))
        default:
            // The exact digits, read back with the standard library's correctly rounded parse.
            var text = negative ? "-" : ""
            text.reserveCapacity(digits.count + 8)
            for d in digits { text.unicodeScalars.append(UnicodeScalar(48 + d)) }
            text += "e\(scale)"
            return Double(text).map { .double($0) }
        }
    }
}

extension FixedWidthInteger {
    /// self × 10^`n` (n ≥ 0), nil when it overflows.
    func timesPowerOfTen(_ n: Int) -> Self? {
        if self == 0 { return 0 }
        guard n <= 20 else { return nil }
        var v = self
        for _ in 0..<n {
            let (p, overflow) = v.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            v = p
        }
        return v
    }
}
