import CSQLite3

/// A thin wrapper over one SQLite connection (C API). Used on one thread only.
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String

    /// Opens `path` read-write, creating it, in multi-thread mode (SQLITE_OPEN_NOMUTEX: this
    /// connection is used by one thread, so SQLite's per-connection mutex is not needed).
    init(path: String) throws {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: "open \(path): \(message)")
        }
        handle = db
        self.path = path
    }

    deinit { sqlite3_close_v2(handle) }

    func exec(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(error)
            throw SQLiteError(code: rc, message: "\(sql): \(message)")
        }
    }

    /// The first column of the first row of `sql`, as text (for PRAGMAs).
    func scalar(_ sql: String) throws -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return sqlite3_column_text(statement.handle, 0).map { String(cString: $0) }
    }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw error(rc, sql) }
        return SQLiteStatement(handle: statement, connection: self)
    }

    func busyTimeout(milliseconds: Int32) throws {
        let rc = sqlite3_busy_timeout(handle, milliseconds)
        guard rc == SQLITE_OK else { throw error(rc, "busy_timeout") }
    }

    /// `PRAGMA wal_checkpoint(TRUNCATE)`: copies the whole WAL into the database file, fsyncs it,
    /// and truncates the WAL to zero bytes. Fails if it could not complete.
    func checkpointTruncate() throws {
        var logFrames: Int32 = 0
        var checkpointed: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_TRUNCATE, &logFrames, &checkpointed)
        guard rc == SQLITE_OK else { throw error(rc, "wal_checkpoint(TRUNCATE)") }
    }

    func error(_ rc: Int32, _ context: String) -> SQLiteError {
        SQLiteError(code: rc, message: "\(context): \(String(cString: sqlite3_errmsg(handle)))")
    }
}

/// A prepared statement, reused: bind, step, reset.
final class SQLiteStatement {
    let handle: OpaquePointer
    private let connection: SQLiteConnection  // keeps the connection open while the statement lives

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds `bytes` as a blob without copying (SQLITE_STATIC): the bytes must stay put until the
    /// statement is reset or rebound, which the callers guarantee (the data set outlives the run).
    @inline(__always)
    func bindBlob(_ index: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        let rc = sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), nil)
        guard rc == SQLITE_OK else { throw connection.error(rc, "bind") }
    }

    /// Steps once: true for a row, false when done. Throws on any error (including SQLITE_BUSY,
    /// which callers that expect it catch).
    @inline(__always)
    func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw connection.error(rc, "step")
    }

    @inline(__always)
    func reset() { sqlite3_reset(handle) }

    /// Column `index` of the current row as bytes, valid until the next step or reset.
    @inline(__always)
    func blob(_ index: Int32) -> UnsafeRawBufferPointer {
        let count = Int(sqlite3_column_bytes(handle, index))
        return UnsafeRawBufferPointer(start: sqlite3_column_blob(handle, index), count: count)
    }
}

struct SQLiteError: Error, CustomStringConvertible {
    var code: Int32
    var message: String
    var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }
    var description: String { "SQLite error \(code): \(message)" }
}

extension SQLiteStatement {
    /// Binds text without copying (SQLITE_STATIC); the bytes must stay put until the statement is
    /// stepped and reset, so callers bind and step inside `withUTF8`.
    @inline(__always)
    func bindText(_ index: Int32, _ utf8: UnsafeBufferPointer<UInt8>) throws {
        let rc = sqlite3_bind_text(handle, index, UnsafeRawPointer(utf8.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32(utf8.count), nil)
        guard rc == SQLITE_OK else { throw SQLiteError(code: rc, message: "bind text") }
    }

    @inline(__always)
    func bindInt64(_ index: Int32, _ value: Int64) throws {
        let rc = sqlite3_bind_int64(handle, index, value)
        guard rc == SQLITE_OK else { throw SQLiteError(code: rc, message: "bind int64") }
    }

    @inline(__always)
    func bindNull(_ index: Int32) throws {
        let rc = sqlite3_bind_null(handle, index)
        guard rc == SQLITE_OK else { throw SQLiteError(code: rc, message: "bind null") }
    }

    @inline(__always)
    func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Column `index` as a new Swift String (copied out of SQLite's buffer).
    @inline(__always)
    func text(_ index: Int32) -> String {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard let p = sqlite3_column_text(handle, index) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: p, count: count), as: UTF8.self)
    }
}
