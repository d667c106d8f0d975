// History: one record per committed save, in the `$history` tree of the save's home store (the
// store of a single-store save; the first configuration a multi-store save touches) — key: save
// id u64 BE — written in the save's own commit; observers told once a save and every save before
// it are durable; reading (merged across stores) and pruning.
//
// HISTORY RECORD (value), format 2 (written since object-store format 2)
// | size    | field                                                             |
// | 1       | format, 0x02                                                      |
// | varint  | time: zigzag milliseconds since 1970 UTC                          |
// | ID LIST | inserted                                                          |
// | varint  | updated count, then each: object key (10), varint name count,     |
// |         |   each changed property name (varint length, UTF-8)               |
// | ID LIST | deleted                                                           |
//
// ID LIST: the IDs in key order (entity, then number) as runs of consecutive numbers:
// | varint  | run count                                                         |
// |         | each run:                                                         |
// | varint  |   entity id                                                       |
// | varint  |   first number − (the previous run's last number + 1) when the previous run is of
// |         |   the same entity, else the first number itself (numbers start at 1)  |
// | varint  |   length (≥ 1)                                                    |
// 10,000 inserted objects with consecutive numbers are one run (a few bytes, where format 1
// spent 100 KB and an overflow chain); scattered IDs cost 3–5 bytes each.
//
// Format 1 (still read): the same fields with each ID list as a varint count followed by each
// object key (10 bytes), format byte 0x01.
//
// THE SAVE COUNTER: a store's newest history key is the last save id whose home it was; a save
// writes nothing else for it (a single-store save dirties its rows' pages and the history leaf,
// no `$meta` page). When pruning removes a store's newest record, the same transaction writes its
// id to `$meta save`. The last save id of a store is the higher of the two (`lastSave`), the
// folder's the highest of its stores'. Format-1 folders kept it in the primary's `$meta save`,
// which the same rule reads.

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
/// The store's observers in the order they were added (tokens ascend, so the array stays sorted
/// by token without sorting it at each notice).
struct ObserverTable {
    typealias Body = @Sendable (HistoryRecord) -> Void
    private var next: UInt64 = 1
    private(set) var entries: [(token: UInt64, body: Body)] = []

    mutating func add(_ body: @escaping Body) -> ObserverToken {
        let token = ObserverToken(rawValue: next)
        next += 1
        entries.append((token.rawValue, body))
        return token
    }

    mutating func remove(_ token: ObserverToken) {
        if let i = entries.firstIndex(where: { $0.token == token.rawValue }) { entries.remove(at: i) }
    }
}

enum HistoryCodec {
    static func encode(_ r: HistoryRecord, model: Model) -> [UInt8] {
        var out: [UInt8] = [2]
        RowCodec.appendVarint(RowCodec.zigzag(r.time), to: &out)
        appendIDList(r.inserted, to: &out)
        RowCodec.appendVarint(UInt64(r.updated.count), to: &out)
        for (id, names) in r.updated.sorted(by: { $0.key < $1.key }) {
            KeyEncoding.appendObjectKey(id, to: &out)
            RowCodec.appendVarint(UInt64(names.count), to: &out)
            for n in names { RowCodec.appendBytes(n.utf8, to: &out) }
        }
        appendIDList(r.deleted, to: &out)
        return out
    }

    /// An ID LIST (layout above). The IDs are put in key order first (a save's lists already are).
    static func appendIDList(_ ids: [ObjectID], to out: inout [UInt8]) {
        var sorted = true
        for i in ids.indices.dropFirst() where !(ids[i - 1] < ids[i]) {
            sorted = false
            break
        }
        let list = sorted ? ids : ids.sorted()
        var runs = 0
        forEachRun(list) { _, _, _ in runs += 1 }
        RowCodec.appendVarint(UInt64(runs), to: &out)
        var previous: (entity: UInt16, last: UInt64)?
        forEachRun(list) { entity, first, last in
            RowCodec.appendVarint(UInt64(entity), to: &out)
            if let previous, previous.entity == entity {
                RowCodec.appendVarint(first - previous.last - 1, to: &out)
            } else {
                RowCodec.appendVarint(first, to: &out)
            }
            RowCodec.appendVarint(last - first + 1, to: &out)
            previous = (entity, last)
        }
    }

