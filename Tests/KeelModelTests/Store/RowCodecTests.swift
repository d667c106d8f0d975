// Rows: every type round-trips; only present fields cost bytes; damaged bytes are refused with
// CORRUPT, never a trap.

import Collections
import Foundation
import KeelStorage
import Testing

@testable import KeelModel

@Suite("Row codec")
struct RowCodecTests {
    static let id = ObjectID(entity: EntityID(3), number: 42)

    static func everyType() -> StoredObject {
        let json: JSON = ["a": [1, 2.5, "x", nil, true], "b": ["nested": ["deep": false]], "big": .int(.min)]
        return StoredObject(id: id, version: 7, values: [
            .int(-5), .int(.max), .double(-0.0), .double(.nan), .decimal(Decimal(string: "-1234.50")!), .string("héllo\u{0}😀"),
            .bool(true), .bool(false), .date(-1), .binary([0, 255, 7]), .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            .uri("https://example.com/x"), .json(json), .object(ObjectID(entity: EntityID(9), number: 1 << 40)), .null, .string(""),
        ])
    }

    @Test("every value type round-trips")
    func roundTrip() throws {
        let o = Self.everyType()
        let bytes = RowCodec.encode(o)
        let back = try RowCodec.decode(bytes, id: Self.id, fieldCount: o.values.count)
        #expect(back.version == 7)
        for (a, b) in zip(o.values, back.values) {
            if case .double(let x) = a, x.isNaN {
                guard case .double(let y) = b else { Issue.record("NaN lost"); continue }
                #expect(y.isNaN)
            } else {
                #expect(a == b)
            }
        }
    }

