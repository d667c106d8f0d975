// The row: one object's attributes and to-one targets, as stored under its object key in
// `obj/<RootEntity>` (Decision 0004; Docs/FileFormat.md, "Object layer").
//
// ROW LAYOUT, format 2 (written by this build; sparse: only the fields the object has, an
// absent field is null)
// | offset | size   | field                                                            |
// | 0      | 1      | row format, 0x02                                                 |
// | 1      | varint | version (saved changes of the object, ≥ 1)                       |
// | …      |        | fields, repeated to the end of the value:                        |
// |        | 1      | head: high nibble = field-number delta − 1 (0…14), 15 = escape;   |
// |        |        | low nibble = the type tag (below)                                |
// |        | varint | only after an escape: delta − 16                                 |
// |        | …      | payload                                                          |
// The field number is the property's index in Entity.properties; the delta is the field number
// minus the previous field's (the first field's previous is −1), so fields are strictly
// increasing by construction: a row of consecutive fields spends one byte a field on number and
// tag together.
//
// ROW LAYOUT, format 1 (read forever, no longer written: a format-1 row is rewritten in format 2
// when its object is saved again)
// | 0      | 1      | row format, 0x01                                                 |
// | 1      | varint | version                                                          |
// | …      | varint | field number, strictly increasing; then the type tag (1 byte),    |
// |        |        | then the payload, repeated to the end of the value               |
// Varints are unsigned LEB128 (7 bits a byte, low first, at most 10 bytes).
//
// | tag | type    | payload                                                  |
// | 1   | int     | zigzag varint                                            |
// | 2   | double  | 8 bytes, IEEE 754 bit pattern, little-endian             |
// | 3   | decimal | varint length, ASCII digits ("-1234.5"): written only when Decimal's memory layout is not the verified one |
// | 4   | string  | varint length, UTF-8                                     |
// | 5   | false   | none                                                     |
// | 6   | true    | none                                                     |
// | 7   | date    | zigzag varint, milliseconds since 1970 UTC               |
// | 8   | binary  | varint length, bytes                                     |
// | 9   | uuid    | 16 bytes                                                 |
// | 10  | uri     | varint length, UTF-8                                     |
// | 11  | json    | varint length, binary JSON (below)                       |
// | 12  | object  | 10-byte object key (a to-one target): format 1 only       |
// | 13  | decimal | flags (1), exponent (1, signed), mantissa (varint, ≤ 128 bits) |
// | 14  | object  | a to-one target as a reference: varint entity id (≤ 65535), varint object number (≥ 1): format 2 only |
//
// Decimal (tag 13): Foundation's Decimal as it is, mantissa × 10^exponent, no text on the way in
// or out. Flags: bit 0 negative, bit 1 compact (Decimal's `_isCompact`), other bits 0. The
// exponent is −128…127 (Decimal's range), one two's-complement byte. The mantissa is an unsigned
// LEB128 of up to 128 bits (19 bytes at most; Decimal's `_mantissa` words, low first). NaN is
// mantissa 0 with the negative flag, as in Decimal. 1234.56 costs 5 bytes besides its tag.
//
// Binary JSON: a tag byte, then: 0 null, 1 false, 2 true, 3 int (zigzag varint), 4 double
// (8 bytes LE), 5 string (varint length, UTF-8), 6 array (varint count, items), 7 object (varint
// count, then key as a string payload and value, in order). Nesting is at most 512 deep.
//
// VALIDITY: the format byte is 0x01 or 0x02; every field number is below the entity's property
// count and greater than the previous one; every tag is known to the row's format (1…13 in
// format 1; 1…11, 13, 14 in format 2); every length fits in the value; strings are valid UTF-8;
// a to-one target's entity id fits in 16 bits and its number is ≥ 1. A row that breaks any rule
// is refused with CORRUPT — decoding never traps on damaged bytes. Folders that may hold format-2
// rows carry object-store format 3 in `$meta format` (ObjectStore+Open.swift), so the builds
// before it, which read only format-1 rows, refuse the folder at open by name.

import Collections
import Foundation
import KeelStorage

