// The model of the compaction tests: one entity of plain rows with an index, so that a million
// of them insert and delete quickly.

import KeelStorage
import Testing

@testable import KeelModel

enum ItemModel {
    static let text = """
        { "name": "Items", "version": 1, "entities": [
          { "name": "Item", "attributes": [
              { "name": "number", "type": "int64", "optional": false, "indexed": true },
              { "name": "label", "type": "string" },
              { "name": "payload", "type": "string" } ] } ] }
        """

    static let model = load(text)

    static var item: Entity { model.entity(named: "Item")! }  // safe: in the text above

    /// Inserts `count` items (saves of 10,000), then deletes nine in ten (those whose number is
    /// not a multiple of 10). Returns the IDs left.
    static func fillAndThin(_ store: ObjectStore, count: Int) throws -> [ObjectID] {
        let (number, label, payload) = (item.field(named: "number")!, item.field(named: "label")!, item.field(named: "payload")!)  // safe: the model above
        var kept: [ObjectID] = []
        var doomed: [ObjectID] = []
        var start = 0
        while start < count {
            var changes: [Change] = []
            for n in start..<min(start + 10_000, count) {
                let id = try store.newObjectID(for: item.id)
                changes.append(.insert(id, values: [
                    number: .int(Int64(n)), label: .string("item \(n)"),
                    payload: .string(String(repeating: Character(Unicode.Scalar(UInt8(97 + n % 26))), count: 60 + n % 40)),
                ]))
                if n % 10 == 0 { kept.append(id) } else { doomed.append(id) }
            }
            _ = try store.save(ChangeSet(changes: changes))
            start += 10_000
        }
        var i = 0
        while i < doomed.count {
            _ = try store.save(ChangeSet(changes: doomed[i..<min(i + 10_000, doomed.count)].map { Change.delete($0) }))
            i += 10_000
        }
        return kept
    }

    /// Every object's values, by ID.
    static func contents(_ store: ObjectStore) throws -> [ObjectID: [Value]] {
        let snapshot = try store.snapshot()
        defer { snapshot.close() }
        var out: [ObjectID: [Value]] = [:]
        try snapshot.scan(item.id, includeSubentities: false) { (o) throws(KeelError) -> Bool in
            out[o.id] = o.values
            return true
        }
        return out
    }

    /// The bytes the live entries of every tree take as B+tree cells (TreeTally.cellBytes).
    static func liveBytes(_ store: ObjectStore) throws -> UInt64 {
        var total: UInt64 = 0
        for file in store.stores { total += try file.contents().values.reduce(0) { $0 + $1.cellBytes } }
        return total
    }
}
