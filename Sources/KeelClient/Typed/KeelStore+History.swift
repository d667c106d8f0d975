// Persistent history in the typed API (Core Data's NSPersistentHistoryChangeRequest): the
// transactions committed after one, read back with typed IDs — the same embedded (the store's
// history trees) and against keeld (HISTORY). With `changes(of:)` it is how an application that
// was away catches up: remember the last transaction seen, read the history after it, then follow
// the events.
//
//     for entry in try await store.history(after: lastSeen) {
//         for id in entry.deleted(of: Employee.self) { forget(id) }
//         lastSeen = entry.txn
//     }
//
// A store that prunes its history (keeld's `historyRetention`, `EmbeddedStoreOptions.store
// .historyRetention`) answers `EXPIRED` when a transaction after the one asked for was pruned
// (Core Data's expired history token): read the objects again, then follow the history after
// `details.last`. An application that keeps everything prunes it itself once every reader has
// caught up: `store.deleteHistory(through: lastSeenByAll)` (Core Data's `deleteHistory(before:)`).

extension KeelStore {
    /// The transactions committed after transaction `txn` (0: from the first), oldest first, at
    /// most `limit`; page with the last entry's `txn`. `EXPIRED` when some were pruned.
    public func history(after txn: Int64, limit: Int = 1000) async throws(KeelError) -> [HistoryEntry] {
        guard txn >= 0, limit >= 0 else { throw KeelError(.badRequest, "history: the transaction and the limit must be from 0") }
        var entries: [HistoryEntry] = []
        for row in try await mainContext.backend.history(after: txn, limit: limit) {
            entries.append(try HistoryEntry(row: row))
        }
        return entries
    }

    /// Deletes the history records of the transactions through `txn` (Core Data's
    /// `NSPersistentHistoryChangeRequest.deleteHistory(before:)`): call it with the last
    /// transaction every reader of the history has seen. `history(after:)` an earlier transaction
    /// is `EXPIRED` from then on. Returns how many records went. Against keeld it is an admin
    /// command (`PERMISSION` for a peer that is not an admin).
    @discardableResult
    public func deleteHistory(through txn: Int64) async throws(KeelError) -> Int {
        guard txn >= 0 else { throw KeelError(.badRequest, "deleteHistory: the transaction must be from 0") }
        let reply = try await mainContext.backend.pruneHistory(through: txn)
        guard let deleted = reply["deleted"]?.intValue else {
            throw KeelError(.type, "HISTORY.PRUNE: expected {\"deleted\":n,…}, found \(reply.serialized())")
        }
        return Int(deleted)
    }
}
