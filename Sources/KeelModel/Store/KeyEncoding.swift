// Keys of the object layer: object keys, and the order-preserving encoding of values that index
// and unique trees are keyed by (Decision 0004; Docs/FileFormat.md, "Object layer").
//
// OBJECT KEY (10 bytes)
// | offset | size | field                                                  |
// | 0      | 2    | concrete entity id, u16 big-endian (Model.entities index) |
// | 2      | 8    | object number, u64 big-endian (≥ 1)                     |
// Big-endian so that byte order is (entity, number) order: one entity's objects are one range.
//
// VALUE KEY: one tag byte, then a payload whose bytes sort exactly as the values do. No encoding
// is a proper prefix of another, so encodings concatenate (compound keys, then the object key)
// without changing the order.
// | tag  | value                     | payload                                              |
// | 0x05 | null                      | none (sorts before everything)                       |
// | 0x10 | NaN                       | none                                                 |
// | 0x11 | −infinity                 | none                                                 |
// | 0x12 | negative finite number    | complement of the positive form below                |
// | 0x13 | zero (0, 0.0, −0.0, 0 dec)| none                                                 |
// | 0x14 | positive finite number    | u16 BE (E + 0x8000), then base-100 digit bytes        |
// | 0x15 | +infinity                 | none                                                 |
// | 0x20 | string                    | UTF-8, 0x00 escaped as 00 FF, ended by 00 00          |
// | 0x30 | date                      | i64 ms since 1970 with the sign bit flipped, BE       |
// | 0x40 | bool                      | 0x00 false, 0x01 true                                 |
// | 0x50 | uuid                      | the 16 bytes                                          |
// | 0x60 | binary                    | bytes, 0x00 escaped as 00 FF, ended by 00 00          |
// | 0x70 | uri                       | as string                                             |
// | 0x80 | json                      | its compact text, as string                           |
// | 0x90 | object (a to-one target)  | the 10-byte object key                                |
//
// NUMBERS. Ints, doubles and decimals share one order by exact value: each is written as
// 0.X1X2…Xn × 100^E with base-100 digits Xi (X1 ≠ 0, Xn ≠ 0). Digit byte i is 2·Xi+1, the last
// one 2·Xn (so a shorter mantissa sorts before a longer one that extends it, and no encoding is a
// prefix of another). Doubles are expanded exactly (0.1 is 0.1000000000000000055511…), so a double
// and a decimal compare by their true values; equal values encode equally (int 2 = 2.0 = 2 dec).
// A negative number writes the positive form's exponent and digit bytes complemented.

import Foundation

public enum KeyEncoding {
    public static let objectKeySize = 10

    // MARK: Object keys

    @inline(__always)
    public static func appendObjectKey(_ id: ObjectID, to out: inout [UInt8]) {
        let e = id.entity.rawValue
        out.append(UInt8(truncatingIfNeeded: e >> 8))
        out.append(UInt8(truncatingIfNeeded: e))
        appendU64(id.number, to: &out)
    }

