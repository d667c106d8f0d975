// The replies of the store-level calls (KeelConnection+Admin.swift) as values. Each keeps to the
// keys spec/protocol.md fixes; `StoreStatistics.json` keeps the whole STATS reply for keys
// added later.

public import KeelModel

/// `STATS`.
public struct StoreStatistics: Sendable {
    /// Objects per concrete entity.
    public let objects: [String: Int]
    public let totalObjects: Int
    /// The last committed transaction.
    public let lastTxn: Int64
    /// Page-file and log bytes over all store files.
    public let fileBytes: Int64
    public let logBytes: Int64
    public let pagesUsed: Int64
    public let pagesFree: Int64
    public let cacheHits: Int64
    public let cacheMisses: Int64
    /// Connections open on the daemon.
    public let connections: Int
    /// The whole reply (per-file figures under `files`).
    public let json: JSON

    init(_ json: JSON) {
        var objects: [String: Int] = [:]
        for (name, count) in json["objects"]?.objectValue ?? [:] { objects[name] = Int(clamping: count.intValue ?? 0) }
        self.objects = objects
        self.totalObjects = Int(clamping: json["totalObjects"]?.intValue ?? 0)
        self.lastTxn = json["lastTxn"]?.intValue ?? 0
        self.fileBytes = json["fileBytes"]?.intValue ?? 0
        self.logBytes = json["logBytes"]?.intValue ?? 0
        self.pagesUsed = json["pagesUsed"]?.intValue ?? 0
        self.pagesFree = json["pagesFree"]?.intValue ?? 0
        self.cacheHits = json["cacheHits"]?.intValue ?? 0
        self.cacheMisses = json["cacheMisses"]?.intValue ?? 0
        self.connections = Int(clamping: json["connections"]?.intValue ?? 0)
        self.json = json
    }
}

/// `COMPACT`.
public struct CompactResult: Sendable, Equatable {
    public let bytesBefore: Int64
    public let bytesAfter: Int64
}

/// `BACKUP`.
public struct BackupResult: Sendable, Equatable {
    /// Bytes written.
    public let bytes: Int64
    /// Where the daemon wrote the copy.
    public let path: String
}

/// `BATCH.INSERT`.
public struct BatchInsertResult: Sendable, Equatable {
    public let inserted: Int
    /// The first new object's ID (nil when nothing was inserted).
    public let first: String?
    /// The transaction (nil when nothing was written).
    public let txn: Int64?
}

/// `BATCH.UPDATE` and `BATCH.DELETE`.
public struct BatchResult: Sendable, Equatable {
    /// Objects updated, or deleted (cascades included).
    public let count: Int
    /// The batch's transaction; nil when it matched nothing (nothing was written).
    public let txn: Int64?
}
