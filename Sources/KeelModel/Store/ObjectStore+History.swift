// History: one record per committed save in the primary store's `$history` (key: save id u64
// BE), written in the save's own commit; observers told after every commit; reading and pruning.
//
// HISTORY RECORD (value)
// | size   | field                                                              |
// | 1      | format, 0x01                                                       |
// | varint | time: zigzag milliseconds since 1970 UTC                           |
// | varint | inserted count, then each object key (10 bytes)                    |
// | varint | updated count, then each: object key (10), varint name count,      |
// |        |   each changed property name (varint length, UTF-8)                |
// | varint | deleted count, then each object key (10)                           |

import Foundation
import KeelStorage

/// A registration returned by `addObserver`; pass it to `removeObserver`.
public struct ObserverToken: Hashable, Sendable {
    let rawValue: UInt64
}

/// A committed save's record waiting until it, and every save committed before it, is durable.
struct PendingNotice {
    var record: HistoryRecord
    var durable = false
}

/// The observers of an object store (guarded by `ObjectStore.observers`).
struct ObserverTable {
    var next: UInt64 = 1
    var entries: [UInt64: @Sendable (HistoryRecord) -> Void] = [:]
}

enum HistoryCodec {
    static func encode(_ r: HistoryRecord, model: Model) -> [UInt8] {
        var out: [UInt8] = [1]
        RowCodec.appendVarint(RowCodec.zigzag(r.time), to: &out)
        RowCodec.appendVarint(UInt64(r.inserted.count), to: &out)
        for id in r.inserted { KeyEncoding.appendObjectKey(id, to: &out) }
        RowCodec.appendVarint(UInt64(r.updated.count), to: &out)
        for (id, names) in r.updated.sorted(by: { $0.key < $1.key }) {
            KeyEncoding.appendObjectKey(id, to: &out)
            RowCodec.appendVarint(UInt64(names.count), to: &out)
            for n in names { RowCodec.appendBytes(n.utf8, to: &out) }
        }
        RowCodec.appendVarint(UInt64(r.deleted.count), to: &out)
        for id in r.deleted { KeyEncoding.appendObjectKey(id, to: &out) }
        return out
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, saveID: SaveID) throws(KeelError) -> HistoryRecord {
        var r = ByteReader(bytes: bytes)
        guard try r.byte() == 1 else { throw r.damage("unknown history format") }
        let time = RowCodec.unzigzag(try r.varint())
        func id(_ r: inout ByteReader) throws(KeelError) -> ObjectID {
            guard let id = KeyEncoding.objectID(r.bytes, at: r.offset) else { throw r.damage("bad object key") }
            r.offset += KeyEncoding.objectKeySize
            return id
        }
        var inserted: [ObjectID] = []
        for _ in 0..<(try r.length()) { inserted.append(try id(&r)) }
        var updated: [ObjectID: [String]] = [:]
        for _ in 0..<(try r.length()) {
            let x = try id(&r)
            var names: [String] = []
            for _ in 0..<(try r.length()) { names.append(try r.string()) }
            updated[x] = names
        }
        var deleted: [ObjectID] = []
        for _ in 0..<(try r.length()) { deleted.append(try id(&r)) }
        guard r.atEnd else { throw r.damage("trailing bytes") }
        return HistoryRecord(saveID: saveID, time: time, inserted: inserted, updated: updated, deleted: deleted)
    }
}

extension ObjectStore {
    /// Calls `body` with the record of every save committed from now on, in commit order, once the
    /// save is durable, on a saving thread, under the notice lock (one observer call at a time):
    /// keep it short, and never save, run a batch or prune history from it (the save would wait
    /// for the lock its observer runs under). Snapshots, reads, `history` and `lastSaveID` are fine.
    public func addObserver(_ body: @escaping @Sendable (HistoryRecord) -> Void) -> ObserverToken {
        observers.withLock { table in
            let token = ObserverToken(rawValue: table.next)
            table.next += 1
            table.entries[token.rawValue] = body
            return token
        }
    }

    public func removeObserver(_ token: ObserverToken) {
        _ = observers.withLock { $0.entries.removeValue(forKey: token.rawValue) }
    }

    /// Queues the record of a save just committed (under the save lock, so in commit order).
    func queueNotice(_ record: HistoryRecord) {
        notices.withLock { $0.append(PendingNotice(record: record)) }
    }

