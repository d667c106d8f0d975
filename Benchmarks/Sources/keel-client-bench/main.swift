// keel-client-bench: what KeelConnection adds over raw protocol lines (Docs/Performance.md,
// "Client"). GET by ID against a running keeld, round trips per second, one connection:
//   - 1 in flight: one call at a time (raw: write a line, read its reply; client: one task
//     awaiting `request("GET", …)` in a loop);
//   - 16 in flight (raw: 16 lines in one write, then their 16 replies; client: 16 tasks each
//     awaiting `request` in a loop on the same connection, pipelined and coalesced by it).
// The client runs twice: its tasks on the cooperative pool (the default), and on the
// connection's event loop (`KeelConnection.executor`). Each workload runs `--rounds` times, in
// rotating order, for `--seconds` each; the median round is reported, with overhead = raw rate
// / client rate − 1 (the client's extra time per call), and `paired`: the median of each round's
// own overhead (raw lines and the client measured in the same round). scripts/bench-client.sh
// builds and starts a release keeld and runs this.
//
//     keel-client-bench --socket PATH [--seconds 3] [--rounds 3] [--objects 1000] [--only WORKLOAD] [--daemon-pid PID]
//                       [--coalesce-micros N|off]
//
// With `--daemon-pid`, keeld's CPU time per call is reported beside the client's (this
// process's): on a shared machine they are steadier than the rates, and they say where time goes.
// `--coalesce-micros` sets the connection's `Options.coalesceMicros` (default: the client's own,
// 20 µs; `off`: the daemon's default, a burst's replies written together).

import Foundation
import KeelClient
import KeelModel
import KeelTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The run's settings, from the command line.
struct Settings: Sendable {
    var socketPath = ""
    var seconds = 3.0
    var rounds = 3
    var objects = 1000
    /// Only this workload, for profiling: `raw-N`, `client-N` or `loop-N`.
    var only: String?
    /// keeld's pid, to report its CPU time per call too.
    var daemonPID: Int32?
    /// The connection's options (`--coalesce-micros`).
    var options = KeelConnection.Options()

    static let usage = """
        usage: keel-client-bench --socket PATH [--seconds S] [--rounds N] [--objects N]
                                 [--only raw-N|client-N|loop-N] [--daemon-pid PID] [--coalesce-micros N|off]
        GET by ID against a running keeld: KeelConnection against raw protocol lines (Docs/Performance.md, "Client").
        scripts/bench-client.sh builds and starts a release keeld and runs this.

        """

    init(_ arguments: [String]) {
        var arguments = arguments[...]
        /// The flag's value, or exit 2 naming what it takes.
        func value<T>(_ flag: String, _ what: String, _ parse: (String) -> T?) -> T {
            guard let text = arguments.popFirst(), let parsed = parse(text) else {
                Self.fail("\(flag) takes \(what)")
            }
            return parsed
        }
        while let flag = arguments.popFirst() {
            switch flag {
            case "--help", "-h":
                print(Self.usage, terminator: "")
                exit(0)
            case "--socket": socketPath = value(flag, "a path") { $0.isEmpty ? nil : $0 }
            case "--seconds": seconds = value(flag, "a positive number of seconds") { Double($0).flatMap { $0 > 0 ? $0 : nil } }
            case "--rounds": rounds = value(flag, "a positive whole number") { Int($0).flatMap { $0 > 0 ? $0 : nil } }
            case "--objects": objects = value(flag, "a positive whole number") { Int($0).flatMap { $0 > 0 ? $0 : nil } }
            case "--only":
                only = value(flag, "a workload: raw-N, client-N or loop-N, N from 1") { Self.workload($0) == nil ? nil : $0 }
            case "--daemon-pid": daemonPID = value(flag, "a process ID") { Int32($0) }
            case "--coalesce-micros":
                options.coalesceMicros = value(flag, "a number of microseconds or off") { text -> Int?? in
                    text == "off" ? .some(nil) : Int(text).map { .some($0) }
                }
            default:
                Self.fail("unknown flag \(flag)")
            }
        }
        guard !socketPath.isEmpty else { Self.fail("--socket PATH is required") }
    }

    /// A workload's name read: `raw`, `client` or `loop`, and its calls in flight; nil when it names none.
    static func workload(_ name: String) -> (kind: Substring, depth: Int)? {
        let parts = name.split(separator: "-")
        guard parts.count == 2, ["raw", "client", "loop"].contains(parts[0]), let depth = Int(parts[1]), depth > 0 else { return nil }
        return (parts[0], depth)
    }

    /// Says what is wrong and how to call this, and exits with 2.
    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("keel-client-bench: \(message)\n\(usage)".utf8))
        exit(2)
    }
}

