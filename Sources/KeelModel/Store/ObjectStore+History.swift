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
        notices.withLock { $0.append(record) }
    }

    /// Tells the observers of every queued save up to `saveID`, which is durable — and with it
    /// every save before it, since every save commits in the primary's log — in commit order.
    func deliverNotices(through saveID: SaveID) {
        notices.withLock { queue in
            var delivered = 0
            while delivered < queue.count, queue[delivered].saveID <= saveID { delivered += 1 }
            guard delivered > 0 else { return }
            let list = observers.withLock { Array($0.entries.sorted { $0.key < $1.key }.map(\.value)) }
            for record in queue[..<delivered] {
                for body in list { body(record) }
            }
            queue.removeFirst(delivered)
        }
    }

    /// The history records of saves after `after`, oldest first, at most `limit`.
    public func history(after: SaveID, limit: Int? = nil) throws(KeelError) -> [HistoryRecord] {
        try untyped { () throws -> [HistoryRecord] in
            try stores[0].read { txn in
                guard let tree = try txn.tree(TreeLayout.history) else { return [] }
                var out: [HistoryRecord] = []
                var cursor = try tree.cursor()
                var valid = try cursor.seek(to: KeyEncoding.u64(after.rawValue &+ 1))
                if after.rawValue == .max { valid = false }
                while valid, out.count < (limit ?? .max) {
                    let record = try cursor.withEntry { k, v in
                        Result { () throws(KeelError) -> HistoryRecord in
                            guard k.count == 8 else { throw KeelError(.corrupt, "damaged history key") }
                            return try HistoryCodec.decode(v, saveID: SaveID(rawValue: KeyEncoding.readU64(k, at: 0)))
                        }
                    }
                    out.append(try record.get())
                    valid = try cursor.next()
                }
                return out
            }
        }
    }

    /// Deletes all but the newest `keeping` history records; returns how many were deleted.
    @discardableResult
    public func pruneHistory(keeping: Int) throws(KeelError) -> Int {
        try saveLock.withLock { (counter: inout SaveCounter) throws(KeelError) -> Int in
            let last = counter.last
            return try untyped { () throws -> Int in
                try stores[0].write { txn in try Self.prune(txn, last: last, keeping: keeping) }
            }
        }
    }

    /// Deletes the records at or below `last - keeping`.
    static func prune(_ txn: WriteTransaction, last: UInt64, keeping: Int) throws -> Int {
        guard let tree = try txn.tree(TreeLayout.history) else { return 0 }
        let bound = last > UInt64(max(keeping, 0)) ? last - UInt64(max(keeping, 0)) : 0
        var doomed: [[UInt8]] = []
        var cursor = try tree.cursor()
        var valid = try cursor.seekFirst()
        while valid {
            let key = try cursor.key
            guard let id = KeyEncoding.readU64(key), id <= bound else { break }
            doomed.append(key)
            valid = try cursor.next()
        }
        for key in doomed { try tree.delete(key: key) }
        return doomed.count
    }

    static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}