    @Test("decimals are stored in binary (tag 13) and come back exactly, field for field")
    func decimals() throws {
        let texts = ["0", "-0.001", "1234.56", "-1234.50", "99999999999999999999999999999999999999", "0.00000000000000000000000000000000000001",
                     "18446744073709551615", "18446744073709551616", "340282366920938463463374607431768211455", "1e127", "1e-128", "65536", "4294967296.5"]
        var values = texts.map { Value.decimal(Decimal(string: $0)!) }
        values.append(.decimal(.nan))
        values.append(.decimal(Decimal(sign: .minus, exponent: -2, significand: 123_456)))
        let o = StoredObject(id: Self.id, version: 1, values: values)
        let bytes = RowCodec.encode(o)
        let back = try RowCodec.decode(bytes, id: Self.id, fieldCount: values.count)
        for (a, b) in zip(values, back.values) {
            guard case .decimal(let x) = a, case .decimal(let y) = b else { Issue.record("not a decimal: \(b)"); continue }
            #expect(withUnsafeBytes(of: x) { Array($0) } == withUnsafeBytes(of: y) { Array($0) })
            #expect(x.isNaN == y.isNaN)
            if !x.isNaN { #expect(x == y && x.description == y.description) }
        }
        // 1234.56: format, version, head (field 0, tag 13), flags, exponent, 3-byte mantissa.
        let one = RowCodec.encode(StoredObject(id: Self.id, version: 1, values: [.decimal(Decimal(string: "1234.56")!)]))
        #expect(DecimalLayout.verified)
        #expect(one.count == 8 && one[2] == 13)
    }

    @Test("DecimalLayout.make writes the layout's bytes: exponent, length and flags, two zero bytes, the mantissa's 16-bit words low first, little-endian")
    func decimalLayoutBytes() throws {
        #expect(DecimalLayout.verified)
        var random = SystemRandomNumberGenerator()
        for n in 0..<2_000 {
            // Mantissas of every width, both halves, each flag and exponent sign.
            let bits = n % 129
            var low = bits == 0 ? 0 : UInt64.random(in: 0...UInt64.max, using: &random)
            var high = UInt64.random(in: 0...UInt64.max, using: &random)
            if bits < 64 { low &= bits == 0 ? 0 : UInt64.max >> UInt64(64 - bits); high = 0 } else if bits < 128 { high &= bits == 64 ? 0 : UInt64.max >> UInt64(128 - bits) }
            let flags = UInt8(n % 4), exponent = Int8.random(in: .min ... .max, using: &random)
            let d = DecimalLayout.make(flags: flags, exponent: exponent, low: low, high: high)
            let length = high != 0 ? 4 + (64 - high.leadingZeroBitCount + 15) / 16 : (64 - low.leadingZeroBitCount + 15) / 16
            var expected: [UInt8] = [UInt8(bitPattern: exponent), UInt8(length) << 4 | (flags & 1) << 3 | (flags & 0b10) << 1, 0, 0]
            for w in 0..<8 {
                let word = w < 4 ? low >> UInt64(16 * w) : high >> UInt64(16 * (w - 4))
                expected.append(UInt8(truncatingIfNeeded: word))
                expected.append(UInt8(truncatingIfNeeded: word >> 8))
            }
            #expect(withUnsafeBytes(of: d) { Array($0) } == expected, "low \(low) high \(high)")
            let back = DecimalLayout.fields(of: d)
            #expect(back.flags == flags && back.exponent == exponent && back.low == low && back.high == high)
        }
    }

    @Test("decimals written as text (tag 3, the earlier form) are still read")
    func textDecimals() throws {
        let text = Array("-1234.5".utf8)
        let bytes: [UInt8] = [1, 1, 0, 3, UInt8(text.count)] + text
        let back = try RowCodec.decode(bytes, id: Self.id, fieldCount: 1)
        #expect(back.values == [.decimal(Decimal(string: "-1234.5")!)])
    }

    @Test("a binary decimal with a mantissa beyond 128 bits or unknown flags is refused with CORRUPT")
    func damagedDecimals() {
        let tooLong: [UInt8] = [1, 1, 0, 13, 0, 0] + [UInt8](repeating: 0xFF, count: 18) + [0x04]
        let flags: [UInt8] = [1, 1, 0, 13, 4, 0, 1]
        for bytes in [tooLong, flags] {
            #expect(throws: KeelError.self) { try RowCodec.decode(bytes, id: Self.id, fieldCount: 1) }
        }
        let max: [UInt8] = [1, 1, 0, 13, 0, 0] + [UInt8](repeating: 0xFF, count: 18) + [0x03]
        #expect((try? RowCodec.decode(max, id: Self.id, fieldCount: 1)) != nil)
    }

    @Test("a row stores only the fields the object has: one field of 200 costs a few bytes")
    func sparse() throws {
        var values = [Value](repeating: .null, count: 200)
        values[150] = .int(3)
        let bytes = RowCodec.encode(StoredObject(id: Self.id, version: 1, values: values))
        #expect(bytes.count == 1 + 1 + 1 + 2 + 1)  // format, version, head, escape varint (2), payload
        let back = try RowCodec.decode(bytes, id: Self.id, fieldCount: 200)
        #expect(back.values == values)
    }

    @Test("rows with any fields unset — the first, runs between, the last ones — decode to every field in place (KEEL_SEED replays)")
    func gaps() throws {
        let seed = SeededRandom.seedFromEnvironment()
        var r = SeededRandom(seed: seed)
        let pool = Self.everyType().values.filter { $0 != .null }
        for round in 0..<500 {
            let count = Int.random(in: 0...40, using: &r)
            let density = [0, 1, 2, 5, 9, 10][Int.random(in: 0..<6, using: &r)]  // in tenths
            let values = (0..<count).map { _ in Int.random(in: 0..<10, using: &r) < density ? pool[Int.random(in: 0..<pool.count, using: &r)] : Value.null }
            let bytes = RowCodec.encode(StoredObject(id: Self.id, version: UInt64(round), values: values))
            let back = try RowCodec.decode(bytes, id: Self.id, fieldCount: count)
            #expect(back.values.count == count, "seed \(seed) round \(round)")
            #expect(back.values.elementsEqual(values) { a, b in a == b || "\(a)" == "\(b)" }, "seed \(seed) round \(round): \(values)")
            #expect(back.version == UInt64(round))
            // Decoded against more fields than the row was written with (an entity that gained
            // properties): the new ones unset.
            let wider = try RowCodec.decode(bytes, id: Self.id, fieldCount: count + 3)
            #expect(wider.values.count == count + 3 && wider.values.suffix(3).allSatisfy { $0 == .null }, "seed \(seed) round \(round)")
        }
    }

    @Test("strings of 0 to 40 bytes: ASCII and non-ASCII round-trip, a byte that is not UTF-8 at any position is refused with CORRUPT")
    func stringBytes() throws {
        // Field 0 the string, field 1 an int after it (the reader's offset moved past the string).
        func row(_ utf8: [UInt8]) -> [UInt8] {
            var out: [UInt8] = [RowCodec.format, 1, RowCodec.Tag.string]
            RowCodec.appendVarint(UInt64(utf8.count), to: &out)
            return out + utf8 + [RowCodec.Tag.int, 14]
        }
        for n in 0...40 {
            let ascii = (0..<n).map { UInt8(0x20 + ($0 * 7) % 95) }
            let back = try RowCodec.decode(row(ascii), id: Self.id, fieldCount: 2)
            #expect(back.values == [.string(String(decoding: ascii, as: UTF8.self)), .int(7)], "n = \(n)")
            guard case .string(let s) = back.values[0] else { continue }
            #expect(Array(s.utf8) == ascii && s.utf8.count == n, "n = \(n)")
            for p in 0..<n {
                // "é" (two bytes) ending at p: valid UTF-8 that is not ASCII, in any of the eight
                // bytes of a word or the tail.
                if p > 0 {
                    var accented = ascii
                    accented[p - 1] = 0xC3
                    accented[p] = 0xA9
                    let decoded = try RowCodec.decode(row(accented), id: Self.id, fieldCount: 2)
                    #expect(decoded.values == [.string(String(decoding: accented, as: UTF8.self)), .int(7)], "n = \(n), é at \(p)")
                }
                // A byte no UTF-8 string holds, and a lone continuation byte (only its high bit set).
                for bad: UInt8 in [0xFF, 0x80] {
                    var damaged = ascii
                    damaged[p] = bad
                    #expect(throws: KeelError.self, "n = \(n), \(bad) at \(p)") { try RowCodec.decode(row(damaged), id: Self.id, fieldCount: 2) }
                }
            }
        }
    }

    @Test("every truncation of a row is refused with CORRUPT")
    func truncations() {
        let o = Self.everyType()
        let bytes = RowCodec.encode(o)
        for n in 0..<bytes.count {
            let cut = Array(bytes[..<n])
            do {
                let back = try RowCodec.decode(cut, id: Self.id, fieldCount: o.values.count)
                // A cut that ends exactly between fields is a valid shorter row.
                #expect(back.values.count == o.values.count)
            } catch {
                #expect(error.code == .corrupt)
            }
        }
    }

    @Test("random damage is refused with CORRUPT or decodes to some row; it never traps (KEEL_SEED replays)")
    func damage() {
        let seed = SeededRandom.seedFromEnvironment()
        var r = SeededRandom(seed: seed)
        let o = Self.everyType()
        let bytes = RowCodec.encode(o)
        var refused = 0
        for _ in 0..<5_000 {
            var damaged = bytes
            for _ in 0..<(1 + Int(r.next() % 3)) {
                damaged[Int(r.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: r.next())
            }
            do {
                _ = try RowCodec.decode(damaged, id: Self.id, fieldCount: o.values.count)
            } catch {
                #expect(error.code == .corrupt, "seed \(seed)")
                refused += 1
            }
        }
        #expect(refused > 0)
        // Fields out of order, beyond the entity, unknown tags, bad format byte.
        let bad: [[UInt8]] = [[3, 1], [1, 1, 5, 1, 2, 1, 3, 1, 2], [1, 1, 99, 1, 2], [1, 1, 0, 77], [1, 1, 0, 4, 5, 0x61],
                              [1, 1, 0, 4, 2, 0xC3, 0x28], [1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]]
        for b in bad {
            #expect(throws: KeelError.self) { try RowCodec.decode(b, id: Self.id, fieldCount: 4) }
        }
    }
}
