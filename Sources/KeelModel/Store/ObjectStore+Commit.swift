// The save pipeline of multi-store saves and the batch requests (a single-store save runs the same
// steps, `runSave`, in a transaction shared with the other saves queued for its store:
// ObjectStore+SaveGroup.swift): under the save lock, take the
// engine write transactions of the touched stores (configuration order: the first outermost, so
// it commits last), let the caller apply its changes to a SaveSession, validate, flush rows and
// indexes, write the history record and the save counter into the save's home store (the first
// it touches: the only one of a single-store save), each store's `applied` mark, and — when the
// save spans several stores — the redo intent (Decision 0004):
//
//   nesting:  home.write { s1.write { … sN.write { apply; validate; flush; intent } } }
//   commits:  sN first (it holds the intent with the key-level operations of every other store),
//             then … s1, then the home store. Each inner `write` returns only once its commit is
//             durable (sync mode full), so the intent is on disk before any other store commits.
//             The home store's commit is made with `writeDeferringSync`: a save that touches
//             one store — any one: its history lives there — releases the save lock before
//             waiting for its fsync, so concurrent saves share fsyncs (group commit); `save`
//             returns — and observers hear of the save — only once it is durable. A multi-store
//             save waits for the home store's durability (which is when the engine publishes it)
//             before opening the gate.
//   snapshot gate: taken exclusively just before sN commits, released after the home store
//             has, so no snapshot sees some stores with the save and others without.
//
// A crash after sN's commit and before the home store's is completed at the next open
// (ObjectStore+Open.swift, recoverIntents). In sync mode `normal` or `off` a power cut can lose
// sN's commit while keeping a later one of another store, so cross-store atomicity across a
// power cut needs `full` (the default).

import KeelStorage

extension ObjectStore {
    /// Runs one save. `apply` edits the session and returns the upserts it made (inserted ID →
    /// existing holder). `onCommit` runs once every store has committed, before the wait for the
    /// home store's durability and the automatic checkpoint that follows it (a context gives its
    /// snapshot back there, so that checkpoint can empty the log).
    func performSave(
        stores touched: Set<Int>, onCommit: () -> Void = {},
        _ apply: (SaveSession, _ reservedMarks: [UInt64]) throws(KeelError) -> [ObjectID: ObjectID]
    ) throws(KeelError) -> SaveResult {
        let marks = reservedMarks()
        let (result, (ticket, home)) = try saveLock.withLock {
            (counter: inout SaveCounter) throws(KeelError) -> (SaveResult, (CommitTicket, Int)) in
            let order = touched.isEmpty ? [0] : touched.sorted()
            let home = order[0]
            let session = SaveSession(model: model, layout: layout, storeCount: stores.count, freshAbove: counter.stored)
            session.recording = order.count > 1
            let saveID = counter.last + 1
            var gateHeld = false
            var reachedCommit = false
            defer { if gateHeld { snapshotGate.unlock() } }
            do throws(KeelError) {
                let (ran, ticket) = try nestDeferringSync(order, session) { () throws(KeelError) -> (SaveResult, HistoryRecord)? in
                    guard let outcome = try runSave(session, order: order, saveID: saveID, marks: marks, unchangedIsNoSave: true, apply) else {
                        return nil
                    }
                    if order.count > 1, let first = order.last {
                        try writeIntent(session, first: first, order: order, saveID: saveID)
                        snapshotGate.lockExclusive()
                        gateHeld = true
                    }
                    reachedCommit = true
                    return outcome
                }
                // Nothing matched (a BATCH.UPDATE or BATCH.DELETE whose predicate chose no object):
                // no page was written, so the engine committed nothing — no transaction, no fsync,
                // no history record, no event, and no save ID used.
                guard let outcome = ran else { return (SaveResult(saveID: nil), (ticket, home)) }
                counter.last = saveID
                committed.store(saveID, ordering: .releasing)
                if gateHeld {
                    // The home store's commit reaches new readers only once it is durable (the
                    // engine publishes at sync): a multi-store save waits for it before opening the
                    // gate, or a snapshot could see the other stores with the save and the home
                    // store without. (Such saves share no fsync with later saves; single-store
                    // ones do.)
                    do throws(StorageError) {
                        try stores[home].waitDurable(ticket)
                    } catch {
                        throw KeelError(error)
                    }
                    snapshotGate.unlock()
                    gateHeld = false
                }
                // Queued under the save lock, so observers hear saves in commit order (once durable).
                queueNotice(outcome.1)
                counter.noteStored(outcome.0.inserted)
                return (outcome.0, (ticket, home))
            } catch {
                // A commit that failed part-way may have left an intent: never hand its id out again.
                if reachedCommit {
                    counter.last = saveID
                    for e in session.entries where e.inserted && e.id.number > counter.stored[e.id.entity.index] {
                        counter.stored[e.id.entity.index] = e.id.number
                    }
                }
                throw error
            }
        }
        onCommit()
        guard let saveID = result.saveID else { return result }
        // Outside the save lock: saves committed meanwhile share this fsync.
        do throws(StorageError) {
            try stores[home].waitDurable(ticket)
        } catch {
            settleNotice(saveID, durable: false)
            throw KeelError(error)
        }
        settleNotice(saveID, durable: true)
        return result
    }