/// The workloads, over one connection and a set of object IDs.
struct Bench: Sendable {
    let settings: Settings
    let connection: KeelConnection
    /// `t GET {"$id":…}` lines, for the raw client.
    let lines: [[UInt8]]
    /// `{"$id":…}` arguments, for KeelConnection.
    let requests: [JSON]

    /// The baseline: request lines on a plain blocking socket (KeelTestSupport's LineClient), no
    /// client library — write `depth` lines in one write, count `depth` reply lines coming back.
    func raw(depth: Int) throws -> Int {
        let socket = try LineClient(path: settings.socketPath)
        let end = Date().timeIntervalSince1970 + settings.seconds
        var calls = 0
        var i = 0
        while Date().timeIntervalSince1970 < end {
            var batch: [UInt8] = []
            for _ in 0..<depth {
                batch += lines[i % lines.count]
                i += 1
            }
            try socket.send(batch)
            try socket.skipLines(depth)
            calls += depth
        }
        return calls
    }

    /// `tasks` tasks, each awaiting `request("GET", …)` in a loop on the one connection; on
    /// the cooperative pool, or on the connection's event loop (`onLoop`: KeelConnection.executor).
    func client(tasks: Int, onLoop: Bool = false) async throws -> Int {
        let end = Date().timeIntervalSince1970 + settings.seconds
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for t in 0..<tasks {
                let loop: @Sendable () async throws -> Int = {
                    var calls = 0
                    var i = t
                    while Date().timeIntervalSince1970 < end {
                        let request = requests[i % requests.count]
                        let object = try await connection.request("GET", request)
                        guard object?["$id"] == request["$id"] else { throw KeeldError("a reply that is not its call's") }
                        calls += 1
                        i += tasks
                    }
                    return calls
                }
                // On the pool: a plain child task, as an application writes it.
                if onLoop { group.addTask(executorPreference: connection.executor, operation: loop) } else { group.addTask(operation: loop) }
            }
            return try await group.reduce(0, +)
        }
    }

    /// Calls per second of `body`.
    func rate(_ body: () async throws -> Int) async throws -> Sample {
        let start = Date()
        let (cpu, daemonCPU) = (processCPU(), settings.daemonPID.map(daemonCPUSeconds))
        let calls = try await body()
        let seconds = Date().timeIntervalSince(start)
        let perCall = { (spent: Double) in spent / Double(max(calls, 1)) * 1e6 }
        return Sample(
            rate: Double(calls) / seconds, clientMicros: perCall(processCPU() - cpu),
            daemonMicros: daemonCPU.flatMap { before in settings.daemonPID.map { perCall(daemonCPUSeconds($0) - before) } })
    }
}

/// One run of one workload: calls per second, and CPU time per call of this process and (with
/// `--daemon-pid`) of keeld.
struct Sample {
    var rate: Double
    var clientMicros: Double
    var daemonMicros: Double?
}

/// This process's user and system CPU time, in seconds.
func processCPU() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// A process's user and system CPU time, in seconds (/proc/PID/stat, in clock ticks).
func daemonCPUSeconds(_ pid: Int32) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return 0 }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // After the command: state is field 3, utime 14 and stime 15 (1-based over the whole line).
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// Ends the bench with one line of error and exit 1: a `KeelError` as its code and message (the
/// message has the system's reason; `cause` would repeat it in NIO's words), anything else as it
/// describes itself.
func exitAfter(_ error: any Error) -> Never {
    let text = (error as? KeelError).map { "\($0.code): \($0.message)" } ?? "\(error)"
    FileHandle.standardError.write(Data("keel-client-bench: \(text)\n".utf8))
    exit(1)
}

let settings = Settings(Array(CommandLine.arguments.dropFirst()))
let connection: KeelConnection
do {
    connection = try await KeelConnection.connect(socketPath: settings.socketPath, clientName: "keel-client-bench", options: settings.options)
} catch {
    exitAfter(error)
}

