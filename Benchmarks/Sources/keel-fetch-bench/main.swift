// keel-fetch-bench: fetch requests on 1M Employee objects, Keel's object layer against SQLite in
// one run, same data, same indexes (Docs/Performance.md, "Fetch").
//
//     swift run -c release keel-fetch-bench [--count 1000000] [--dir /tmp/keel-fetch-bench] [--model ../config/model.json]
//         [--only N] [--cache-mib 64] [--queries N] [--cpu] [--prepared]
//
// `--cache-mib` sets both engines' page caches (default 64 MiB each); `--only N` runs row N;
// `--queries N` runs N queries per round on every row instead of its own number (to profile one
// row long enough; the output is the same table). Rows 5 and 6 measure the fixed cost of a query
// (an equality that matches nothing, a count over an empty key range) and run only when `--only`
// names them. `--cpu` adds, per row, the CPU time per query of each engine (the thread's CPU
// clock, median round) — steadier than wall time on a shared machine. `--prepared` runs Keel's
// rows with `%@` arguments as SQLite's run, on a request prepared once (`ObjectContext.prepare`)
// and run with each query's arguments (`fetch(_:args:)`, `count(_:args:)`); without it each
// query builds its `FetchRequest` and runs `fetch(_:_:)`, as the daemon runs FETCH.
//
// Each row runs its queries on Keel, then on SQLite, three rounds, engines alternating first;
// the median round is reported per query. Ratio = SQLite time / Keel time (above 1.00×: Keel
// faster). Both engines must return the same number of rows, or the run stops.

import CSQLite3
import Foundation
import KeelModel

let usage = """
    usage: keel-fetch-bench [--count 1000000] [--dir /tmp/keel-fetch-bench] [--model ../config/model.json]
                            [--only N] [--cache-mib 64] [--queries N] [--cpu] [--prepared]
      --count N      employees to load (once per --dir; the folder keeps them for later runs)
      --only N       run row N only (0-based; rows 5 and 6, the fixed cost of a query, run only when named)
      --cache-mib N  both engines' page caches, MiB (default 64)
      --queries N    queries per round on every row (to profile one row long enough)
      --cpu          also print each engine's thread CPU time per query
      --prepared     Keel's rows with arguments on requests prepared once (ObjectContext.prepare)
    Docs/Performance.md, "Fetch", explains the rows and how to read them.
    """

var arguments = CommandLine.arguments.dropFirst()
var count = 1_000_000
var directory = "/tmp/keel-fetch-bench"
var modelPath = "../config/model.json"
var only: Int? = nil
var cacheMiB = 64
var queriesOverride: Int? = nil
var showCPU = false
var preparedRequests = false
while let flag = arguments.popFirst() {
    switch flag {
    case "--count": count = Int(arguments.popFirst() ?? "") ?? count
    case "--dir": directory = arguments.popFirst() ?? directory
    case "--model": modelPath = arguments.popFirst() ?? modelPath
    case "--only": only = Int(arguments.popFirst() ?? "")
    case "--cache-mib":
        guard let n = Int(arguments.popFirst() ?? ""), n > 0 else { print("--cache-mib needs a positive number"); exit(2) }
        cacheMiB = n
    case "--cpu": showCPU = true
    case "--prepared": preparedRequests = true
    case "--queries":
        guard let n = Int(arguments.popFirst() ?? ""), n > 0 else { print("--queries needs a positive number"); exit(2) }
        queriesOverride = n
    case "--help", "-h":
        print(usage)
        exit(0)
    default: print("unknown flag \(flag)\n\(usage)"); exit(2)
    }
}

