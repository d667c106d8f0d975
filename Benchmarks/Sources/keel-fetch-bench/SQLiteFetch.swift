// The SQLite side: tables shaped as Core Data's SQLite store shapes them (one table per
// hierarchy is not needed here: only employees and departments), with the same indexes Keel's
// model declares — employee(name) for Person.name, employee(department, salary) for
// Employee.department,salary, department(name) — in WAL mode with a 64 MiB cache (`--cache-mib`).

import CSQLite3

final class SQLiteFetch {
    let db: OpaquePointer

    init(path: String, cacheMiB: Int = 64) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let handle else {
            throw BenchError("sqlite open \(path)")
        }
        db = handle
        try exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-\(cacheMiB * 1024);")
    }

    deinit { sqlite3_close_v2(db) }

    func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError("sqlite: \(sql): \(String(cString: sqlite3_errmsg(db)))") }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("sqlite prepare: \(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        return statement
    }

    func load(_ data: FetchData) throws {
        try exec("""
            CREATE TABLE department(id INTEGER PRIMARY KEY, name TEXT NOT NULL, code INTEGER);
            CREATE TABLE employee(id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER, address TEXT, salary REAL NOT NULL,
              hiredAt INTEGER, isManager INTEGER, department INTEGER REFERENCES department(id));
            """)
        try exec("BEGIN")
        let d = try prepare("INSERT INTO department(id, name, code) VALUES (?, ?, ?)")
        for i in 0..<data.departments {
            sqlite3_bind_int64(d, 1, Int64(i + 1))
            sqlite3_bind_text(d, 2, "Dept \(i)", -1, sqliteTransient)
            sqlite3_bind_int64(d, 3, Int64(i % 100))
            guard sqlite3_step(d) == SQLITE_DONE else { throw BenchError("insert department") }
            sqlite3_reset(d)
        }
        sqlite3_finalize(d)
        let e = try prepare("INSERT INTO employee(id, name, age, salary, hiredAt, isManager, department) VALUES (?, ?, ?, ?, ?, ?, ?)")
        for n in 1...data.count {
            let x = data.employee(n)
            sqlite3_bind_int64(e, 1, Int64(n))
            sqlite3_bind_text(e, 2, x.name, -1, sqliteTransient)
            sqlite3_bind_int64(e, 3, x.age)
            sqlite3_bind_double(e, 4, Double(x.salaryCents) / 100)
            sqlite3_bind_int64(e, 5, x.hiredAt)
            sqlite3_bind_int64(e, 6, x.isManager ? 1 : 0)
            sqlite3_bind_int64(e, 7, Int64(x.department + 1))
            guard sqlite3_step(e) == SQLITE_DONE else { throw BenchError("insert employee") }
            sqlite3_reset(e)
        }
        sqlite3_finalize(e)
        try exec("COMMIT")
        try exec("""
            CREATE INDEX employee_name ON employee(name);
            CREATE INDEX employee_department_salary ON employee(department, salary);
            CREATE INDEX department_name ON department(name);
            ANALYZE; PRAGMA wal_checkpoint(TRUNCATE);
            """)
    }

    /// Runs `statement` with `bind`, reading every column of every row into Swift values (as a
    /// Core Data fetch would make objects); returns the row count.
    func rows(_ statement: OpaquePointer, _ bind: (OpaquePointer) -> Void) throws -> Int {
        sqlite3_reset(statement)
        bind(statement)
        var n = 0
        var sink = 0
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw BenchError("step: \(String(cString: sqlite3_errmsg(db)))") }
            for c in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, c) {
                case SQLITE_TEXT: sink &+= String(cString: sqlite3_column_text(statement, c)).utf8.count
                case SQLITE_FLOAT: sink &+= Int(sqlite3_column_double(statement, c))
                case SQLITE_INTEGER: sink &+= Int(sqlite3_column_int64(statement, c))
                default: break
                }
            }
            n += 1
        }
        if sink == -1 { print("") }
        return n
    }
}

let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