/// The workloads and their report, after connecting (a failure — keeld gone in the middle of a run, an
/// unexpected reply — ends the bench with one line of error and exit 1, not a crash at the top level).
func measure() async throws {
    // The objects to read: `objects` companies, inserted once.
    func companyIDs() async throws -> [String] {
        try await connection.rows("FETCH", ["entity": "Company", "result": "ids", "limit": .int(Int64(settings.objects))]).collect().compactMap { $0["$id"]?.stringValue }
    }
    var ids = try await companyIDs()
    if ids.count < settings.objects {
        _ = try await connection.batchInsert(entity: "Company", objects: (ids.count..<settings.objects).map { ["name": .string("bench-\($0)")] })
        // The main context still reads the snapshot of its first fetch: take a new one.
        _ = try await connection.request("REFRESH")
        ids = try await companyIDs()
    }
    guard !ids.isEmpty else { throw KeeldError("no Company objects to read") }
    let bench = Bench(
        settings: settings, connection: connection, lines: ids.map { Array("t GET {\"$id\":\"\($0)\"}\n".utf8) },
        requests: ids.map { ["$id": .string($0)] })

    /// CPU time to parse one GET reply's JSON (the part of a call that a raw client counting
    /// lines does not do), averaged over many parses of a reply this daemon sent.
    func parseMicros() async throws -> Double {
        var line = ""
        for try await row in connection.rows("FETCH", ["entity": "Company", "limit": 1]) { row.write(to: &line) }
        let bytes = Array(line.utf8)
        let count = 100_000
        let start = processCPU()
        var keys = 0
        for _ in 0..<count { keys += try JSON.parse(bytes).objectValue?.count ?? 0 }
        precondition(keys > 0)
        return (processCPU() - start) / Double(count) * 1e6
    }

    /// One workload by name: `raw-N`, `client-N` (N tasks on the cooperative pool) or `loop-N`
    /// (N tasks on the connection's event loop).
    func run(_ name: String) async throws -> Sample {
        guard let (kind, depth) = Settings.workload(name) else { throw KeeldError("no workload \(name)") }
        switch kind {
        case "raw": return try await bench.rate { try bench.raw(depth: depth) }
        case "client": return try await bench.rate { try await bench.client(tasks: depth) }
        case "loop": return try await bench.rate { try await bench.client(tasks: depth, onLoop: true) }
        default: throw KeeldError("no workload \(name)")
        }
    }

    if let only = settings.only {
        let sample = try await run(only)
        print(String(format: "%@: %.0f /s, client %.1f µs CPU/call", only, sample.rate, sample.clientMicros)
            + (sample.daemonMicros.map { String(format: ", keeld %.1f µs CPU/call", $0) } ?? ""))
        await connection.close()
        return
    }

    let parse = try await parseMicros()
    let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
    let coalesce = connection.hello.coalesceMicros.map { "coalesceMicros \($0)" } ?? "coalesceMicros off"
    print("keel-client-bench: GET by ID, \(coalesce), \(ids.count) objects, \(settings.rounds) rounds × \(settings.seconds) s, median round; \(ProcessInfo.processInfo.activeProcessorCount) CPUs, load \(load)")
    print("workload".padding(toLength: 50, withPad: " ", startingAt: 0) + " calls/s   vs raw   overhead   paired   client CPU/call   keeld CPU/call")
    for depth in [1, 16] {
        let names = ["raw-\(depth)", "client-\(depth)", "loop-\(depth)"]
        var samples: [String: [Sample]] = [:]
        for round in 0..<settings.rounds {
            // Rotate which goes first, so drift in the machine's load hits all alike.
            for i in 0..<names.count {
                let name = names[(i + round) % names.count]
                samples[name, default: []].append(try await run(name))
            }
        }
        /// The median round by rate.
        func middle(_ name: String) -> Sample {
            let sorted = (samples[name] ?? []).sorted { $0.rate < $1.rate }
            return sorted[sorted.count / 2]
        }
        let raw = middle(names[0]).rate
        /// The median over rounds of each round's own overhead (raw lines and this workload run in
        /// the same round, seconds apart, so a change in the machine's speed between rounds cancels
        /// out; the `overhead` column sets the median rounds of each against each other).
        func paired(_ name: String) -> Double {
            let pairs = zip(samples[names[0]] ?? [], samples[name] ?? []).map { raw, sample in raw.rate / sample.rate - 1 }
            return pairs.isEmpty ? 0 : median(pairs)
        }
        for (name, label) in zip(names, ["raw lines", "KeelConnection, tasks on the pool", "KeelConnection, tasks on its event loop"]) {
            let sample = middle(name)
            let row = "\(label), \(depth) in flight".padding(toLength: 50, withPad: " ", startingAt: 0)
            print(
                row
                    + String(
                        format: "%8.0f   %6.2f   %+6.1f%%  %+6.1f%%   %9.1f µs", sample.rate, sample.rate / raw, (raw / sample.rate - 1) * 100,
                        paired(name) * 100, sample.clientMicros)
                    + (sample.daemonMicros.map { String(format: "      %9.1f µs", $0) } ?? ""))
        }
    }
    print(String(format: "JSON parse of one GET reply (done by the client, not by raw lines): %.1f µs CPU", parse))
    await connection.close()
}

do {
    try await measure()
} catch {
    exitAfter(error)
}
