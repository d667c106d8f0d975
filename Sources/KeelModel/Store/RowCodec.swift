// The row: one object's attributes and to-one targets, as stored under its object key in
// `obj/<RootEntity>` (Decision 0004; Docs/FileFormat.md, "Object layer").
//
// ROW LAYOUT (sparse: only the fields the object has; an absent field is null)
// | offset | size   | field                                                            |
// | 0      | 1      | row format, 0x01                                                 |
// | 1      | varint | version (saved changes of the object, ≥ 1)                       |
// | …      |        | fields, repeated to the end of the value:                        |
// |        | varint | field number (the property's index in Entity.properties),         |
// |        |        | strictly increasing                                              |
// |        | 1      | type tag (below)                                                 |
// |        | …      | payload                                                          |
// Varints are unsigned LEB128 (7 bits a byte, low first, at most 10 bytes).
//
// | tag | type    | payload                                                  |
// | 1   | int     | zigzag varint                                            |
// | 2   | double  | 8 bytes, IEEE 754 bit pattern, little-endian             |
// | 3   | decimal | varint length, ASCII digits ("-1234.5"): read, no longer written |
// | 4   | string  | varint length, UTF-8                                     |
// | 5   | false   | none                                                     |
// | 6   | true    | none                                                     |
// | 7   | date    | zigzag varint, milliseconds since 1970 UTC               |
// | 8   | binary  | varint length, bytes                                     |
// | 9   | uuid    | 16 bytes                                                 |
// | 10  | uri     | varint length, UTF-8                                     |
// | 11  | json    | varint length, binary JSON (below)                       |
// | 12  | object  | 10-byte object key (a to-one target)                     |
// | 13  | decimal | flags (1), exponent (1, signed), mantissa (varint, ≤ 128 bits) |
//
// Decimal (tag 13): Foundation's Decimal as it is, mantissa × 10^exponent, no text on the way in
// or out. Flags: bit 0 negative, bit 1 compact (Decimal's `_isCompact`), other bits 0. The
// exponent is −128…127 (Decimal's range), one two's-complement byte. The mantissa is an unsigned
// LEB128 of up to 128 bits (19 bytes at most; Decimal's `_mantissa` words, low first). NaN is
// mantissa 0 with the negative flag, as in Decimal. 1234.56 costs 6 bytes (tag included).
//
// Binary JSON: a tag byte, then: 0 null, 1 false, 2 true, 3 int (zigzag varint), 4 double
// (8 bytes LE), 5 string (varint length, UTF-8), 6 array (varint count, items), 7 object (varint
// count, then key as a string payload and value, in order). Nesting is at most 512 deep.
//
// VALIDITY: the format byte is 0x01; every field number is below the entity's property count and
// greater than the previous one; every tag is known; every length fits in the value; strings are
// valid UTF-8; a to-one target's number is ≥ 1. A row that breaks any rule is refused with
// CORRUPT — decoding never traps on damaged bytes.

import Collections
import Foundation

public enum RowCodec {
    static let format: UInt8 = 1

    enum Tag {
        static let int: UInt8 = 1
        static let double: UInt8 = 2
        static let decimal: UInt8 = 3
        static let string: UInt8 = 4
        static let `false`: UInt8 = 5
        static let `true`: UInt8 = 6
        static let date: UInt8 = 7
        static let binary: UInt8 = 8
        static let uuid: UInt8 = 9
        static let uri: UInt8 = 10
        static let json: UInt8 = 11
        static let object: UInt8 = 12
        static let binaryDecimal: UInt8 = 13
    }

    // MARK: Encoding

    /// Encodes `object` into `out` (cleared first; pass the same buffer again to reuse its storage).
    /// Null and to-many slots are left out.
    public static func encode(_ object: StoredObject, into out: inout [UInt8]) {
        encode(version: object.version, values: object.values, into: &out)
    }

