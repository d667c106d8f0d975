import ArgumentParser
import Foundation

@main
struct KeelBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keel-bench",
        abstract: "Keel against SQLite on the same work, side by side in one run.",
        discussion: """
            Workloads: bulk-insert, point-read, range-scan, commit-1, commit-16, compact (the storage \
            suite), obj-batch-insert, obj-save, obj-fetch, obj-cascade (the objects suite: KeelModel's \
            ObjectStore against SQLite tables with foreign keys). The commit workloads run twice: SQLite \
            synchronous=FULL against Keel .full, then NORMAL against .normal. See Docs/Performance.md.
            """)

    @Flag(help: "Smaller sizes (200k keys, 2k scans, 1k/2k commits); finishes within two minutes on 2 cores.")
    var quick = false

    @Option(
        name: .customLong("workload"), parsing: .upToNextOption,
        help: "Run only these workloads (default: all). One of: \(Workload.allCases.map(\.rawValue).joined(separator: ", ")).")
    var workloads: [Workload] = []

    @Option(help: "Where to put the stores: a fresh subdirectory of it is made and removed at the end. Must be a real disk, not tmpfs.")
    var dir: String = "/var/tmp"

    @Flag(help: "Print the results as JSON on standard output instead of the table.")
    var json = false

    @Option(help: "Keys in the bulk insert (default 1,000,000; 200,000 with --quick).")
    var keys: Int?

    @Option(help: "Which workloads: storage (the key/value rows), objects (the object layer's rows), or all. --workload overrides it.")
    var suite: Suite = .all

    @Option(help: "Employees in the object workloads (default 1,000,000; 200,000 with --quick): a multiple of 10,000, at least 30,000.")
    var objects: Int?

    @Option(help: "Seed of the data set and of the random read and scan orders.")
    var seed: UInt64 = 20_251_121

    @Flag(help: "Object rows: Keel checkpoints on the committing thread (the engine's default) instead of the object store's background checkpointer, for before/after runs.")
    var keelInlineCheckpoints = false

    @Flag(help: "Leave the stores in the --dir subdirectory at the end instead of removing them (for `keelctl stats` and SQLite's dbstat).")
    var keep = false

    @Option(help: .hidden)
    var contextMemoryProbe: String?

    @Option(help: .hidden)
    var contextInserts: Int = 100_000

    func validate() throws {
        if let objects, objects < 30_000 || objects % 10_000 != 0 || objects > 50_000_000 {
            throw ValidationError("--objects must be a multiple of 10,000 between 30,000 and 50,000,000")
        }
        if let keys, keys < 10 || keys > 100_000_000 { throw ValidationError("--keys must be between 10 and 100,000,000") }
    }

    func run() throws {
        if let contextMemoryProbe {
            #if KEEL_ENGINE
                try runContextMemoryProbe(directory: contextMemoryProbe, count: contextInserts, seed: seed &+ 10)
                return
            #else
                throw ValidationError("the Keel engine is not built in")
            #endif
        }
        let started = monotonicNanos()
        var plan = Plan(quick: quick, suite: suite, workloads: workloads, keys: keys, objects: objects, seed: seed)
        plan.keelInlineCheckpoints = keelInlineCheckpoints
        let root = try FileManager.default.temporaryDirectoryPath(in: dir)
        defer { if !keep { try? FileManager.default.removeItem(atPath: root) } }
        progress("working in \(root)" + (keep ? " (kept at the end)" : ""))

        var engines: [any BenchEngine.Type] = []
        var objectEngines: [any ObjectBenchEngine.Type] = []
        #if KEEL_ENGINE
            engines.append(KeelEngine.self)
            objectEngines.append(KeelObjectEngine.self)
        #else
            progress("the Keel engine is not built in (Package.swift: keelEngineAvailable); measuring SQLite alone")
        #endif
        engines.append(SQLiteEngine.self)
        objectEngines.append(SQLiteObjectEngine.self)

        progress("measuring fdatasync (\(plan.fdatasyncIterations) runs)")
        let machine = try MachineFacts.gather(benchDirectory: root, fdatasyncIterations: plan.fdatasyncIterations)
        let date = ISO8601DateFormatter().string(from: Date())
        let runner = Runner(plan: plan, engines: engines, root: root, machine: machine, date: date)
        runner.keepsStores = keep
        runner.objectEngines = objectEngines
        var report = try runner.run()
        try report.machine.remeasureAtEnd()
        report.totalSeconds = Double(monotonicNanos() - started) / 1e9

        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(report.renderText())
        }
        if !report.failures.isEmpty { throw ExitCode(1) }
    }
}

extension FileManager {
    /// A new, empty, uniquely named directory inside `parent`.
    func temporaryDirectoryPath(in parent: String) throws -> String {
        var isDirectory: ObjCBool = false
        guard fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("--dir \(parent) is not a directory")
        }
        let path = parent + "/keel-bench-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
        try createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }
}
