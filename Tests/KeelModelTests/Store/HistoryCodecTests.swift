// The history record's byte format (ObjectStore+History.swift): format 2 writes ID lists as runs
// of consecutive numbers, reads back exactly what it wrote (in key order), still reads format 1
// records, and answers damaged bytes with CORRUPT — never a trap.

import Testing

@testable import KeelModel

@Suite("History record format")
struct HistoryCodecTests {
    static let model = TestModels.company()

    static func ids(_ entity: UInt16, _ numbers: [UInt64]) -> [ObjectID] {
        numbers.map { ObjectID(entity: EntityID(rawValue: entity), number: $0) }
    }

    static func roundTrip(_ record: HistoryRecord) throws -> HistoryRecord {
        let bytes = HistoryCodec.encode(record, model: model)
        return try bytes.withUnsafeBytes { try HistoryCodec.decode($0, saveID: record.saveID) }
    }

    @Test("ID lists come back exactly, in key order: consecutive runs, scattered numbers, several entities, empty", arguments: [
        ids(1, Array(1...10_000)),
        ids(1, [5, 6, 7, 100, 101, 9_000_000_000, UInt64.max - 1, UInt64.max]),
        ids(0, [1]) + ids(1, [1, 2, 3]) + ids(4, [2, 4, 6, 7, 8]) + ids(300, [42]),
        [],
    ])
    func lists(_ list: [ObjectID]) throws {
        let record = HistoryRecord(
            saveID: SaveID(rawValue: 9), time: -12_345, inserted: list, updated: [list.first ?? ObjectID(entity: EntityID(1), number: 1): ["name", "age"]],
            deleted: list.reversed())
        let back = try Self.roundTrip(record)
        #expect(back.inserted == list)
        #expect(back.deleted == list, "the decoded list is in key order")
        #expect(back.updated == record.updated)
        #expect(back.time == -12_345)
    }

    /// An ID list as format 2 lays it out, written the plain way (the runs gathered first): the
    /// codec's own writer must give these bytes exactly.
    static func referenceIDList(_ ids: [ObjectID]) -> [UInt8] {
        var runs: [(entity: UInt16, first: UInt64, last: UInt64)] = []
        for id in ids.sorted() {
            if let run = runs.last, run.entity == id.entity.rawValue, id.number <= run.last { continue }
            if let run = runs.last, run.entity == id.entity.rawValue, id.number - run.last == 1 {
                runs[runs.count - 1].last = id.number
            } else {
                runs.append((id.entity.rawValue, id.number, id.number))
            }
        }
        var out: [UInt8] = []
        RowCodec.appendVarint(UInt64(runs.count), to: &out)
        for (i, run) in runs.enumerated() {
            RowCodec.appendVarint(UInt64(run.entity), to: &out)
            if i > 0, runs[i - 1].entity == run.entity {
                RowCodec.appendVarint(run.first - runs[i - 1].last - 1, to: &out)
            } else {
                RowCodec.appendVarint(run.first, to: &out)
            }
            RowCodec.appendVarint(run.last - run.first + 1, to: &out)
        }
        return out
    }