    /// Encodes a row from its parts (`values` one per field).
    static func encode(version: UInt64, values: [Value], into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        out.append(format)
        appendVarint(version, to: &out)
        for (field, value) in values.enumerated() {
            switch value {
            case .null, .objects: continue
            default: break
            }
            appendVarint(UInt64(field), to: &out)
            appendValue(value, to: &out)
        }
    }

    public static func encode(_ object: StoredObject) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        encode(object, into: &out)
        return out
    }

    static func appendValue(_ value: Value, to out: inout [UInt8]) {
        switch value {
        case .null, .objects: preconditionFailure("null and to-many values are not stored in rows")
        case .int(let i):
            out.append(Tag.int)
            appendVarint(zigzag(i), to: &out)
        case .double(let d):
            out.append(Tag.double)
            appendLE(d.bitPattern, to: &out)
        case .decimal(let d):
            appendDecimal(d, to: &out)
        case .string(let s):
            out.append(Tag.string)
            appendBytes(s.utf8, to: &out)
        case .bool(let b):
            out.append(b ? Tag.true : Tag.false)
        case .date(let ms):
            out.append(Tag.date)
            appendVarint(zigzag(ms), to: &out)
        case .binary(let b):
            out.append(Tag.binary)
            appendVarint(UInt64(b.count), to: &out)
            out.append(contentsOf: b)
        case .uuid(let u):
            out.append(Tag.uuid)
            withUnsafeBytes(of: u.uuid) { out.append(contentsOf: $0) }
        case .uri(let s):
            out.append(Tag.uri)
            appendBytes(s.utf8, to: &out)
        case .json(let j):
            out.append(Tag.json)
            var inner: [UInt8] = []
            appendJSON(j, to: &inner)
            appendVarint(UInt64(inner.count), to: &out)
            out.append(contentsOf: inner)
        case .object(let id):
            out.append(Tag.object)
            KeyEncoding.appendObjectKey(id, to: &out)
        }
    }

    /// Tag 13: flags, exponent, mantissa (layout above). The fields are read from Decimal's
    /// memory (its stored fields are not public on Linux) once `DecimalLayout.verified` has
    /// checked that layout; otherwise the decimal is written as text (tag 3), which is slower but
    /// reads back the same.
    @inline(__always)
    static func appendDecimal(_ d: Decimal, to out: inout [UInt8]) {
        guard DecimalLayout.verified else {
            out.append(Tag.decimal)
            appendBytes(d.description.utf8, to: &out)
            return
        }
        let (flags, exponent, low, high) = DecimalLayout.fields(of: d)
        out.append(Tag.binaryDecimal)
        out.append(flags)
        out.append(UInt8(bitPattern: exponent))
        var lo = low, hi = high
        while hi != 0 || lo >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: lo) | 0x80)
            lo = lo >> 7 | hi << 57
            hi >>= 7
        }
        out.append(UInt8(lo))
    }

    static func appendBytes(_ utf8: String.UTF8View, to out: inout [UInt8]) {
        appendVarint(UInt64(utf8.count), to: &out)
        out.append(contentsOf: utf8)
    }

    static func appendJSON(_ j: JSON, to out: inout [UInt8]) {
        switch j {
        case .null: out.append(0)
        case .bool(let b): out.append(b ? 2 : 1)
        case .int(let i):
            out.append(3)
            appendVarint(zigzag(i), to: &out)
        case .double(let d):
            out.append(4)
            appendLE(d.bitPattern, to: &out)
        case .string(let s):
            out.append(5)
            appendBytes(s.utf8, to: &out)
        case .array(let a):
            out.append(6)
            appendVarint(UInt64(a.count), to: &out)
            for x in a { appendJSON(x, to: &out) }
        case .object(let o):
            out.append(7)
            appendVarint(UInt64(o.count), to: &out)
            for (k, v) in o {
                appendBytes(k.utf8, to: &out)
                appendJSON(v, to: &out)
            }
        }
    }

    @inline(__always)
    static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }

    @inline(__always)
    static func unzigzag(_ v: UInt64) -> Int64 { Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1) }

    @inline(__always)
    public static func appendVarint(_ v: UInt64, to out: inout [UInt8]) {
        var v = v
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    static func appendLE(_ v: UInt64, to out: inout [UInt8]) {
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    // MARK: Decoding

    /// Decodes the row of `id`, whose entity has `fieldCount` properties. Throws CORRUPT on any
    /// damage.
    public static func decode(_ bytes: UnsafeRawBufferPointer, id: ObjectID, fieldCount: Int) throws(KeelError) -> StoredObject {
        var values = [Value](repeating: .null, count: fieldCount)
        let version = try walkFields(bytes, fieldCount: fieldCount) { (field, reader) throws(KeelError) in
            values[field] = try decodeValue(&reader)
        }
        return StoredObject(id: id, version: version, values: values)
    }

    /// Walks a row: checks the format byte, reads the version, then hands each field number (in
    /// strictly increasing order, each below `fieldCount`, else CORRUPT) to `visit`, which must
    /// consume that field's value from the reader (decode or skip it). Returns the version.
    @inline(__always)
    static func walkFields(
        _ bytes: UnsafeRawBufferPointer, fieldCount: Int, _ visit: (Int, inout ByteReader) throws(KeelError) -> Void
    ) throws(KeelError) -> UInt64 {
        var reader = ByteReader(bytes: bytes)
        guard try reader.byte() == format else { throw reader.damage("unknown row format") }
        let version = try reader.varint()
        var previous = -1
        while !reader.atEnd {
            let raw = try reader.varint()
            guard raw < UInt64(fieldCount), Int(raw) > previous else {
                throw reader.damage("field \(raw) out of order or beyond the entity's \(fieldCount) properties")
            }
            previous = Int(raw)
            try visit(previous, &reader)
        }
        return version
    }

    public static func decode(_ bytes: [UInt8], id: ObjectID, fieldCount: Int) throws(KeelError) -> StoredObject {
        let result: Result<StoredObject, KeelError> = bytes.withUnsafeBytes { b in
            Result { () throws(KeelError) -> StoredObject in try decode(b, id: id, fieldCount: fieldCount) }
        }
        return try result.get()
    }

    /// Only the version of a row (no field decoding).
    public static func version(_ bytes: UnsafeRawBufferPointer) throws(KeelError) -> UInt64 {
        var reader = ByteReader(bytes: bytes)
        guard try reader.byte() == format else { throw reader.damage("unknown row format") }
        return try reader.varint()
    }

    static func decodeValue(_ r: inout ByteReader) throws(KeelError) -> Value {
        let tag = try r.byte()
        switch tag {
        case Tag.int: return .int(unzigzag(try r.varint()))
        case Tag.double: return .double(Double(bitPattern: try r.le64()))
        case Tag.decimal:
            let text = try r.string()
            guard let d = Decimal(string: text, locale: nil), !d.isNaN || text == "NaN" else {
                throw r.damage("malformed decimal")
            }
            return .decimal(d)
        case Tag.binaryDecimal: return .decimal(try decodeDecimal(&r))
        case Tag.string: return .string(try r.string())
        case Tag.false: return .bool(false)
        case Tag.true: return .bool(true)
        case Tag.date: return .date(unzigzag(try r.varint()))
        case Tag.binary: return .binary(try r.bytes(try r.length()))
        case Tag.uuid:
            let b = try r.bytes(16)
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case Tag.uri: return .uri(try r.string())
        case Tag.json:
            let length = try r.length()
            let end = r.offset + length
            let j = try decodeJSON(&r, depth: 0)
            guard r.offset == end else { throw r.damage("json length does not match its content") }
            return .json(j)
        case Tag.object:
            guard let id = KeyEncoding.objectID(r.bytes, at: r.offset) else { throw r.damage("bad object key") }
            r.offset += KeyEncoding.objectKeySize
            return .object(id)
        default:
            throw r.damage("unknown type tag \(tag)")
        }
    }

    /// Tag 13's payload (layout above).
    static func decodeDecimal(_ r: inout ByteReader) throws(KeelError) -> Decimal {
        let flags = try r.byte()
        guard flags & ~0b11 == 0 else { throw r.damage("unknown decimal flags") }
        let exponent = Int8(bitPattern: try r.byte())
        var low: UInt64 = 0
        var high: UInt64 = 0
        var shift = 0
        while true {
            let b = try r.byte()
            let bits = UInt64(b & 0x7F)
            guard shift + 7 <= 128 || bits >> UInt64(128 - shift) == 0 else { throw r.damage("decimal mantissa beyond 128 bits") }
            if shift < 64 {
                low |= bits << UInt64(shift)
                if shift + 7 > 64 { high |= bits >> UInt64(64 - shift) }
            } else {
                high |= bits << UInt64(shift - 64)
            }
            if b & 0x80 == 0 { break }
            shift += 7
            guard shift < 128 else { throw r.damage("decimal mantissa beyond 128 bits") }
        }
        return DecimalLayout.make(flags: flags, exponent: exponent, low: low, high: high)
    }

    static func decodeJSON(_ r: inout ByteReader, depth: Int) throws(KeelError) -> JSON {
        guard depth < 512 else { throw r.damage("json nested too deep") }
        switch try r.byte() {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return .int(unzigzag(try r.varint()))
        case 4: return .double(Double(bitPattern: try r.le64()))
        case 5: return .string(try r.string())
        case 6:
            let count = try r.length()
            var a: [JSON] = []
            a.reserveCapacity(min(count, 1024))
            for _ in 0..<count { a.append(try decodeJSON(&r, depth: depth + 1)) }
            return .array(a)
        case 7:
            let count = try r.length()
            var o: OrderedDictionary<String, JSON> = [:]
            for _ in 0..<count {
                let k = try r.string()
                o[k] = try decodeJSON(&r, depth: depth + 1)
            }
            return .object(o)
        default:
            throw r.damage("unknown json tag")
        }
    }
}

/// Foundation's `Decimal` field by field. Its stored fields (`_exponent`, `_length`,
/// `_isNegative`, `_isCompact`, `_mantissa`) are public on Darwin but internal in swift-foundation
/// on Linux, so they are read and written through the struct's memory: byte 0 the exponent
/// (Int8), byte 1 the length (high 4 bits) with the negative (bit 3) and compact (bit 2) flags,
/// bytes 2–3 reserved, bytes 4–19 the eight mantissa words, low first, little-endian. `verified`
/// checks that layout against decimals built through the public API, once per process; when it
/// does not hold, the row codec writes text and `make` builds by arithmetic.
enum DecimalLayout {
    static let verified: Bool = {
        guard MemoryLayout<Decimal>.size == 20 else { return false }
        func raw(_ d: Decimal) -> [UInt8] { withUnsafeBytes(of: d) { Array($0) } }
        let a = raw(Decimal(sign: .minus, exponent: -3, significand: Decimal(UInt64(0x0001_2345_6789_ABCD))))
        let b = raw(Decimal(UInt64(0xFFFF_0000_0000_0042)))
        let c = raw(Decimal(sign: .plus, exponent: 7, significand: Decimal(42)))
        let nan = raw(Decimal.nan)
        return a[0] == 0xFD && a[1] & 0xF8 == 0x48 && a[4...11] == [0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01, 0x00]
            && a[12...19].allSatisfy { $0 == 0 }
            && b[0] == 0 && b[1] & 0xF8 == 0x40 && b[4...11] == [0x42, 0, 0, 0, 0, 0, 0xFF, 0xFF]
            && c[0] == 7 && c[1] & 0xF8 == 0x10 && c[4...5] == [42, 0] && c[6...19].allSatisfy { $0 == 0 }
            && nan[1] & 0xF8 == 0x08 && nan[4...19].allSatisfy { $0 == 0 }
            && Decimal(sign: .plus, exponent: -2, significand: Decimal(-12345)).description == "-123.45"
    }()

    /// Flags (bit 0 negative, bit 1 compact), exponent, mantissa as two 64-bit halves.
    @inline(__always)
    static func fields(of d: Decimal) -> (flags: UInt8, exponent: Int8, low: UInt64, high: UInt64) {
        withUnsafeBytes(of: d) { b in
            let length = Int(b[1] >> 4)
            var low: UInt64 = 0
            var high: UInt64 = 0
            for w in 0..<min(length, 8) {
                let word = UInt64(b[4 + 2 * w]) | UInt64(b[5 + 2 * w]) << 8
                if w < 4 { low |= word << UInt64(16 * w) } else { high |= word << UInt64(16 * (w - 4)) }
            }
            return ((b[1] >> 3) & 1 | (b[1] >> 1) & 0b10, Int8(bitPattern: b[0]), low, high)
        }
    }

    /// The decimal with these fields (its length is the number of mantissa words in use).
    static func make(flags: UInt8, exponent: Int8, low: UInt64, high: UInt64) -> Decimal {
        let length = high != 0 ? 4 + (64 - high.leadingZeroBitCount + 15) / 16 : (64 - low.leadingZeroBitCount + 15) / 16
        guard verified else {
            if length == 0 { return flags & 1 != 0 ? .nan : Decimal(0) }
            var significand = Decimal(low)
            if high != 0 { significand += Decimal(high) * Decimal(sign: .plus, exponent: 0, significand: Decimal(UInt64(1) << 32)) * Decimal(UInt64(1) << 32) }
            return Decimal(sign: flags & 1 != 0 ? .minus : .plus, exponent: Int(exponent), significand: significand)
        }
        var d = Decimal()
        withUnsafeMutableBytes(of: &d) { b in
            b[0] = UInt8(bitPattern: exponent)
            b[1] = UInt8(length) << 4 | (flags & 1) << 3 | (flags & 0b10) << 1
            b[2] = 0
            b[3] = 0
            for w in 0..<8 {
                let word = w < 4 ? low >> UInt64(16 * w) : high >> UInt64(16 * (w - 4))
                b[4 + 2 * w] = UInt8(truncatingIfNeeded: word)
                b[5 + 2 * w] = UInt8(truncatingIfNeeded: word >> 8)
            }
        }
        return d
    }
}

/// A bounds-checked reader over bytes from disk: every read throws CORRUPT instead of trapping.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var atEnd: Bool { offset >= bytes.count }

    func damage(_ what: String) -> KeelError {
        KeelError(.corrupt, "damaged record at byte \(offset): \(what)")
    }

    @inline(__always)
    mutating func byte() throws(KeelError) -> UInt8 {
        guard offset < bytes.count else { throw damage("truncated") }
        defer { offset += 1 }
        return bytes[offset]
    }

    @inline(__always)
    mutating func varint() throws(KeelError) -> UInt64 {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            if shift == 63 && b > 1 { throw damage("varint overflows 64 bits") }
            v |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return v }
            shift += 7
            if shift > 63 { throw damage("varint longer than 10 bytes") }
        }
    }

    /// A length that fits in the rest of the bytes.
    mutating func length() throws(KeelError) -> Int {
        let n = try varint()
        guard n <= UInt64(bytes.count - offset) else { throw damage("length \(n) beyond the end") }
        return Int(n)
    }

    mutating func le64() throws(KeelError) -> UInt64 {
        guard bytes.count - offset >= 8 else { throw damage("truncated") }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return v
    }

    mutating func bytes(_ n: Int) throws(KeelError) -> [UInt8] {
        guard n >= 0, bytes.count - offset >= n else { throw damage("truncated") }
        defer { offset += n }
        return [UInt8](UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + n]))
    }

    mutating func string() throws(KeelError) -> String {
        let n = try length()
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + n])
        // ASCII (most stored text) is valid UTF-8 as it stands: decode it without the generic
        // validating initializer, which costs a metadata lookup per call.
        var ascii = true
        for b in slice where b >= 0x80 {
            ascii = false
            break
        }
        let s: String
        if ascii {
            s = String(decoding: slice.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
        } else {
            guard let v = String(validating: slice, as: UTF8.self) else { throw damage("invalid UTF-8") }
            s = v
        }
        offset += n
        return s
    }
}