    /// Calls `body` with each run of `list` (in key order) by its entity and its first and last
    /// number (inclusive: a run may end at UInt64.max); a repeated ID is in its run once. Walked
    /// twice by `appendIDList` (the count comes first) rather than gathered into an array.
    private static func forEachRun(_ list: [ObjectID], _ body: (_ entity: UInt16, _ first: UInt64, _ last: UInt64) -> Void) {
        guard let head = list.first else { return }
        var entity = head.entity.rawValue
        var first = head.number
        var last = head.number
        for id in list.dropFirst() {
            if id.entity.rawValue == entity, id.number <= last { continue }  // a repeated ID
            if id.entity.rawValue == entity, id.number - last == 1 {
                last = id.number
                continue
            }
            body(entity, first, last)
            entity = id.entity.rawValue
            first = id.number
            last = id.number
        }
        body(entity, first, last)
    }

    static func readIDList(_ r: inout ByteReader) throws(KeelError) -> [ObjectID] {
        let runs = try r.length()  // each run takes at least three bytes: a count within the rest
        var ids: [ObjectID] = []
        var previous: (entity: UInt64, last: UInt64)?
        for _ in 0..<runs {
            let entity = try r.varint()
            guard entity <= UInt64(UInt16.max) else { throw r.damage("entity id \(entity) out of range") }
            let gap = try r.varint()
            let length = try r.varint()
            var first = gap
            if let previous, previous.entity == entity {
                let (next, o1) = previous.last.addingReportingOverflow(1)
                let (sum, o2) = next.addingReportingOverflow(gap)
                guard !o1, !o2 else { throw r.damage("ID run past the largest number") }
                first = sum
            }
            guard first > 0, length > 0, length - 1 <= UInt64.max - first else { throw r.damage("bad ID run") }
            guard UInt64(ids.count) + length <= 1 << 28 else { throw r.damage("ID list too long") }
            let last = first + (length - 1)
            for n in first...last { ids.append(ObjectID(entity: EntityID(rawValue: UInt16(entity)), number: n)) }
            previous = (entity, last)
        }
        return ids
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, saveID: SaveID) throws(KeelError) -> HistoryRecord {
        var r = ByteReader(bytes: bytes)
        let format = try r.byte()
        guard format == 1 || format == 2 else { throw r.damage("unknown history format \(format)") }
        let time = RowCodec.unzigzag(try r.varint())
        func id(_ r: inout ByteReader) throws(KeelError) -> ObjectID {
            guard let id = KeyEncoding.objectID(r.bytes, at: r.offset) else { throw r.damage("bad object key") }
            r.offset += KeyEncoding.objectKeySize
            return id
        }
        func list(_ r: inout ByteReader) throws(KeelError) -> [ObjectID] {
            if format == 2 { return try readIDList(&r) }
            var ids: [ObjectID] = []
            for _ in 0..<(try r.length()) { ids.append(try id(&r)) }
            return ids
        }
        let inserted = try list(&r)
        var updated: [ObjectID: [String]] = [:]
        for _ in 0..<(try r.length()) {
            let x = try id(&r)
            var names: [String] = []
            for _ in 0..<(try r.length()) { names.append(try r.string()) }
            updated[x] = names
        }
        let deleted = try list(&r)
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
        observers.withLock { $0.add(body) }
    }

    public func removeObserver(_ token: ObserverToken) {
        observers.withLock { $0.remove(token) }
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
        settleNotices(CollectionOfOne(saveID), durable: durable)
    }

    /// `settleNotice` of each of `saveIDs` (a save group's, in commit order), under one take of
    /// the notice lock: the observers hear the same saves in the same order as from one call per
    /// save.
    func settleNotices(_ saveIDs: some Collection<SaveID>, durable: Bool) {
        guard !saveIDs.isEmpty else { return }
        notices.withLock { queue in
            for saveID in saveIDs {
                if let i = queue.firstIndex(where: { $0.record.saveID == saveID }) {
                    if durable { queue[i].durable = true } else { queue.remove(at: i) }
                }
            }
            var delivered = 0
            while delivered < queue.count, queue[delivered].durable { delivered += 1 }
            guard delivered > 0 else { return }
            let list = observers.withLock { $0.entries.map(\.body) }
            for notice in queue[..<delivered] {
                for body in list { body(notice.record) }
            }
            queue.removeFirst(delivered)
        }
    }

