// Store-level and admin calls as methods (spec/protocol.md, "Commands"): what keelctl's
// `--socket` mode and applications use without a context. Each is one request through
// `request`/`stream`, so pipelining, deadlines and errors are the same as for any call; the
// admin ones (CHECKPOINT, COMPACT, VERIFY, BACKUP, HISTORY.PRUNE) default to `options.maintenanceDeadline` and
// fail with `PERMISSION` for a peer that is not an admin of the daemon.

public import KeelModel
import OrderedCollections

/// A JSON object's members, in order.
typealias JSONMembers = OrderedDictionary<String, JSON>

extension KeelConnection {
    /// `PING`: a round trip.
    public func ping(deadline: Duration? = nil) async throws(KeelError) {
        _ = try await request("PING", deadline: deadline)
    }

    /// `STATS`: objects per entity, file and log bytes, pages, cache figures, last transaction.
    public func stats(deadline: Duration? = nil) async throws(KeelError) -> StoreStatistics {
        StoreStatistics(try await request("STATS", deadline: deadline) ?? [:])
    }

    /// `CHECKPOINT` (admin): moves the log into the page files.
    public func checkpoint(deadline: Duration? = nil) async throws(KeelError) {
        _ = try await request("CHECKPOINT", deadline: deadline)
    }

    /// `COMPACT` (admin): rewrites the store files without free pages, online.
    public func compact(deadline: Duration? = nil) async throws(KeelError) -> CompactResult {
        let reply = try await request("COMPACT", deadline: deadline) ?? [:]
        return CompactResult(bytesBefore: reply["bytesBefore"]?.intValue ?? 0, bytesAfter: reply["bytesAfter"]?.intValue ?? 0)
    }

    /// `VERIFY` (admin): checks every page, tree, index and relationship. A damaged store throws
    /// `CORRUPT` with `details.faults` listing each fault.
    public func verify(deadline: Duration? = nil) async throws(KeelError) -> JSON {
        try await request("VERIFY", deadline: deadline) ?? [:]
    }

    /// `BACKUP` (admin): a consistent copy of the stores, written by the daemon under its
    /// configured backup folder as `path`.
    public func backup(path: String, deadline: Duration? = nil) async throws(KeelError) -> BackupResult {
        let reply = try await request("BACKUP", ["path": .string(path)], deadline: deadline) ?? [:]
        return BackupResult(bytes: reply["bytes"]?.intValue ?? 0, path: reply["path"]?.stringValue ?? path)
    }

    /// `HISTORY`: the transactions committed after `after`, oldest first, streamed.
    public func history(after: Int64, limit: Int? = nil, deadline: Duration? = nil) -> KeelStream<HistoryEntry> {
        var arguments: JSON = ["after": .int(after)]
        if let limit { arguments = ["after": .int(after), "limit": .int(Int64(limit))] }
        return stream("HISTORY", arguments, deadline: deadline) { row throws(KeelError) in try HistoryEntry(row: row) }
    }

    /// `HISTORY.PRUNE` (admin): deletes the history records of the transactions through
    /// `through` (past the last transaction: through the last); returns how many went.
    /// `HISTORY` after an earlier transaction is `EXPIRED` from then on.
    @discardableResult
    public func pruneHistory(through: Int64, deadline: Duration? = nil) async throws(KeelError) -> Int {
        let reply = try await request("HISTORY.PRUNE", ["through": .int(through)], deadline: deadline) ?? [:]
        return Int(reply["deleted"]?.intValue ?? 0)
    }

    /// `EXPLAIN`: how a FETCH (`request`, the FETCH JSON; `context` in it names the context)
    /// would run — the reply as the daemon gives it (`plan`, `access`, `indexes`, …).
    public func explain(_ request: JSON, deadline: Duration? = nil) async throws(KeelError) -> JSON {
        try await self.request("EXPLAIN", request, deadline: deadline) ?? [:]
    }

    // MARK: Batch requests (one transaction each, bypassing contexts)

    /// `BATCH.INSERT`: inserts `objects` (each an object's values) of `entity` in one
    /// transaction, validated, inverses kept.
    public func batchInsert(entity: String, objects: [JSON], deadline: Duration? = nil) async throws(KeelError) -> BatchInsertResult {
        let reply = try await request("BATCH.INSERT", ["entity": .string(entity), "objects": .array(objects)], deadline: deadline) ?? [:]
        return BatchInsertResult(
            inserted: Int(clamping: reply["inserted"]?.intValue ?? 0), first: reply["first"]?.stringValue, txn: reply["txn"]?.intValue)
    }

    /// `BATCH.UPDATE`: sets `values` on every object of `entity` matching `predicate` (all when
    /// nil; `%@` from `args`, `$NAME` from `vars`), in one transaction.
    public func batchUpdate(
        entity: String, predicate: String? = nil, args: [JSON] = [], vars: [String: JSON] = [:], values: JSON, deadline: Duration? = nil
    ) async throws(KeelError) -> BatchResult {
        var arguments = Self.batchArguments(entity: entity, predicate: predicate, args: args, vars: vars)
        arguments["values"] = values
        let reply = try await request("BATCH.UPDATE", .object(arguments), deadline: deadline) ?? [:]
        return BatchResult(count: Int(clamping: reply["updated"]?.intValue ?? 0), txn: reply["txn"]?.intValue)
    }

    /// `BATCH.DELETE`: deletes every object of `entity` matching `predicate` (all when nil), delete
    /// rules applied, in one transaction.
    public func batchDelete(
        entity: String, predicate: String? = nil, args: [JSON] = [], vars: [String: JSON] = [:], deadline: Duration? = nil
    ) async throws(KeelError) -> BatchResult {
        let arguments = Self.batchArguments(entity: entity, predicate: predicate, args: args, vars: vars)
        let reply = try await request("BATCH.DELETE", .object(arguments), deadline: deadline) ?? [:]
        return BatchResult(count: Int(clamping: reply["deleted"]?.intValue ?? 0), txn: reply["txn"]?.intValue)
    }

    private static func batchArguments(entity: String, predicate: String?, args: [JSON], vars: [String: JSON]) -> JSONMembers {
        var arguments: JSONMembers = ["entity": .string(entity)]
        if let predicate { arguments["predicate"] = .string(predicate) }
        if !args.isEmpty { arguments["args"] = .array(args) }
        if !vars.isEmpty { arguments["vars"] = .object(JSONMembers(uniqueKeysWithValues: vars.sorted { $0.key < $1.key })) }
        return arguments
    }
}
