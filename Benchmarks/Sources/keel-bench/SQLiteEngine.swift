import CSQLite3

/// SQLite through its C API, configured as Core Data's store would be at its fairest:
/// WAL journal, `synchronous` FULL (or NORMAL for the normal pairing), 4096-byte pages,
/// `cache_size=-65536` (64 MiB, Keel's default cache), a `WITHOUT ROWID` table keyed by the key
/// (a key-ordered B+tree, like Keel's), prepared statements reused for every operation.
enum SQLiteEngine: BenchEngine {
    static let name = "SQLite"
    static let fileName = "bench.sqlite"

    static func openMainStore(directory: String) throws -> any MainStore {
        try SQLiteMainStore(directory: directory)
    }

    static func openCommitStore(directory: String, durability: Durability) throws -> any CommitStore {
        let path = directory + "/" + fileName
        // Create the database and table once, then every thread opens its own connection.
        _ = try configuredConnection(path: path, durability: durability)
        return SQLiteCommitStore(path: path, durability: durability)
    }

    /// A connection with the benchmark's settings, the table created if missing. Each setting is
    /// read back and checked: a silently ignored PRAGMA would make the comparison wrong.
    static func configuredConnection(path: String, durability: Durability) throws -> SQLiteConnection {
        let db = try SQLiteConnection(path: path)
        try db.busyTimeout(milliseconds: 60_000)
        try db.exec("PRAGMA page_size=4096")
        let mode = try db.scalar("PRAGMA journal_mode=WAL")
        guard mode?.lowercased() == "wal" else { throw BenchError("SQLite refused WAL mode (got \(mode ?? "nil"))") }
        try db.exec("PRAGMA synchronous=\(durability == .full ? "FULL" : "NORMAL")")
        let synchronous = try db.scalar("PRAGMA synchronous")
        guard synchronous == (durability == .full ? "2" : "1") else {
            throw BenchError("SQLite synchronous is \(synchronous ?? "nil"), wanted \(durability)")
        }
        try db.exec("PRAGMA cache_size=-65536")
        try db.exec("CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
        let pageSize = try db.scalar("PRAGMA page_size")
        guard pageSize == "4096" else { throw BenchError("SQLite page size is \(pageSize ?? "nil"), wanted 4096") }
        return db
    }
}

final class SQLiteMainStore: MainStore {
    let directory: String
    private let db: SQLiteConnection
    private let insert: SQLiteStatement
    private let select: SQLiteStatement
    private let delete: SQLiteStatement

    init(directory: String) throws {
        self.directory = directory
        db = try SQLiteEngine.configuredConnection(path: directory + "/" + SQLiteEngine.fileName, durability: .full)
        insert = try db.prepare("INSERT INTO kv(k, v) VALUES(?, ?)")
        select = try db.prepare("SELECT v FROM kv WHERE k = ?")
        delete = try db.prepare("DELETE FROM kv WHERE k = ?")
    }

    func bulkInsert(_ data: KeyValueSet, count: Int) throws {
        try db.exec("BEGIN")
        for i in 0..<count {
            try insert.bindBlob(1, data.key(i))
            try insert.bindBlob(2, data.value(i))
            defer { insert.reset() }
            _ = try insert.step()
        }
        try db.exec("COMMIT")  // with the default wal_autocheckpoint, this also checkpoints
    }

    func checkpoint() throws { try db.checkpointTruncate() }

    func pointReads(_ keys: [[UInt8]]) throws -> Tally {
        var tally = Tally()
        try db.exec("BEGIN")
        for key in keys {
            try key.withUnsafeBytes { key in
                try select.bindBlob(1, key)
                defer { select.reset() }
                if try select.step() {
                    tally.rows += 1
                    tally.add(select.blob(0))
                }
            }
        }
        try db.exec("COMMIT")
        return tally
    }

    func rangeScans(_ data: KeyValueSet, starts: [Int32], length: Int) throws -> Tally {
        let statement = try db.prepare("SELECT k, v FROM kv WHERE k >= ? ORDER BY k LIMIT \(length)")
        var tally = Tally()
        try db.exec("BEGIN")
        for i in starts {
            try statement.bindBlob(1, data.key(Int(i)))
            defer { statement.reset() }
            while try statement.step() {
                tally.rows += 1
                tally.add(statement.blob(0))
                tally.add(statement.blob(1))
            }
        }
        try db.exec("COMMIT")
        return tally
    }

    func delete(_ data: KeyValueSet, indices: [Int32]) throws -> Int {
        var deleted = 0
        try db.exec("BEGIN")
        for i in indices {
            try delete.bindBlob(1, data.key(Int(i)))
            defer { delete.reset() }
            _ = try delete.step()
            deleted += Int(sqlite3_changes(db.handle))
        }
        try db.exec("COMMIT")
        return deleted
    }

    func compact() throws -> [String: Double] {
        // In WAL mode VACUUM writes the rebuilt database through the WAL; the truncating
        // checkpoint moves it into the file and empties the log, which is when the file shrinks.
        let (_, vacuum) = try timed { try db.exec("VACUUM") }
        let (_, checkpoint) = try timed { try db.checkpointTruncate() }
        return ["vacuumSeconds": vacuum, "checkpointSeconds": checkpoint]
    }

    func fullScan() throws -> Tally {
        let statement = try db.prepare("SELECT k, v FROM kv ORDER BY k")
        var tally = Tally()
        while try statement.step() {
            tally.rows += 1
            tally.add(statement.blob(0))
            tally.add(statement.blob(1))
        }
        return tally
    }

    func close() throws {
        // The statements and the connection close when released (deinit); nothing else to do.
    }
}

/// The commit workloads' database: one connection per thread (SQLite serialises writers through
/// its WAL write lock; waiting writers sleep in the busy handler, `busy_timeout` 60 s).
struct SQLiteCommitStore: CommitStore {
    let path: String
    let durability: Durability

    func makeSession() throws -> any CommitSession {
        try SQLiteCommitSession(db: SQLiteEngine.configuredConnection(path: path, durability: durability))
    }

    func keyCount() throws -> Int {
        let db = try SQLiteConnection(path: path)
        return Int(try db.scalar("SELECT count(*) FROM kv") ?? "") ?? -1
    }

    func close() throws {}
}

final class SQLiteCommitSession: CommitSession {
    private let db: SQLiteConnection
    private let insert: SQLiteStatement

    init(db: SQLiteConnection) throws {
        self.db = db
        insert = try db.prepare("INSERT INTO kv(k, v) VALUES(?, ?)")
    }

    /// One autocommit INSERT: its own transaction, durable per `synchronous` when it returns.
    /// SQLITE_BUSY past the busy handler is retried, so no commit is ever skipped.
    func commit(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
        try insert.bindBlob(1, key)
        try insert.bindBlob(2, value)
        while true {
            do {
                _ = try insert.step()
                insert.reset()
                return
            } catch let error as SQLiteError where error.isBusy {
                insert.reset()
            }
        }
    }
}