    /// The history records of saves after `after`, oldest first, at most `limit`: each store's
    /// `$history` (a single-store save keeps its record in its store) read in one snapshot of
    /// them all and merged by save id. `EXPIRED` when a record after `after` was pruned (the
    /// answer would have a gap): the caller must read the objects again.
    public func history(after: SaveID, limit: Int? = nil) throws(KeelError) -> [HistoryRecord] {
        let limit = limit ?? .max
        guard after.rawValue < .max, limit > 0 else { return [] }
        let snapshot = try self.snapshot()
        defer { snapshot.close() }
        var pruned: UInt64 = 0
        for s in stores.indices {
            pruned = max(pruned, try snapshot.read(store: s) { (txn) throws(KeelError) -> UInt64 in
                try untyped { () throws -> UInt64 in
                    try txn.tree(TreeLayout.meta)?.get(Array(MetaKey.historyPruned.utf8)).flatMap(KeyEncoding.readU64) ?? 0
                }
            })
        }
        guard pruned <= after.rawValue else {
            let last = try snapshot.lastSaveID().rawValue
            throw KeelError(
                .expired,
                "the history after transaction \(after.rawValue) is gone (records through \(pruned) were pruned): read the objects again, then follow the history after \(last)",
                details: ["after": .int(Int64(after.rawValue)), "prunedThrough": .int(Int64(pruned)), "last": .int(Int64(last))])
        }
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
            try deleteHistoryLocked(through: Self.pruneBound(last: counter.last, keeping: keeping))
        }
    }

    /// Deletes, in every store, the history records of the saves through `txn` (Core Data's
    /// `NSPersistentHistoryChangeRequest.deleteHistory(before:)`, inclusive as `history(after:)`
    /// is exclusive: a reader that has seen through `txn` deletes through it). A `txn` past the
    /// last save deletes through the last one — never beyond it, so a save still to come is never
    /// marked pruned. HISTORY after a transaction before `txn` is `EXPIRED` from then on. Returns
    /// how many records were deleted and the transaction the history is now pruned through.
    @discardableResult
    public func deleteHistory(through txn: SaveID) throws(KeelError) -> (deleted: Int, through: SaveID) {
        try saveLock.withLock { (counter: inout SaveCounter) throws(KeelError) -> (deleted: Int, through: SaveID) in
            let bound = min(txn.rawValue, counter.last)
            return (try deleteHistoryLocked(through: bound), SaveID(rawValue: bound))
        }
    }

    /// The body of `pruneHistory` and `deleteHistory`, under the save lock: each store's records
    /// through `bound` in one transaction of that store, with the `history.pruned` mark.
    private func deleteHistoryLocked(through bound: UInt64) throws(KeelError) -> Int {
        var deleted = 0
        for store in stores {
            deleted += try untyped { () throws -> Int in
                try store.write { txn in
                    guard let tree = try txn.tree(TreeLayout.history) else { return 0 }
                    let doomed = try Self.historyKeys(in: tree, through: bound)
                    for key in doomed { try tree.delete(key: key) }
                    if let newest = doomed.last.flatMap({ KeyEncoding.readU64($0) }) {
                        let meta = try txn.openTree(TreeLayout.meta)
                        try meta.put(key: Array(MetaKey.historyPruned.utf8), value: KeyEncoding.u64(newest))
                        // The newest record went too: the counter is kept in `$meta save`.
                        if try tree.count() == 0 { try meta.put(key: Array(MetaKey.save.utf8), value: KeyEncoding.u64(newest)) }
                    }
                    return doomed.count
                }
            }
        }
        return deleted
    }

    /// The last save id whose home `txn`'s store was: its newest history record's key, or `$meta
    /// save` (where pruning that record left it, and where format 1 kept the counter), whichever
    /// is higher. The folder's last save id is the highest of its stores'.
    static func lastSave(_ txn: ReadTransaction) throws(KeelError) -> UInt64 {
        try engine { () throws(StorageError) -> UInt64 in
            let saved = try txn.tree(TreeLayout.meta)?.get(Array(MetaKey.save.utf8)).flatMap(KeyEncoding.readU64) ?? 0
            guard let tree = try txn.tree(TreeLayout.history) else { return saved }
            var cursor = try tree.cursor()
            guard try cursor.seekLast(), let newest = KeyEncoding.readU64(try cursor.key) else { return saved }
            return max(saved, newest)
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