let data = FetchData(count: count, departments: 1000)
let fm = FileManager.default
let marker = "\(directory)/loaded-\(count)"
if !fm.fileExists(atPath: marker) {
    try? fm.removeItem(atPath: directory)
    try fm.createDirectory(atPath: "\(directory)/keel", withIntermediateDirectories: true)
    var start = Date()
    let loader = try KeelFetch(directory: "\(directory)/keel", modelPath: modelPath)
    try loader.load(data)
    try loader.store.close()
    print("keel load: \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    start = Date()
    try SQLiteFetch(path: "\(directory)/sqlite.db").load(data)
    print("sqlite load: \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    _ = fm.createFile(atPath: marker, contents: nil)
}

let keel = try KeelFetch(directory: "\(directory)/keel", modelPath: modelPath, cacheMiB: cacheMiB)
let sqlite = try SQLiteFetch(path: "\(directory)/sqlite.db", cacheMiB: cacheMiB)
let context = ObjectContext(store: keel.store)

struct Workload {
    let name: String
    let queries: Int
    let keel: (Int) throws -> Int
    let sqlite: (Int) throws -> Int
    var onlyWhenAsked = false
}

func dept(_ i: Int) -> JSON { .string("Department/\(i % data.departments + 1)") }
func someName(_ i: Int) -> String { FetchData.name((i &* 7919) % 65_536) }

let equality = try sqlite.prepare("SELECT * FROM employee WHERE name = ?")
let range = try sqlite.prepare("SELECT * FROM employee WHERE name >= ? ORDER BY name, id LIMIT 10")
let counting = try sqlite.prepare("SELECT count(*) FROM employee WHERE department = ? AND salary > ?")
let join = try sqlite.prepare("SELECT e.* FROM employee e JOIN department d ON d.id = e.department WHERE d.name = ?")
let contains = try sqlite.prepare("SELECT * FROM employee WHERE name LIKE '%kalo%'")
let grouped = try sqlite.prepare("SELECT department, count(*), max(salary) FROM employee GROUP BY department")
let groupedByName = try sqlite.prepare(
    "SELECT d.name, count(*), sum(e.salary) FROM employee e JOIN department d ON d.id = e.department GROUP BY d.name")
let groupedScan = try sqlite.prepare("SELECT isManager, count(*), avg(age) FROM employee WHERE salary > ? GROUP BY isManager")

/// `counting` for department `i` and salaries above `salary`.
@MainActor func sqliteCount(_ i: Int, salaryAbove salary: Double) throws -> Int {
    sqlite3_reset(counting)
    sqlite3_bind_int64(counting, 1, Int64(i % data.departments + 1))
    sqlite3_bind_double(counting, 2, salary)
    guard sqlite3_step(counting) == SQLITE_ROW else { throw BenchError("count") }
    return Int(sqlite3_column_int64(counting, 0))
}

/// Keel's side of a row with `%@` arguments: a `FetchRequest` built per query and run by
/// `fetch(_:_:)`/`count(_:)` (the default, as the daemon runs FETCH and COUNT), or with
/// `--prepared` the request prepared once and run with each query's arguments.
struct KeelQuery {
    let request: FetchRequest
    let prepared: PreparedFetchRequest?

    /// `request`'s `args` are an example (a prepared request is checked with them).
    @MainActor init(_ request: FetchRequest) throws {
        self.request = request
        prepared = preparedRequests ? try context.prepare(request) : nil
    }

    @MainActor func rows(_ args: [JSON]) throws -> Int {
        if let prepared { return try keel.rows(context, prepared, args: args) }
        var request = request
        request.args = args
        return try keel.rows(context, request)
    }

    @MainActor func count(_ args: [JSON]) throws -> Int {
        if let prepared { return try context.count(prepared, args: args) }
        var request = request
        request.args = args
        return try context.count(request)
    }
}

let byName = try KeelQuery(FetchRequest(entity: "Employee", predicate: "name == %@", args: ["x"]))
let fromName = try KeelQuery(FetchRequest(entity: "Employee", predicate: "name >= %@", args: ["x"], sort: [KeelSortDescriptor(key: "name")], limit: 10))
let countQuery = try KeelQuery(FetchRequest(entity: "Employee", predicate: "department == %@ AND salary > 10000", args: [dept(0)]))
let byDepartmentName = try KeelQuery(FetchRequest(entity: "Employee", predicate: "department.name == %@", args: ["x"]))
let emptyCount = try KeelQuery(FetchRequest(entity: "Employee", predicate: "department == %@ AND salary > 10000000", args: [dept(0)]))

/// A grouped fetch of employees (FETCH's `groupBy` with aggregates).
func groupRequest(_ keys: [String], _ aggregates: [FetchAggregate], predicate: String? = nil, args: [JSON] = []) -> FetchRequest {
    var request = FetchRequest(entity: "Employee", predicate: predicate, args: args, result: .dictionaries, properties: keys + aggregates.map(\.name))
    request.groupBy = keys
    request.aggregates = aggregates
    return request
}
let byDepartment = groupRequest(["department"], [FetchAggregate(name: "n", function: .count), FetchAggregate(name: "top", function: .max, key: "salary")])
let byDepartmentNameGroups = groupRequest(
    ["department.name"], [FetchAggregate(name: "n", function: .count), FetchAggregate(name: "payroll", function: .sum, key: "salary")])
let byManagerFlag = try KeelQuery(groupRequest(
    ["isManager"], [FetchAggregate(name: "n", function: .count), FetchAggregate(name: "age", function: .avg, key: "age")],
    predicate: "salary > %@", args: [15000]))

let workloads: [Workload] = [
    Workload(name: "indexed equality: name == ?", queries: queriesOverride ?? 500,
        keel: { i in try byName.rows([.string(someName(i))]) },
        sqlite: { i in try sqlite.rows(equality) { sqlite3_bind_text($0, 1, someName(i), -1, sqliteTransient) } }),
    Workload(name: "range + sort + limit 10: name >= ? by name", queries: queriesOverride ?? 500,
        keel: { i in try fromName.rows([.string(someName(i))]) },
        sqlite: { i in try sqlite.rows(range) { sqlite3_bind_text($0, 1, someName(i), -1, sqliteTransient) } }),
    Workload(name: "count: department == ? AND salary > 10000", queries: queriesOverride ?? 500,
        keel: { i in try countQuery.count([dept(i)]) },
        sqlite: { i in try sqliteCount(i, salaryAbove: 10000) }),
    Workload(name: "through to-one: department.name == ?", queries: queriesOverride ?? 100,
        keel: { i in try byDepartmentName.rows([.string("Dept \(i % data.departments)")]) },
        sqlite: { i in try sqlite.rows(join) { sqlite3_bind_text($0, 1, "Dept \(i % data.departments)", -1, sqliteTransient) } }),
    Workload(name: "unindexed scan: name CONTAINS[c] 'kalo'", queries: queriesOverride ?? 3,
        keel: { _ in try keel.rows(context, FetchRequest(entity: "Employee", predicate: "name CONTAINS[c] 'kalo'")) },
        sqlite: { _ in try sqlite.rows(contains) { _ in } }),
    Workload(name: "fixed cost: name == ? matching nothing", queries: queriesOverride ?? 500,
        keel: { i in try byName.rows([.string("Zz\(i)")]) },
        sqlite: { i in try sqlite.rows(equality) { sqlite3_bind_text($0, 1, "Zz\(i)", -1, sqliteTransient) } }, onlyWhenAsked: true),
    Workload(name: "fixed cost: count over an empty range", queries: queriesOverride ?? 500,
        keel: { i in try emptyCount.count([dept(i)]) },
        sqlite: { i in try sqliteCount(i, salaryAbove: 10_000_000) }, onlyWhenAsked: true),
    Workload(name: "group by department: count, max(salary)", queries: queriesOverride ?? 3,
        keel: { _ in try keel.rows(context, byDepartment) },
        sqlite: { _ in try sqlite.rows(grouped) { _ in } }),
    Workload(name: "group by department.name: count, sum(salary)", queries: queriesOverride ?? 3,
        keel: { _ in try keel.rows(context, byDepartmentNameGroups) },
        sqlite: { _ in try sqlite.rows(groupedByName) { _ in } }),
    Workload(name: "group by isManager where salary > ?: count, avg(age)", queries: queriesOverride ?? 3,
        keel: { i in try byManagerFlag.rows([.int(Int64(15000 + i % 3))]) },
        sqlite: { i in try sqlite.rows(groupedScan) { sqlite3_bind_double($0, 1, Double(15000 + i % 3)) } }),
]

/// The calling thread's CPU time.
func threadCPUNanoseconds() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}

var cpuLines: [String] = []
print("| workload | queries | Keel µs/query | SQLite µs/query | Keel/SQLite |")
print("| --- | ---: | ---: | ---: | ---: |")
for (number, workload) in workloads.enumerated() where only == number || (only == nil && !workload.onlyWhenAsked) {
    // Warm-up and agreement check.
    for i in 0..<min(workload.queries, 20) {
        let k = try workload.keel(i), s = try workload.sqlite(i)
        guard k == s else { throw BenchError("\(workload.name): query \(i): Keel \(k) rows, SQLite \(s)") }
    }
    var keelTimes: [Double] = []
    var sqliteTimes: [Double] = []
    var keelCPU: [Double] = []
    var sqliteCPU: [Double] = []
    for round in 0..<3 {
        /// Wall and thread CPU µs per query.
        func time(_ body: (Int) throws -> Int) throws -> (Double, Double) {
            let start = DispatchTime.now().uptimeNanoseconds, cpu = threadCPUNanoseconds()
            for i in 0..<workload.queries { _ = try body(i + round * 7) }
            let n = Double(workload.queries)
            return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1000 / n, Double(threadCPUNanoseconds() - cpu) / 1000 / n)
        }
        for engine in round % 2 == 0 ? [0, 1] : [1, 0] {
            let (wall, cpu) = try time(engine == 0 ? workload.keel : workload.sqlite)
            if engine == 0 {
                keelTimes.append(wall)
                keelCPU.append(cpu)
            } else {
                sqliteTimes.append(wall)
                sqliteCPU.append(cpu)
            }
        }
    }
    let k = keelTimes.sorted()[1], s = sqliteTimes.sorted()[1]
    print("| \(workload.name) | \(workload.queries) | \(String(format: "%.1f", k)) | \(String(format: "%.1f", s)) | \(String(format: "%.2f", s / k))× |")
    if showCPU {
        let kc = keelCPU.sorted()[1], sc = sqliteCPU.sorted()[1]
        cpuLines.append("cpu: \(workload.name): Keel \(String(format: "%.1f", kc)) µs/query, SQLite \(String(format: "%.1f", sc)) µs/query, \(String(format: "%.2f", sc / kc))×")
    }
}
for line in cpuLines { print(line) }
print("plans:")
print("  " + (try context.explain(FetchRequest(entity: "Employee", predicate: "name == %@", args: [.string(someName(1))]))))
print("  " + (try context.explain(FetchRequest(entity: "Employee", predicate: "name >= %@", args: ["Ka"], sort: [KeelSortDescriptor(key: "name")], limit: 10))))
print("  " + (try context.explain(FetchRequest(entity: "Employee", predicate: "department == %@ AND salary > 10000", args: [dept(3)]))))
print("  " + (try context.explain(FetchRequest(entity: "Employee", predicate: "department.name == %@", args: ["Dept 3"]))))
print("  " + (try context.explain(FetchRequest(entity: "Employee", predicate: "name CONTAINS[c] 'kalo'"))))