    public static func objectKey(_ id: ObjectID) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(objectKeySize)
        appendObjectKey(id, to: &out)
        return out
    }

    /// The first object key of an entity's range (number 0 is never an object).
    public static func entityPrefix(_ entity: EntityID) -> [UInt8] {
        [UInt8(truncatingIfNeeded: entity.rawValue >> 8), UInt8(truncatingIfNeeded: entity.rawValue)]
    }

    /// Reads an object key at `offset`; nil when the bytes are too short or the number is 0.
    @inline(__always)
    public static func objectID(_ bytes: UnsafeRawBufferPointer, at offset: Int = 0) -> ObjectID? {
        guard offset >= 0, bytes.count - offset >= objectKeySize else { return nil }
        let e = UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
        let n = readU64(bytes, at: offset + 2)
        guard n > 0 else { return nil }
        return ObjectID(entity: EntityID(rawValue: e), number: n)
    }

    public static func objectID(_ bytes: [UInt8], at offset: Int = 0) -> ObjectID? {
        bytes.withUnsafeBytes { objectID($0, at: offset) }
    }

    /// A key as an operator reads it (verify's faults): an object key's two fields in hex,
    /// `0063:0000000000000001`; other bytes as hex pairs, at most `limit` of them, then
    /// `… (N bytes)`.
    public static func readable(_ key: [UInt8], limit: Int = 40) -> String {
        func hex(_ bytes: some Collection<UInt8>, separator: UInt8? = nil) -> String {
            let digits = Array("0123456789abcdef".utf8)
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count * 3)
            for b in bytes {
                if let separator, !out.isEmpty { out.append(separator) }
                out += [digits[Int(b >> 4)], digits[Int(b & 0xF)]]
            }
            return String(decoding: out, as: UTF8.self)
        }
        if key.count == objectKeySize { return hex(key[0..<2]) + ":" + hex(key[2...]) }
        if key.isEmpty { return "(empty)" }
        let shown = hex(key.prefix(limit), separator: UInt8(ascii: " "))
        return key.count > limit ? shown + " … (\(key.count) bytes)" : shown
    }

    @inline(__always)
    public static func appendU64(_ v: UInt64, to out: inout [UInt8]) {
        var shift: UInt64 = 56
        for _ in 0..<8 {
            out.append(UInt8(truncatingIfNeeded: v >> shift))
            shift &-= 8
        }
    }

    public static func u64(_ v: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(8)
        appendU64(v, to: &out)
        return out
    }

    /// Reads a u64 BE; the caller has checked that 8 bytes are there.
    @inline(__always)
    public static func readU64(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<8 { v = v << 8 | UInt64(bytes[offset + i]) }
        return v
    }

    public static func readU64(_ bytes: [UInt8]) -> UInt64? {
        guard bytes.count == 8 else { return nil }
        return bytes.withUnsafeBytes { readU64($0, at: 0) }
    }

    // MARK: Value keys

    enum Tag {
        static let null: UInt8 = 0x05
        static let nan: UInt8 = 0x10
        static let negativeInfinity: UInt8 = 0x11
        static let negative: UInt8 = 0x12
        static let zero: UInt8 = 0x13
        static let positive: UInt8 = 0x14
        static let positiveInfinity: UInt8 = 0x15
        static let string: UInt8 = 0x20
        static let date: UInt8 = 0x30
        static let bool: UInt8 = 0x40
        static let uuid: UInt8 = 0x50
        static let binary: UInt8 = 0x60
        static let uri: UInt8 = 0x70
        static let json: UInt8 = 0x80
        static let object: UInt8 = 0x90
    }

    /// The order-preserving encoding of one value (to-many `.objects` values are never keyed and
    /// encode as null).
    public static func appendValue(_ value: Value, to out: inout [UInt8]) {
        switch value {
        case .null, .objects: out.append(Tag.null)
        case .int(let i): appendInt(i, to: &out)
        case .double(let d): appendDouble(d, to: &out)
        case .decimal(let d): appendDecimal(d, to: &out)
        case .string(let s):
            out.append(Tag.string)
            appendEscaped(s.utf8, to: &out)
        case .date(let ms):
            out.append(Tag.date)
            appendU64(UInt64(bitPattern: ms) ^ (1 << 63), to: &out)
        case .bool(let b):
            out.append(Tag.bool)
            out.append(b ? 1 : 0)
        case .uuid(let u):
            out.append(Tag.uuid)
            withUnsafeBytes(of: u.uuid) { out.append(contentsOf: $0) }
        case .binary(let b):
            out.append(Tag.binary)
            appendEscaped(b, to: &out)
        case .uri(let s):
            out.append(Tag.uri)
            appendEscaped(s.utf8, to: &out)
        case .json(let j):
            out.append(Tag.json)
            appendEscaped(j.serialized().utf8, to: &out)
        case .object(let id):
            out.append(Tag.object)
            appendObjectKey(id, to: &out)
        }
    }

    /// The key of a tuple of values (a compound index or unique key).
    public static func valuesKey(_ values: some Sequence<Value>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        for v in values { appendValue(v, to: &out) }
        return out
    }

    static func appendEscaped(_ bytes: some Sequence<UInt8>, to out: inout [UInt8]) {
        for b in bytes {
            out.append(b)
            if b == 0 { out.append(0xFF) }
        }
        out.append(0)
        out.append(0)
    }

    // MARK: Numbers

    static func appendInt(_ i: Int64, to out: inout [UInt8]) {
        if i == 0 {
            out.append(Tag.zero)
            return
        }
        var digits: [UInt8] = []
        digits.reserveCapacity(20)
        var m = i.magnitude
        while m > 0 {
            digits.append(UInt8(m % 10))
            m /= 10
        }
        digits.reverse()
        let point = digits.count
        appendDigits(negative: i < 0, digits: &digits, point: point, to: &out)
    }

    static func appendDouble(_ d: Double, to out: inout [UInt8]) {
        if d.isNaN { out.append(Tag.nan); return }
        if d.isInfinite { out.append(d < 0 ? Tag.negativeInfinity : Tag.positiveInfinity); return }
        if d == 0 { out.append(Tag.zero); return }
        if d.rounded() == d, d.magnitude < 9.2e18 {
            appendInt(Int64(d), to: &out)
            return
        }
        var (digits, point) = exactDigits(of: d.magnitude)
        appendDigits(negative: d < 0, digits: &digits, point: point, to: &out)
    }

    static func appendDecimal(_ d: Decimal, to out: inout [UInt8]) {
        if d.isNaN { out.append(Tag.nan); return }
        var negative = false
        var digits: [UInt8] = []
        var point = 0
        var seenPoint = false
        for c in d.description.utf8 {
            switch c {
            case UInt8(ascii: "-"): negative = true
            case UInt8(ascii: "."): seenPoint = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let digit = c - UInt8(ascii: "0")
                if digits.isEmpty && digit == 0 {
                    if seenPoint { point -= 1 }  // a leading zero after the point
                    continue
                }
                digits.append(digit)
                if !seenPoint { point += 1 }
            default: continue
            }
        }
        if digits.isEmpty {
            out.append(Tag.zero)
            return
        }
        appendDigits(negative: negative, digits: &digits, point: point, to: &out)
    }

    /// Writes 0.d1d2… × 10^point (d1 ≠ 0) in the base-100 form of the layout above.
    static func appendDigits(negative: Bool, digits: inout [UInt8], point: Int, to out: inout [UInt8]) {
        while let last = digits.last, last == 0 { digits.removeLast() }
        guard !digits.isEmpty else {
            out.append(Tag.zero)
            return
        }
        var point = point
        if point & 1 != 0 {  // make the exponent a whole number of base-100 digits
            digits.insert(0, at: 0)
            point += 1
        }
        if digits.count & 1 != 0 { digits.append(0) }
        let exponent = UInt16(truncatingIfNeeded: point / 2 + 0x8000)
        let flip: UInt8 = negative ? 0xFF : 0
        out.append(negative ? Tag.negative : Tag.positive)
        out.append(UInt8(truncatingIfNeeded: exponent >> 8) ^ flip)
        out.append(UInt8(truncatingIfNeeded: exponent) ^ flip)
        let pairs = digits.count / 2
        for p in 0..<pairs {
            let x = digits[2 * p] * 10 + digits[2 * p + 1]
            let byte = p == pairs - 1 ? 2 * x : 2 * x + 1
            out.append(byte ^ flip)
        }
    }

    /// The exact decimal digits of a finite positive double and the position of the point:
    /// value = 0.digits × 10^point.
    static func exactDigits(of d: Double) -> (digits: [UInt8], point: Int) {
        var m = d.significandBitPattern
        var e: Int
        if d.exponentBitPattern == 0 {
            e = -1074
        } else {
            m |= 1 << 52
            e = Int(d.exponentBitPattern) - 1075
        }
        let tz = m.trailingZeroBitCount
        m >>= UInt64(tz)
        e += tz
        // Big integer in base 1e9 limbs, little-endian.
        var limbs: [UInt64] = [m % 1_000_000_000, m / 1_000_000_000 % 1_000_000_000, m / 1_000_000_000_000_000_000]
        func multiply(_ factor: UInt64) {
            var carry: UInt64 = 0
            for i in limbs.indices {
                let p = limbs[i] * factor + carry
                limbs[i] = p % 1_000_000_000
                carry = p / 1_000_000_000
            }
            while carry > 0 {
                limbs.append(carry % 1_000_000_000)
                carry /= 1_000_000_000
            }
        }
        var shift = 0
        if e >= 0 {
            var k = e
            while k > 0 {
                let step = min(k, 29)
                multiply(1 << UInt64(step))
                k -= step
            }
        } else {
            var k = -e
            while k > 0 {
                let step = min(k, 13)
                var f: UInt64 = 1
                for _ in 0..<step { f *= 5 }
                multiply(f)
                k -= step
            }
            shift = e  // value = N × 10^e
        }
        while limbs.count > 1, limbs.last == 0 { limbs.removeLast() }
        var digits: [UInt8] = []
        digits.reserveCapacity(limbs.count * 9)
        for (i, limb) in limbs.enumerated().reversed() {
            var chunk = [UInt8](repeating: 0, count: 9)
            var v = limb
            for j in stride(from: 8, through: 0, by: -1) {
                chunk[j] = UInt8(v % 10)
                v /= 10
            }
            if i == limbs.count - 1 {
                let firstNonZero = chunk.firstIndex { $0 != 0 } ?? 8
                digits.append(contentsOf: chunk[firstNonZero...])
            } else {
                digits.append(contentsOf: chunk)
            }
        }
        return (digits, digits.count + shift)
    }
}
