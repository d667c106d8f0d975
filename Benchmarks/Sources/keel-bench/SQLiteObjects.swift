import CSQLite3

/// The SQLite side of the object workloads: the same tables, indexes and foreign keys as the
/// Keel model (KeelObjects.swift), with the settings of the storage rows (WAL, synchronous=FULL,
/// page 4096, cache 64 MiB) and `PRAGMA foreign_keys=ON` (read back). Core Data's own SQLite
/// schema has one table per entity hierarchy and an index on each to-one foreign key; these
/// tables are that shape:
///
///     department(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)
///     employee(id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER, salary TEXT,
///              hired_at INTEGER, department_id INTEGER REFERENCES department(id) ON DELETE CASCADE)
///     employee_name ON employee(name); employee_department ON employee(department_id)
///
/// The salary is TEXT, its exact decimal digits (a NUMERIC column would round it to a double).
/// `employee_department` is Keel's `link/Department.employees` tree: the inverse to-many read
/// by department, and what makes the cascade an index range instead of a table scan.
enum SQLiteObjectEngine: ObjectBenchEngine {
    static let name = SQLiteEngine.name
    static let schema = [
        "CREATE TABLE department(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
        """
        CREATE TABLE employee(id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER, salary TEXT, hired_at INTEGER,
            department_id INTEGER REFERENCES department(id) ON DELETE CASCADE)
        """,
        "CREATE INDEX employee_name ON employee(name)",
        "CREATE INDEX employee_department ON employee(department_id)",
    ]

    static func open(directory: String, data: EmployeeSet, plan: Plan) throws -> any ObjectBenchStore {
        try SQLiteObjectStore(directory: directory, data: data)
    }
}

final class SQLiteObjectStore: ObjectBenchStore {
    let directory: String
    private let db: SQLiteConnection
    private let insertWithID: SQLiteStatement
    private let insertAuto: SQLiteStatement
    private let select: SQLiteStatement
    private let deleteDepartmentStatement: SQLiteStatement
    private var range: Range<Int> = 0..<0
    private var salaryTexts: [String] = []
    private var data: EmployeeSet

    init(directory: String, data: EmployeeSet) throws {
        self.directory = directory
        self.data = data
        db = try SQLiteEngine.configuredConnection(path: directory + "/objects.sqlite", durability: .full)
        try db.exec("PRAGMA foreign_keys=ON")
        guard try db.scalar("PRAGMA foreign_keys") == "1" else { throw BenchError("SQLite refused foreign_keys=ON") }
        for sql in SQLiteObjectEngine.schema { try db.exec(sql) }
        try db.exec("BEGIN")
        let department = try db.prepare("INSERT INTO department(id, name) VALUES(?, ?)")
        for d in 0..<data.departments {
            var name = data.departmentName(d)
            try department.bindInt64(1, Int64(d + 1))
            try name.withUTF8 { try department.bindText(2, $0) }
            _ = try department.step()
            department.reset()
        }
        try db.exec("COMMIT")
        let columns = "name, age, salary, hired_at, department_id"
        insertWithID = try db.prepare("INSERT INTO employee(id, \(columns)) VALUES(?, ?, ?, ?, ?, ?)")
        insertAuto = try db.prepare("INSERT INTO employee(\(columns)) VALUES(?, ?, ?, ?, ?)")
        select = try db.prepare("SELECT \(columns) FROM employee WHERE id = ?")
        deleteDepartmentStatement = try db.prepare("DELETE FROM department WHERE id = ?")
    }

    func prepare(_ data: EmployeeSet, _ range: Range<Int>) {
        self.data = data
        self.range = range
        salaryTexts.removeAll(keepingCapacity: true)
        for i in range { salaryTexts.append(data.salaryText(i)) }
    }

    /// Binds employee i's columns from `first` on and steps once.
    @inline(__always)
    private func insert(_ statement: SQLiteStatement, _ i: Int, first: Int32) throws {
        var name = data.names[i]
        var salary = salaryTexts[i - range.lowerBound]
        try statement.bindInt64(first + 1, Int64(data.ages[i]))
        try statement.bindInt64(first + 3, data.hiredAt[i])
        try statement.bindInt64(first + 4, Int64(data.department[i]) + 1)
        try name.withUTF8 { name in
            try statement.bindText(first, name)
            try salary.withUTF8 { salary in
                try statement.bindText(first + 2, salary)
                defer { statement.reset() }
                _ = try statement.step()
            }
        }
    }

    func batchInsert() throws {
        try db.exec("BEGIN")
        for i in range {
            try insertWithID.bindInt64(1, Int64(i + 1))
            try insert(insertWithID, i, first: 2)
        }
        try db.exec("COMMIT")
    }

    func saveInserts() throws {
        try db.exec("BEGIN")
        for i in range { try insert(insertAuto, i, first: 1) }
        try db.exec("COMMIT")
    }

    func storeSaveInserts() throws { try saveInserts() }

    func fetch(_ indices: [Int32]) throws -> ObjectTally {
        var tally = ObjectTally()
        try db.exec("BEGIN")
        for i in indices {
            try select.bindInt64(1, Int64(i) + 1)
            defer { select.reset() }
            guard try select.step() else { continue }
            tally.found += 1
            let name = select.text(0)
            let age = select.int64(1)
            let salary = select.text(2)
            let hired = select.int64(3)
            let department = select.int64(4)
            tally.nameBytes += name.utf8.count
            tally.ageSum += Int(age)
            tally.dateSum &+= hired
            tally.departmentSum += Int(department)
            _ = salary
        }
        try db.exec("COMMIT")
        return tally
    }

    func salaries(_ indices: [Int32]) throws -> [String] {
        var out: [String] = []
        for i in indices {
            try select.bindInt64(1, Int64(i) + 1)
            defer { select.reset() }
            guard try select.step() else {
                out.append("missing")
                continue
            }
            // The canonical form Keel prints (Decimal's description): no trailing zeros.
            var text = select.text(2)
            if text.contains(".") {
                while text.hasSuffix("0") { text.removeLast() }
                if text.hasSuffix(".") { text.removeLast() }
            }
            out.append(text)
        }
        return out
    }

    func prepareDelete(_ d: Int) throws {}

    func checkpoint() throws { try db.checkpointTruncate() }

    /// SQLite runs its checkpoints (WAL autocheckpoint) inside the committing call.
    func waitForBackgroundWork() throws {}

    func deleteDepartment(_ d: Int) throws -> Int {
        try db.exec("BEGIN")
        try deleteDepartmentStatement.bindInt64(1, Int64(d + 1))
        _ = try deleteDepartmentStatement.step()
        deleteDepartmentStatement.reset()
        try db.exec("COMMIT")
        return -1  // sqlite3_changes does not count rows deleted by a foreign-key cascade
    }

    func employeeCount() throws -> Int { Int(try db.scalar("SELECT count(*) FROM employee") ?? "") ?? -1 }

    func employeeCount(department d: Int) throws -> Int {
        Int(try db.scalar("SELECT count(*) FROM employee WHERE department_id = \(d + 1)") ?? "") ?? -1
    }

    func close() throws {}
}