    /// One save's own part, inside the write transactions of the stores in `order` (the home store
    /// first): apply its changes, validate, flush rows and indexes, put its history record (and,
    /// spanning several stores, each store's `applied` mark), prune history. A single-store save
    /// grouped with others (ObjectStore+SaveGroup.swift) runs exactly this, one after another in
    /// the shared transaction. With `unchangedIsNoSave`, a save that changed no object and wrote
    /// no page returns nil before its history record: it is no save at all.
    func runSave(
        _ session: SaveSession, order: [Int], saveID: UInt64, marks: [UInt64], unchangedIsNoSave: Bool = false,
        _ apply: (SaveSession, _ reservedMarks: [UInt64]) throws(KeelError) -> [ObjectID: ObjectID]
    ) throws(KeelError) -> (SaveResult, HistoryRecord)? {
        let home = order[0]
        let changeMarks = unchangedIsNoSave ? order.map { session.txn($0).changeMark } : []
        let merged = try apply(session, marks)
        let failures = try SaveValidator.validate(session)
        if !failures.isEmpty { throw SaveValidator.error(failures) }
        let summary = try session.flush()
        if unchangedIsNoSave, summary.inserted.isEmpty, summary.updated.isEmpty, summary.deleted.isEmpty,
           order.indices.allSatisfy({ session.txn(order[$0]).changeMark == changeMarks[$0] }) {
            return nil
        }
        let record = HistoryRecord(
            saveID: SaveID(rawValue: saveID), time: Self.nowMilliseconds(), inserted: summary.inserted,
            updated: summary.updated, deleted: summary.deleted)
        // The record's key is the save counter (ObjectStore+History.swift, "The save
        // counter"): a single-store save writes its rows and this record, nothing else.
        try session.put(home, TreeLayout.history, key: KeyEncoding.u64(saveID), value: HistoryCodec.encode(record, model: model))
        if order.count > 1 {
            // Recovery of multi-store saves compares intents with these marks.
            for s in order { try session.put(s, TreeLayout.meta, key: Array(MetaKey.applied.utf8), value: KeyEncoding.u64(saveID)) }
        }
        if let keep = options.historyRetention { try pruneInSave(session, store: home, last: saveID, keeping: keep) }
        let result = SaveResult(saveID: SaveID(rawValue: saveID), inserted: summary.inserted, updated: summary.updated.keys.sorted(),
                                deleted: summary.deleted, merged: merged)
        return (result, record)
    }

    /// `nest` with the outermost (home) store committed by `writeDeferringSync`.
    private func nestDeferringSync<R>(
        _ order: [Int], _ session: SaveSession, _ body: () throws(KeelError) -> R
    ) throws(KeelError) -> (R, CommitTicket) {
        let s = order[0]
        return try untyped { () throws -> (R, CommitTicket) in
            try stores[s].writeDeferringSync { txn in
                session.txns[s] = txn
                defer { session.txns[s] = nil }
                return try nest(order, 1, session, body)
            }
        }
    }

    /// Holds the write transactions of `order[i...]`, then runs `body` inside all of them.
    private func nest<R>(
        _ order: [Int], _ i: Int, _ session: SaveSession, _ body: () throws(KeelError) -> R
    ) throws(KeelError) -> R {
        if i == order.count { return try body() }
        let s = order[i]
        return try untyped { () throws -> R in
            try stores[s].write { txn in
                session.txns[s] = txn
                defer { session.txns[s] = nil }
                return try nest(order, i + 1, session, body)
            }
        }
    }

    /// Writes the redo intent of a multi-store save into the store that commits first, after
    /// deleting the intents of earlier saves there (every earlier save has completed: in this
    /// process, or by recovery at open).
    private func writeIntent(_ session: SaveSession, first: Int, order: [Int], saveID: UInt64) throws(KeelError) {
        if let tree = try session.readTree(first, TreeLayout.intents) {
            let stale = try engine { () throws(StorageError) -> [[UInt8]] in
                var keys: [[UInt8]] = []
                var cursor = try tree.cursor()
                var valid = try cursor.seekFirst()
                while valid {
                    keys.append(try cursor.key)
                    valid = try cursor.next()
                }
                return keys
            }
            for key in stale { _ = try engine { () throws(StorageError) in try tree.delete(key: key) } }
        }
        var ops: [KeyOp] = []
        for s in order where s != first { ops.append(contentsOf: session.ops[s]) }
        let tree = try session.writeTree(first, TreeLayout.intents)
        let bytes = IntentRecord.encode(ops)
        try engine { () throws(StorageError) in try tree.put(key: KeyEncoding.u64(saveID), value: bytes) }
    }

    /// History retention inside a save's commit, in the save's home store (through the session,
    /// so a multi-store save's intent carries the deletions too). The other stores' records go
    /// at their own next save, or at `pruneHistory`.
    private func pruneInSave(_ session: SaveSession, store: Int, last: UInt64, keeping: Int) throws(KeelError) {
        guard let tree = try session.readTree(store, TreeLayout.history) else { return }
        let doomed = try Self.historyKeys(in: tree, through: Self.pruneBound(last: last, keeping: keeping))
        // Pruning this save's own record (keeping 0) takes the counter's last trace: keep it.
        if doomed.last.flatMap({ KeyEncoding.readU64($0) }) == last {
            try session.put(store, TreeLayout.meta, key: Array(MetaKey.save.utf8), value: KeyEncoding.u64(last))
        }
        for key in doomed { try session.delete(store, TreeLayout.history, key: key) }
        if let newest = doomed.last.flatMap({ KeyEncoding.readU64($0) }) {
            try session.put(store, TreeLayout.meta, key: Array(MetaKey.historyPruned.utf8), value: KeyEncoding.u64(newest))
        }
    }
}