    @Test("ID lists are written byte for byte as laid out: runs, gaps, repeats, several entities, the largest number")
    func listBytes() {
        func written(_ ids: [ObjectID]) -> [UInt8] {
            var out: [UInt8] = []
            HistoryCodec.appendIDList(ids, to: &out)
            return out
        }
        // Runs (1: 5…7), (1: 100), (4: 2…3): count, then entity · first (a gap after the entity's
        // previous run) · length.
        #expect(written(Self.ids(1, [5, 6, 7, 100]) + Self.ids(4, [2, 2, 3])) == [3, 1, 5, 3, 1, 92, 1, 4, 2, 2])
        #expect(written([]) == [0])
        #expect(written(Self.ids(4, [3, 2]) + Self.ids(1, [7, 7])) == [2, 1, 7, 1, 4, 2, 2])
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var list: [ObjectID] = []
            for _ in 0..<Int.random(in: 0...40, using: &generator) {
                let entity = UInt16.random(in: 0...3, using: &generator)
                let number: UInt64 = Bool.random(using: &generator)
                    ? UInt64.max - UInt64.random(in: 0...5, using: &generator) : UInt64.random(in: 1...30, using: &generator)
                list.append(ObjectID(entity: EntityID(rawValue: entity), number: number))
            }
            if Bool.random(using: &generator) { list.sort() }
            #expect(written(list) == Self.referenceIDList(list), "\(list)")
        }
    }

    @Test("10,000 consecutive inserts take a few bytes; scattered ones at most 5 bytes each")
    func compact() {
        let consecutive = HistoryRecord(saveID: SaveID(rawValue: 1), time: 0, inserted: Self.ids(1, Array(1...10_000)), updated: [:], deleted: [])
        #expect(HistoryCodec.encode(consecutive, model: Self.model).count < 16)
        let scattered = Self.ids(1, (0..<10_000).map { UInt64($0) * 97 + 5 })
        let record = HistoryRecord(saveID: SaveID(rawValue: 1), time: 0, inserted: [], updated: [:], deleted: scattered)
        #expect(HistoryCodec.encode(record, model: Self.model).count <= 10_000 * 5 + 16)
    }

    @Test("a format 1 record (10-byte object keys) is still read")
    func formatOne() throws {
        var bytes: [UInt8] = [1]
        RowCodec.appendVarint(RowCodec.zigzag(77), to: &bytes)
        let inserted = Self.ids(2, [3, 9])
        RowCodec.appendVarint(2, to: &bytes)
        for id in inserted { KeyEncoding.appendObjectKey(id, to: &bytes) }
        RowCodec.appendVarint(1, to: &bytes)
        KeyEncoding.appendObjectKey(inserted[0], to: &bytes)
        RowCodec.appendVarint(1, to: &bytes)
        RowCodec.appendBytes("name".utf8, to: &bytes)
        RowCodec.appendVarint(1, to: &bytes)
        KeyEncoding.appendObjectKey(inserted[1], to: &bytes)
        let record = try bytes.withUnsafeBytes { try HistoryCodec.decode($0, saveID: SaveID(rawValue: 4)) }
        #expect(record.inserted == inserted)
        #expect(record.updated == [inserted[0]: ["name"]])
        #expect(record.deleted == [inserted[1]])
        #expect(record.time == 77)
    }

    @Test("damaged records are CORRUPT: every truncation, a zero number, a run past the largest number, an unknown format")
    func damaged() throws {
        let record = HistoryRecord(
            saveID: SaveID(rawValue: 1), time: 5, inserted: Self.ids(1, [1, 2, 3, 10]), updated: [Self.ids(1, [2])[0]: ["name"]],
            deleted: Self.ids(3, [7]))
        let good = HistoryCodec.encode(record, model: Self.model)
        for n in 0..<good.count {
            let prefix = Array(good[..<n])
            #expect(throws: KeelError.self, "prefix of \(n) bytes") {
                _ = try prefix.withUnsafeBytes { try HistoryCodec.decode($0, saveID: SaveID(rawValue: 1)) }
            }
        }
        func list(_ fields: [UInt64]) -> [UInt8] {
            var bytes: [UInt8] = [2, 0]
            for f in fields { RowCodec.appendVarint(f, to: &bytes) }
            bytes += [0, 0]  // no updated, no deleted
            return bytes
        }
        for bad in [list([1, 1, 0, 1]), list([1, 1, 0, 0]), list([1, 1, UInt64.max, 2]), list([1, 70_000, 1, 1]), [9, 0, 0, 0, 0]] {
            #expect(throws: KeelError.self, "\(bad)") {
                _ = try bad.withUnsafeBytes { try HistoryCodec.decode($0, saveID: SaveID(rawValue: 1)) }
            }
        }
        #expect(try list([1, 1, 5, 2]).withUnsafeBytes { try HistoryCodec.decode($0, saveID: SaveID(rawValue: 1)) }.inserted == Self.ids(1, [5, 6]))
    }
}