    /// Settles the notice of save `saveID` once its saver knows the outcome — durable, or its
    /// commit's sync failed (the store is fail-stopped; observers never hear of it) — then tells
    /// the observers of every save at the front of the queue that is durable, in commit order.
    /// Saves of different stores become durable in any order (each store syncs its own log), so
    /// a durable save waits here for the saves committed before it.
    func settleNotice(_ saveID: SaveID, durable: Bool) {
        notices.withLock { queue in
            if let i = queue.firstIndex(where: { $0.record.saveID == saveID }) {
                if durable { queue[i].durable = true } else { queue.remove(at: i) }
            }
            var delivered = 0
            while delivered < queue.count, queue[delivered].durable { delivered += 1 }
            guard delivered > 0 else { return }
            let list = observers.withLock { Array($0.entries.sorted { $0.key < $1.key }.map(\.value)) }
            for notice in queue[..<delivered] {
                for body in list { body(notice.record) }
            }
            queue.removeFirst(delivered)
        }
    }

    /// The history records of saves after `after`, oldest first, at most `limit`: each store's
    /// `$history` (a single-store save keeps its record in its store) read in one snapshot of
    /// them all and merged by save id.
    public func history(after: SaveID, limit: Int? = nil) throws(KeelError) -> [HistoryRecord] {
        let limit = limit ?? .max
        guard after.rawValue < .max, limit > 0 else { return [] }
        let snapshot = try self.snapshot()
        defer { snapshot.close() }
        var out: [HistoryRecord] = []
        for s in stores.indices {
            let records = try snapshot.read(store: s) { (txn) throws(KeelError) -> [HistoryRecord] in
                try untyped { () throws -> [HistoryRecord] in
                    guard let tree = try txn.tree(TreeLayout.history) else { return [] }
                    var found: [HistoryRecord] = []
                    var cursor = try tree.cursor()
                    var valid = try cursor.seek(to: KeyEncoding.u64(after.rawValue + 1))
                    while valid, found.count < limit {
                        let record = try cursor.withEntry { k, v in
                            Result { () throws(KeelError) -> HistoryRecord in
                                guard k.count == 8 else { throw KeelError(.corrupt, "damaged history key") }
                                return try HistoryCodec.decode(v, saveID: SaveID(rawValue: KeyEncoding.readU64(k, at: 0)))
                            }
                        }
                        found.append(try record.get())
                        valid = try cursor.next()
                    }
                    return found
                }
            }
            out.append(contentsOf: records)
        }
        if stores.count > 1 { out.sort { $0.saveID < $1.saveID } }
        return Array(out.prefix(limit))
    }

    /// Deletes, in every store, the history records of all but the newest `keeping` saves;
    /// returns how many were deleted.
    @discardableResult
    public func pruneHistory(keeping: Int) throws(KeelError) -> Int {
        try saveLock.withLock { (counter: inout SaveCounter) throws(KeelError) -> Int in
            let bound = Self.pruneBound(last: counter.last, keeping: keeping)
            var deleted = 0
            for store in stores {
                deleted += try untyped { () throws -> Int in
                    try store.write { txn in
                        guard let tree = try txn.tree(TreeLayout.history) else { return 0 }
                        let doomed = try Self.historyKeys(in: tree, through: bound)
                        for key in doomed { try tree.delete(key: key) }
                        return doomed.count
                    }
                }
            }
            return deleted
        }
    }

    /// The highest save id whose record goes when the newest `keeping` are kept.
    static func pruneBound(last: UInt64, keeping: Int) -> UInt64 {
        let keep = UInt64(max(keeping, 0))
        return last > keep ? last - keep : 0
    }

    /// The keys of the history records at or below save id `bound`, oldest first.
    static func historyKeys(in tree: Tree, through bound: UInt64) throws(KeelError) -> [[UInt8]] {
        try engine { () throws(StorageError) -> [[UInt8]] in
            var keys: [[UInt8]] = []
            var cursor = try tree.cursor()
            var valid = try cursor.seekFirst()
            while valid {
                let key = try cursor.key
                guard let id = KeyEncoding.readU64(key), id <= bound else { break }
                keys.append(key)
                valid = try cursor.next()
            }
            return keys
        }
    }

    static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}