public enum RowCodec {
    /// The row format written (layout above).
    static let format: UInt8 = 2
    /// The earlier row format, still read.
    static let format1: UInt8 = 1

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
        static let objectReference: UInt8 = 14
    }

    // MARK: Encoding

    /// Encodes `object` into `out` (cleared first; pass the same buffer again to reuse its storage).
    /// Null and to-many slots are left out.
    public static func encode(_ object: StoredObject, into out: inout [UInt8]) {
        encode(version: object.version, values: object.values, into: &out)
    }

    /// Encodes a row from its parts (`values` one per field), in row format `format` (2; 1 only
    /// for tests that need rows as earlier builds wrote them).
    static func encode(version: UInt64, values: [Value], into out: inout [UInt8], format: UInt8 = RowCodec.format) {
        out.removeAll(keepingCapacity: true)
        out.append(format)
        appendVarint(version, to: &out)
        var previous = -1
        for (field, value) in values.enumerated() {
            switch value {
            case .null, .objects: continue
            default: break
            }
            if format == format1 {
                appendVarint(UInt64(field), to: &out)
                appendValue(value, to: &out, format: format) { tag, out in out.append(tag) }
            } else {
                let delta = field - previous
                appendValue(value, to: &out, format: format) { tag, out in
                    if delta <= 15 {
                        out.append(UInt8(delta - 1) << 4 | tag)
                    } else {
                        out.append(0xF0 | tag)
                        appendVarint(UInt64(delta - 16), to: &out)
                    }
                }
            }
            previous = field
        }
    }

    public static func encode(_ object: StoredObject) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        encode(object, into: &out)
        return out
    }

    /// Appends one value in row format `format`: `head` writes what precedes the payload given
    /// the value's tag (format 1: the tag byte; format 2: the head byte and any escape). A to-one
    /// target is a 10-byte key under tag 12 in format 1, a reference under tag 14 in format 2.
    @inline(__always)
    static func appendValue(_ value: Value, to out: inout [UInt8], format: UInt8, head: (UInt8, inout [UInt8]) -> Void) {
        switch value {
        case .null, .objects: preconditionFailure("null and to-many values are not stored in rows")
        case .int(let i):
            head(Tag.int, &out)
            appendVarint(zigzag(i), to: &out)
        case .double(let d):
            head(Tag.double, &out)
            appendLE(d.bitPattern, to: &out)
        case .decimal(let d):
            appendDecimal(d, to: &out, head: head)
        case .string(let s):
            head(Tag.string, &out)
            appendBytes(s.utf8, to: &out)
        case .bool(let b):
            head(b ? Tag.true : Tag.false, &out)
        case .date(let ms):
            head(Tag.date, &out)
            appendVarint(zigzag(ms), to: &out)
        case .binary(let b):
            head(Tag.binary, &out)
            appendVarint(UInt64(b.count), to: &out)
            out.append(contentsOf: b)
        case .uuid(let u):
            head(Tag.uuid, &out)
            withUnsafeBytes(of: u.uuid) { out.append(contentsOf: $0) }
        case .uri(let s):
            head(Tag.uri, &out)
            appendBytes(s.utf8, to: &out)
        case .json(let j):
            head(Tag.json, &out)
            var inner: [UInt8] = []
            appendJSON(j, to: &inner)
            appendVarint(UInt64(inner.count), to: &out)
            out.append(contentsOf: inner)
        case .object(let id):
            if format == format1 {
                head(Tag.object, &out)
                KeyEncoding.appendObjectKey(id, to: &out)
            } else {
                head(Tag.objectReference, &out)
                appendVarint(UInt64(id.entity.rawValue), to: &out)
                appendVarint(id.number, to: &out)
            }
        }
    }

    /// Tag 13: flags, exponent, mantissa (layout above). The fields are read from Decimal's
    /// memory (its stored fields are not public on Linux) once `DecimalLayout.verified` has
    /// checked that layout; otherwise the decimal is written as text (tag 3), which is slower but
    /// reads back the same.
    @inline(__always)
    static func appendDecimal(_ d: Decimal, to out: inout [UInt8], head: (UInt8, inout [UInt8]) -> Void) {
        guard DecimalLayout.verified else {
            head(Tag.decimal, &out)
            appendBytes(d.description.utf8, to: &out)
            return
        }
        let (flags, exponent, low, high) = DecimalLayout.fields(of: d)
        head(Tag.binaryDecimal, &out)
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
        // Built in field order by appending (fields come strictly increasing, each below
        // `fieldCount`): the unset ones between as `.null`, the rest after the last field. No
        // list of `.null`s made first and each decoded value stored over one (a uniqueness check
        // and the old value's destruction per field).
        var values: [Value] = []
        values.reserveCapacity(fieldCount)
        let version = try walkFields(bytes, fieldCount: fieldCount) { (field, tag, reader) throws(KeelError) in
            while values.count < field { values.append(.null) }
            values.append(try decodeValue(tag: tag, &reader))
        }
        while values.count < fieldCount { values.append(.null) }
        return StoredObject(id: id, version: version, values: values)
    }

    /// Walks a row: checks the format byte, reads the version, then hands each field number (in
    /// strictly increasing order, each below `fieldCount`, else CORRUPT) and its type tag (known
    /// to the row's format, else CORRUPT) to `visit`, which must consume that field's payload from
    /// the reader (decode or skip it). Returns the version.
    @inline(__always)
    static func walkFields(
        _ bytes: UnsafeRawBufferPointer, fieldCount: Int, _ visit: (Int, UInt8, inout ByteReader) throws(KeelError) -> Void
    ) throws(KeelError) -> UInt64 {
        var row = try RowFields(bytes, fieldCount: fieldCount)
        while let (field, tag) = try row.next() {
            try visit(field, tag, &row.reader)
        }
        return row.version
    }

    public static func decode(_ bytes: [UInt8], id: ObjectID, fieldCount: Int) throws(KeelError) -> StoredObject {
        let result: Result<StoredObject, KeelError> = bytes.withUnsafeBytes { b in
            Result { () throws(KeelError) -> StoredObject in try decode(b, id: id, fieldCount: fieldCount) }
        }
        return try result.get()
    }

    /// Only the version of a row (no field decoding).
    public static func version(_ bytes: UnsafeRawBufferPointer) throws(KeelError) -> UInt64 {
        try RowFields(bytes, fieldCount: 0).version
    }

    /// The payload of a field whose tag (`RowFields.next` checked it against the row's format)
    /// has been read.
    static func decodeValue(tag: UInt8, _ r: inout ByteReader) throws(KeelError) -> Value {
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
        case Tag.objectReference: return .object(try decodeReference(&r))
        default:
            throw r.damage("unknown type tag \(tag)")
        }
    }

    /// Tag 14's payload: entity id, object number (layout above).
    @inline(__always)
    static func decodeReference(_ r: inout ByteReader) throws(KeelError) -> ObjectID {
        let entity = try r.varint()
        let number = try r.varint()
        guard entity <= UInt64(UInt16.max), number > 0 else { throw r.damage("bad object reference") }
        return ObjectID(entity: EntityID(rawValue: UInt16(entity)), number: number)
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

/// A row's fields one at a time, in either row format: the one place that reads field numbers
/// and tags, shared by full decoding (`RowCodec.walkFields`), projections and raw filters (which
/// stop at the field they want). After `next()` the reader is at the field's payload, which the
/// caller must consume (decode or `RowCodec.skipValue`) before the next call.
struct RowFields {
    var reader: ByteReader
    let version: UInt64
    let fieldCount: Int
    /// Format 2 (head bytes) rather than format 1 (varint number, tag byte).
    let heads: Bool
    var previous = -1

    @inline(__always)
    init(_ bytes: UnsafeRawBufferPointer, fieldCount: Int) throws(KeelError) {
        reader = ByteReader(bytes: bytes)
        let format = try reader.byte()
        guard format == RowCodec.format || format == RowCodec.format1 else { throw reader.damage("unknown row format") }
        heads = format == RowCodec.format
        version = try reader.varint()
        self.fieldCount = fieldCount
    }

    /// The next field's number and tag; nil at the end of the row.
    @inline(__always)
    mutating func next() throws(KeelError) -> (field: Int, tag: UInt8)? {
        guard !reader.atEnd else { return nil }
        if heads {
            let head = try reader.byte()
            // delta ≥ 1, so the field is above the previous one; it must stay below fieldCount.
            let room = UInt64(fieldCount - previous)
            var delta = UInt64(head >> 4) + 1
            if delta == 16 {
                let extra = try reader.varint()
                guard extra < room else { throw reader.damage("field delta 16 + \(extra) after field \(previous) beyond the entity's \(fieldCount) properties") }
                delta = extra + 16
            }
            guard delta < room else {
                throw reader.damage("field delta \(delta) after field \(previous) beyond the entity's \(fieldCount) properties")
            }
            let tag = head & 0x0F
            guard tag != RowCodec.Tag.object else { throw reader.damage("unknown type tag \(tag)") }
            previous += Int(delta)
            return (previous, tag)
        }
        let raw = try reader.varint()
        guard raw < UInt64(fieldCount), Int(raw) > previous else {
            throw reader.damage("field \(raw) out of order or beyond the entity's \(fieldCount) properties")
        }
        previous = Int(raw)
        let tag = try reader.byte()
        guard tag != RowCodec.Tag.objectReference else { throw reader.damage("unknown type tag \(tag)") }
        return (previous, tag)
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
            // The eight 16-bit words, low first, each little-endian, are the two halves' bytes
            // in little-endian order: two 8-byte stores (unaligned) instead of sixteen.
            b.storeBytes(of: low.littleEndian, toByteOffset: 4, as: UInt64.self)
            b.storeBytes(of: high.littleEndian, toByteOffset: 12, as: UInt64.self)
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
        // validating initializer, which costs a metadata lookup per call. Checked eight bytes at
        // a time, then the rest one by one.
        var ascii = true
        var i = 0
        while i + 8 <= n {
            if slice.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
                ascii = false
                break
            }
            i += 8
        }
        while ascii, i < n {
            if slice[i] >= 0x80 { ascii = false }
            i += 1
        }
        let s: String
        if ascii {
            // Copied into the string's storage as they are: up to 15 bytes this is a small
            // string whose ASCII flag is read from its two words, with no validation
            // (`String(decoding:)` validated again what the loop above saw, ~140 instructions a
            // short string); a longer one is validated by the initializer as before.
            s = String(unsafeUninitializedCapacity: n) { utf8 in
                UnsafeMutableRawBufferPointer(utf8).copyMemory(from: slice)
                return n
            }
        } else {
            guard let v = String(validating: slice, as: UTF8.self) else { throw damage("invalid UTF-8") }
            s = v
        }
        offset += n
        return s
    }
}
