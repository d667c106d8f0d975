// Row format 2 (RowCodec.swift): head bytes and to-one references round-trip at every edge;
// format-1 rows (as earlier builds wrote them) still decode byte for byte; damaged format-2 rows
// are refused with CORRUPT, never a trap; projections and raw filters read both formats as the
// full decode does; a folder holding format-1 rows opens, reads, rewrites them in format 2 when
// saved, and verifies clean.

import Foundation
import KeelStorage
import Testing

@testable import KeelModel

@Suite("Row format 2")
struct RowFormatTests {
    static let id = ObjectID(entity: EntityID(3), number: 42)

    static func encode(_ values: [Value], version: UInt64 = 1, format: UInt8 = RowCodec.format) -> [UInt8] {
        var out: [UInt8] = []
        RowCodec.encode(version: version, values: values, into: &out, format: format)
        return out
    }

    /// Equal as stored: NaN doubles compare by bit pattern, decimals by their bytes.
    static func same(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.decimal(let x), .decimal(let y)):
            return withUnsafeBytes(of: x) { Array($0) } == withUnsafeBytes(of: y) { Array($0) }
        default: return a == b
        }
    }

    static func expectSame(_ a: [Value], _ b: [Value], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.count == b.count, comment, sourceLocation: sourceLocation)
        for (i, (x, y)) in zip(a, b).enumerated() where !same(x, y) {
            Issue.record("field \(i): \(x) ≠ \(y) \(comment.map { "\($0)" } ?? "")", sourceLocation: sourceLocation)
        }
    }

    /// Every type at its edges, with `.null` gaps of 14, 15 and 16 fields (the escape starts at
    /// a delta of 16) and a value in the last field.
    static func edgeValues() -> [Value] {
        let json: JSON = ["a": [1, 2.5, "x", nil, true], "b": ["nested": ["deep": [[false, ["k": "ü"]]]]], "big": .int(.min)]
        var values: [Value] = [
            .int(.min), .int(.max), .int(0), .int(-1), .double(.nan), .double(.infinity), .double(-.infinity), .double(-0.0),
            .double(.leastNonzeroMagnitude),
            .decimal(Decimal(string: "99999999999999999999999999999999999999")!),
            .decimal(Decimal(string: "-12345678901234567890123456789012345678")!), .decimal(.nan), .decimal(Decimal(string: "-0.001")!),
            .string(""), .string("héllo\u{0}😀 Straße"), .bool(true), .bool(false), .date(.min), .date(.max), .date(1_600_000_000_123),
            .binary([]), .binary([0, 255, 7]), .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            .uri("https://example.com/x?y=ü"), .json(json), .json(.null),
            .object(ObjectID(entity: EntityID(0), number: 1)), .object(ObjectID(entity: EntityID(127), number: 127)),
            .object(ObjectID(entity: EntityID(128), number: 128)), .object(ObjectID(entity: EntityID(300), number: 1 << 21)),
            .object(ObjectID(entity: EntityID(rawValue: UInt16.max), number: .max)),
        ]
        for gap in [14, 15, 16, 17, 300] {
            values += [Value](repeating: .null, count: gap)
            values.append(.int(Int64(gap)))
        }
        values.append(.objects([]))  // a to-many slot: not stored
        values.append(.string("last"))
        return values
    }

    @Test("every type round-trips in format 2 at its edges: gaps across the escape, references, the last field")
    func roundTrip() throws {
        let values = Self.edgeValues()
        let bytes = Self.encode(values, version: .max)
        #expect(bytes[0] == 2)
        let back = try RowCodec.decode(bytes, id: Self.id, fieldCount: values.count)
        #expect(back.version == .max)
        var expected = values
        expected[expected.count - 2] = .null
        Self.expectSame(back.values, expected)
        // Format 1 reads the same values back from its own bytes.
        let one = Self.encode(values, version: .max, format: 1)
        Self.expectSame(try RowCodec.decode(one, id: Self.id, fieldCount: values.count).values, expected)
        #expect(bytes.count < one.count)
        #expect(try bytes.withUnsafeBytes { try RowCodec.version($0) } == .max)
    }

    @Test("format 2 bytes, byte for byte: heads, escapes, references; no fields at all")
    func layout() throws {
        // Fields 0 (int 5), 1 (true), 17 (string "a": delta 16, escape 0), 40 (reference to
        // entity 2, number 300: delta 23, escape 7).
        var values = [Value](repeating: .null, count: 41)
        values[0] = .int(5)
        values[1] = .bool(true)
        values[17] = .string("a")
        values[40] = .object(ObjectID(entity: EntityID(2), number: 300))
        let bytes = Self.encode(values, version: 3)
        #expect(bytes == [2, 3, 0x01, 10, 0x06, 0xF4, 0, 1, 0x61, 0xFE, 7, 2, 0xAC, 0x02])
        Self.expectSame(try RowCodec.decode(bytes, id: Self.id, fieldCount: 41).values, values)
        // A delta of 15 still fits the head (nibble 14).
        var fifteen = [Value](repeating: .null, count: 15)
        fifteen[14] = .bool(false)
        #expect(Self.encode(fifteen) == [2, 1, 0xE5])
        // No fields: format and version only, in either format.
        let empty = [Value](repeating: .null, count: 4)
        #expect(Self.encode(empty, version: 9) == [2, 9])
        #expect(try RowCodec.decode([2, 9], id: Self.id, fieldCount: 4).values == empty)
        #expect(try RowCodec.decode([1, 9], id: Self.id, fieldCount: 0).values == [])
    }

    @Test("format-1 rows, as earlier builds wrote them, decode exactly as before")
    func formatOne() throws {
        // An Employee-like row as format 1 wrote it: name "Ann", age 30, salary 1234.56, a date,
        // true, and a to-one target as a 10-byte key. (The decimal's flags are 2: compact.)
        let key: [UInt8] = [0, 5, 0, 0, 0, 0, 0, 0, 0x01, 0x2C]
        let literal: [UInt8] = [1, 2, 0, 4, 3, 0x41, 0x6E, 0x6E, 1, 1, 60, 3, 13, 2, 0xFE, 0xC0, 0xC4, 0x07, 4, 7, 0xD0, 0x0F, 5, 6, 6, 12] + key
        var values = [Value](repeating: .null, count: 8)
        values[0] = .string("Ann")
        values[1] = .int(30)
        values[3] = .decimal(Decimal(string: "1234.56")!)
        values[4] = .date(1000)
        values[5] = .bool(true)
        values[6] = .object(ObjectID(entity: EntityID(5), number: 300))
        // The format-1 encoder still writes exactly these bytes, and they decode to the row.
        #expect(Self.encode(values, version: 2, format: 1) == literal)
        let back = try RowCodec.decode(literal, id: Self.id, fieldCount: 8)
        #expect(back.version == 2)
        Self.expectSame(back.values, values)
        // The same row in format 2 is smaller: one head byte a field, a 3-byte reference.
        let two = Self.encode(values, version: 2)
        Self.expectSame(try RowCodec.decode(two, id: Self.id, fieldCount: 8).values, values)
        #expect(two.count == literal.count - 6 - 7)
        // Each format refuses the other's object tag.
        #expect(throws: KeelError.self) { try RowCodec.decode([1, 1, 0, 14, 1, 1], id: Self.id, fieldCount: 1) }
        #expect(throws: KeelError.self) { try RowCodec.decode([2, 1, 0x0C] + key, id: Self.id, fieldCount: 1) }
    }

    @Test("damaged or truncated format-2 rows are refused with CORRUPT or decode to some row; never a trap (KEEL_SEED replays)")
    func damage() {
        let seed = SeededRandom.seedFromEnvironment()
        print("RowFormatTests.damage seed \(seed)")
        var r = SeededRandom(seed: seed)
        let values = Self.edgeValues()
        let bytes = Self.encode(values)
        for n in 0..<bytes.count {
            do {
                _ = try RowCodec.decode(Array(bytes[..<n]), id: Self.id, fieldCount: values.count)
            } catch {
                #expect(error.code == .corrupt)
            }
        }
        var refused = 0
        for _ in 0..<5_000 {
            var damaged = bytes
            for _ in 0..<(1 + Int(r.next() % 3)) {
                damaged[Int(r.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: r.next())
            }
            if r.next() % 4 == 0 { damaged.removeLast(Int(r.next() % UInt64(damaged.count))) }
            do {
                _ = try RowCodec.decode(damaged, id: Self.id, fieldCount: values.count)
            } catch {
                #expect(error.code == .corrupt, "seed \(seed)")
                refused += 1
            }
        }
        #expect(refused > 0, "seed \(seed)")
        let bad: [[UInt8]] = [
            [3, 1],  // unknown row format
            [2, 1, 0x31, 1],  // field 3 of 3
            [2, 1, 0xF1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1],  // escape near 2^64
            [2, 1, 0xF1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 1],  // escape of 2^64 − 1
            [2, 1, 0x00],  // tag 0
            [2, 1, 0x0F],  // tag 15
            [2, 1, 0x0E, 0x80, 0x80, 0x04, 1],  // reference to entity 65536
            [2, 1, 0x0E, 1, 0],  // reference to object number 0
            [2, 1, 0x0E, 1],  // truncated reference
            [2, 1, 0x04, 5, 0x61],  // string beyond the end
            [2, 1, 0x01],  // int without its payload
        ]
        for b in bad {
            #expect(throws: KeelError.self, "\(b)") { try RowCodec.decode(b, id: Self.id, fieldCount: 3) }
        }
    }

    // MARK: Projections and raw filters

    static let employee: Entity = {
        guard let e = PredicateFixture.model.entity(named: "Employee") else { fatalError("no Employee in the sample model") }
        return e
    }()

    /// A random Employee row: text fields text or null (mostly short ASCII, some not), the
    /// others a value of any type or null.
    static func randomRow(_ r: inout SeededRandom) -> [Value] {
        let texts = ["", "Ann", "anna", "Émile", "Straße 5", "*star*", "bob", "ANN", "kalo", "x"]
        return employee.properties.map { property in
            if r.next() % 4 == 0 { return .null }
            if case .attribute(let a) = property, a.type == .string {
                return .string(texts[Int(r.next() % UInt64(texts.count))])
            }
            if case .relationship(let rel) = property, rel.isToMany { return .objects([]) }
            switch r.next() % 6 {
            case 0: return .int(Int64(bitPattern: r.next()))
            case 1: return .decimal(Decimal(Int(truncatingIfNeeded: r.next() % 1_000_000)) / 100)
            case 2: return .date(Int64(bitPattern: r.next() >> 20))
            case 3: return .bool(r.next() % 2 == 0)
            case 4: return .object(ObjectID(entity: EntityID(rawValue: UInt16(truncatingIfNeeded: r.next())), number: 1 + r.next() % 5_000_000))
            default: return .binary([UInt8](repeating: 7, count: Int(r.next() % 20)))
            }
        }
    }

    @Test("projections and raw filters agree with the full decode on random rows of both formats (KEEL_SEED replays)")
    func projectionsAndFilters() throws {
        let seed = SeededRandom.seedFromEnvironment()
        print("RowFormatTests.projectionsAndFilters seed \(seed)")
        var r = SeededRandom(seed: seed)
        let model = PredicateFixture.model
        let entity = Self.employee
        let fieldCount = entity.properties.count
        let graph = MemoryGraph(model: model)
        let predicates = [
            "name CONTAINS[c] 'an'", "name BEGINSWITH 'A'", "address ENDSWITH[cd] 'e 5'", "name !=[c] 'BOB'",
            "name LIKE[c] '*a*' AND address CONTAINS 'S'", "NOT (name ==[c] 'X') OR address BEGINSWITH 'k'", "gender MATCHES 'b.*'",
        ]
        var filters: [(BoundPredicate, RawRowFilter)] = []
        for text in predicates {
            let bound = try PredicateBinder(model: model).bind(text, to: entity.id)
            filters.append((bound, try #require(RawRowFilter(bound, model: model), "\(text) has no raw form")))
        }
        var scratch = [Value](repeating: .int(99), count: fieldCount)
        for _ in 0..<500 {
            let values = Self.randomRow(&r)
            let id = ObjectID(entity: entity.id, number: 1 + r.next() % 1000)
            let wanted = (0..<fieldCount).map { _ in r.next() % 2 == 0 }
            for format in [RowCodec.format1, RowCodec.format] {
                let bytes = Self.encode(values, version: 1 + r.next() % 300, format: format)
                let full = try RowCodec.decode(bytes, id: id, fieldCount: fieldCount)
                try bytes.withUnsafeBytes { b in
                    let part = try RowCodec.decode(b, id: id, fieldCount: fieldCount, wanted: wanted)
                    #expect(part.version == full.version, "seed \(seed)")
                    Self.expectSame(part.values, zip(full.values, wanted).map { $1 ? $0 : .null }, "seed \(seed)")
                    let version = try RowCodec.decode(b, into: &scratch, fieldCount: fieldCount, wanted: wanted)
                    #expect(version == full.version, "seed \(seed)")
                    for f in 0..<fieldCount where wanted[f] {
                        #expect(Self.same(scratch[f], full.values[f]), "seed \(seed) field \(f)")
                    }
                    for (i, (bound, raw)) in filters.enumerated() {
                        var texts = [Range<Int>?](repeating: nil, count: raw.fields.count)
                        let expected = try bound.evaluate(full, in: graph)
                        #expect(try raw.matches(b, fieldCount: fieldCount, texts: &texts) == expected,
                                "seed \(seed) format \(format) \(predicates[i]) on \(full.values)")
                    }
                }
            }
        }
    }

    // MARK: A folder with format-1 rows

    /// Every row of the folder's object trees: (store, tree, key, value).
    static func rows(_ f: StoreFixture) throws -> [(Int, String, [UInt8], [UInt8])] {
        var out: [(Int, String, [UInt8], [UInt8])] = []
        let layout = TreeLayout(model: f.model)
        for name in Set(layout.objects).sorted() {
            for (s, store) in f.store.stores.enumerated() {
                try store.read { txn in
                    guard let tree = try txn.tree(name) else { return }
                    var cursor = try tree.cursor()
                    var valid = try cursor.seekFirst()
                    while valid {
                        out.append((s, name, try cursor.key, try cursor.value()))
                        valid = try cursor.next()
                    }
                }
            }
        }
        return out
    }

    @Test("a folder whose rows are format 1 opens, reads, rewrites a row in format 2 when it is saved, and verifies clean; its mark goes from 2 to 3")
    func formatOneFolder() throws {
        var f = try StoreFixture()
        let d = try f.new("Department"), e1 = try f.new("Employee"), e2 = try f.new("Manager")
        _ = try f.store.save(ChangeSet(changes: [
            .insert(d, values: f.values("Department", ["name": .string("Sales"), "budget": .double(1.5)])),
            .insert(e1, values: f.values("Employee", ["name": .string("Kim"), "salary": .decimal(Decimal(string: "5200.50")!), "department": .object(d)])),
            .insert(e2, values: f.values("Manager", ["name": .string("Lee"), "level": .int(3), "department": .object(d)])),
        ]))
        let before = try [d, e1, e2].map { try #require(try f.object($0)) }
        // Rewrite every row as a format-2 build left it: row format 1, folder format 2.
        let rows = try Self.rows(f)
        #expect(rows.count == 3 && rows.allSatisfy { $0.3.first == RowCodec.format })
        for (s, name, key, value) in rows {
            let id = try #require(KeyEncoding.objectID(key))
            let row = try RowCodec.decode(value, id: id, fieldCount: f.model[id.entity].properties.count)
            try f.store.stores[s].write { txn in
                try txn.openTree(name).put(key: key, value: Self.encode(row.values, version: row.version, format: RowCodec.format1))
            }
        }
        try f.store.stores[0].write { txn in
            try txn.openTree(TreeLayout.meta).put(key: Array(MetaKey.format.utf8), value: KeyEncoding.u64(2))
        }
        func format() throws -> UInt64? {
            try f.store.stores[0].read { txn in try txn.tree(TreeLayout.meta)?.get(Array(MetaKey.format.utf8)) }.flatMap(KeyEncoding.readU64)
        }
        // Read-only: readable, nothing written.
        f.options.storage.readOnly = true
        try f.reopen()
        #expect(try format() == 2)
        for o in before { #expect(try f.object(o.id) == o) }
        #expect(try Self.rows(f).allSatisfy { $0.3.first == RowCodec.format1 })
        // Writable: marked 3 at open; a saved object's row becomes format 2, the others stay.
        f.options.storage.readOnly = false
        try f.reopen()
        #expect(try format() == 3)
        for o in before { #expect(try f.object(o.id) == o) }
        try f.expectConsistent()
        _ = try f.store.save(ChangeSet(changes: [f.set(e1, "age", .int(40))], originals: try f.original(e1)))
        let after = try Self.rows(f)
        for (_, _, key, value) in after {
            #expect(value.first == (KeyEncoding.objectID(key) == e1 ? RowCodec.format : RowCodec.format1))
        }
        #expect(try f.value(e1, "age") == .int(40))
        #expect(try f.value(e1, "department") == .object(d))
        #expect(try f.object(e1)?.version == 2)
        #expect(try f.object(e2) == before[2])
        try f.reopen()
        try f.expectConsistent()
        #expect(try f.value(e1, "salary") == .decimal(Decimal(string: "5200.5")!))
        // A build that reads only up to format 2 would refuse this folder by its mark (see
        // HomeStoreSaveTests.formatVersions for the refusal of a newer mark).
        #expect(ObjectStore.formatVersion == 3)
    }
}
