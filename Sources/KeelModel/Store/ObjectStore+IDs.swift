// Object numbers: counted per concrete entity, handed out from blocks reserved by a durable
// write of `$meta ids/<Entity>` in the entity's store (Decision 0004). A number handed out is
// never handed out again: after a restart numbers start above the reserved mark, so the rest of
// a block that was in use is skipped, never reused.

import KeelStorage

extension ObjectStore {
    /// A new, permanent ID for an object of `entity`. Refuses abstract entities (BAD_REQUEST).
    public func newObjectID(for entity: EntityID) throws(KeelError) -> ObjectID {
        ObjectID(entity: entity, number: try reserveNumbers(for: entity, count: 1))
    }

    /// Reserves `count` consecutive numbers; returns the first.
    func reserveNumbers(for entity: EntityID, count: Int) throws(KeelError) -> UInt64 {
        guard entity.index < model.entities.count else {
            throw KeelError(.noSuchEntity, "no entity #\(entity.rawValue) in model \(model.name)")
        }
        let e = model[entity]
        guard !e.isAbstract else {
            throw KeelError(.badRequest, "\(e.name) is abstract: insert one of its sub-entities")
        }
        let store = stores[storeIndex(of: entity)]
        let block = max(options.idBlockSize, 1)
        return try ids.withLock { (table: inout [IDRange]) throws(KeelError) -> UInt64 in
            var range = table[entity.index]
            let last = range.next + UInt64(count) - 1
            if last > range.reserved {
                let mark = (last / block + 1) * block
                try untyped {
                    try store.write { txn in
                        try txn.openTree(TreeLayout.meta).put(key: Array(TreeLayout.ids(e).utf8), value: KeyEncoding.u64(mark))
                    }
                }
                range.reserved = mark
            }
            let first = range.next
            range.next = last + 1
            table[entity.index] = range
            return first
        }
    }

    /// The reserved marks, read before a save takes the engine's writer locks (lock order).
    func reservedMarks() -> [UInt64] {
        ids.withLock { $0.map { $0.next - 1 } }
    }
}
