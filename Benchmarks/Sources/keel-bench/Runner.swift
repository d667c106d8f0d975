import Dispatch
import Foundation
import Synchronization

/// Runs the plan against every engine built in, workload by workload (for each workload Keel then
/// SQLite, so that both see the machine in the same state), and collects the report.
final class Runner {
    let plan: Plan
    let engines: [any BenchEngine.Type]
    /// The engines of the object workloads (Keel's only when it is built in).
    var objectEngines: [any ObjectBenchEngine.Type] = []
    /// The run's own directory (fresh, removed at the end); one subdirectory per store.
    let root: String
    /// `--keep`: the stores are left in `root` at the end (`removeDirectory` does nothing).
    var keepsStores = false
    var report: RunReport

    init(plan: Plan, engines: [any BenchEngine.Type], root: String, machine: MachineFacts, date: String) {
        self.plan = plan
        self.engines = engines
        self.root = root
        report = RunReport(
            date: date, plan: plan, machine: machine, data: DataFacts(seed: plan.seed),
            engines: engines.map { $0.name }, keelEngineBuiltIn: engines.contains { $0.name == keelName })
    }

    func run() throws -> RunReport {
        if plan.needsBulkLoad { try runOnBulkLoadedStores() }
        if plan.hasObjectWorkloads { try runObjectWorkloads() }
        let commitData = KeyValueSet(count: max(plan.commit1, plan.commit16), seed: plan.seed &+ 1)
        for durability in Durability.allCases {
            if plan.includes(.commit1) {
                try runCommits(.commit1, threads: 1, count: plan.commit1, durability: durability, data: commitData)
            }
            if plan.includes(.commit16) {
                try runCommits(
                    .commit16, threads: plan.commitThreads, count: plan.commit16, durability: durability, data: commitData)
            }
        }
        return report
    }

    // MARK: - bulk-insert, point-read, range-scan, compact

    private func runOnBulkLoadedStores() throws {
        progress("generating \(grouped(plan.keys)) keys")
        let data = KeyValueSet(count: plan.keys, seed: plan.seed)
        var stores: [(name: String, store: any MainStore)] = []
        for engine in engines {
            let directory = try makeDirectory("\(engine.name.lowercased())-main")
            stores.append((engine.name, try engine.openMainStore(directory: directory)))
        }

        // bulk-insert: every key in one transaction, committed, then checkpointed; timed to the
        // end of the checkpoint, when the data is in the page file for both engines.
        var results: [String: Measurement] = [:]
        var loadedBytes: [String: Int] = [:]
        for (name, store) in stores {
            let (_, commitSeconds) = try step("bulk-insert", name) { try store.bulkInsert(data, count: data.count) }
            let (_, checkpointSeconds) = try timed { try store.checkpoint() }
            loadedBytes[name] = storeBytes(in: store.directory)
            let files = storeFiles(in: store.directory).sorted { $0.key < $1.key }
            progress("bulk-insert: \(name) files: " + files.map { "\($0.key) \($0.value) B" }.joined(separator: " + "))
            results[name] = Measurement(
                ops: data.count, seconds: commitSeconds + checkpointSeconds,
                details: [
                    "commitSeconds": commitSeconds, "checkpointSeconds": checkpointSeconds,
                    "storeBytes": Double(loadedBytes[name]!),
                ])
        }
        if plan.includes(.bulkInsert) {
            report.rows.append(Row(workload: .bulkInsert, durability: nil, ops: data.count, results: results))
        }

        if plan.includes(.pointRead) {
            func keys(_ order: [Int32]) -> [[UInt8]] { order.map { Array(data.key(Int($0))) } }
            let warmup = keys(randomIndices(plan.warmupReads, below: data.count, seed: plan.seed &+ 2))
            let order = keys(randomIndices(plan.pointReads, below: data.count, seed: plan.seed &+ 3))
            for (_, store) in stores { _ = try store.pointReads(warmup) }
            let results = try readRounds("point-read", stores, ops: order.count) { store in
                let tally = try store.pointReads(order)
                return (tally, tally.rows == order.count ? nil : "found \(tally.rows) of \(order.count) keys")
            }
            report.rows.append(Row(workload: .pointRead, durability: nil, ops: order.count, results: results))
        }

        if plan.includes(.rangeScan) {
            let starts = randomIndices(plan.rangeScans, below: data.count, seed: plan.seed &+ 4)
            let results = try readRounds("range-scan", stores, ops: starts.count) { store in
                (try store.rangeScans(data, starts: starts, length: plan.rangeLength), nil)
            }
            report.rows.append(Row(workload: .rangeScan, durability: nil, ops: starts.count, results: results))
        }

        if plan.includes(.compact) {
            let doomed = (0..<data.count).filter { $0 % plan.keepEvery != 0 }.map { Int32($0) }
            let remaining = data.count - doomed.count
            var tallies: [String: Tally] = [:]
            for (name, store) in stores {
                let (deleted, deleteSeconds) = try step("compact: delete \(grouped(doomed.count)) keys", name) {
                    try store.delete(data, indices: doomed)
                }
                if deleted != doomed.count { fail("compact: \(name) deleted \(deleted) of \(doomed.count) keys") }
                let (_, checkpointSeconds) = try timed { try store.checkpoint() }
                let before = storeFiles(in: store.directory)
                let (details, compactSeconds) = try step("compact", name) { try store.compact() }
                let after = storeFiles(in: store.directory)
                let tally = try store.fullScan()
                if tally.rows != remaining { fail("compact: \(name) holds \(tally.rows) keys, expected \(remaining)") }
                tallies[name] = tally
                let live = KeyValueSet.payloadBytes(pairs: remaining)
                report.compaction[name] = CompactionFigures(
                    keysDeleted: deleted, keysRemaining: tally.rows, liveBytes: live,
                    bytesLoaded: loadedBytes[name] ?? 0, bytesBefore: before.values.reduce(0, +),
                    bytesAfter: after.values.reduce(0, +), filesBefore: before, filesAfter: after,
                    afterOverLive: Double(after.values.reduce(0, +)) / Double(live), deleteSeconds: deleteSeconds,
                    checkpointSeconds: checkpointSeconds, compactSeconds: compactSeconds, details: details)
            }
            crossCheck("compact (full scan after)", tallies)
        }

        for (_, store) in stores {
            try store.close()
            removeDirectory(store.directory)
        }
    }

    // MARK: - commit-1, commit-16

    private func runCommits(_ workload: Workload, threads: Int, count: Int, durability: Durability, data: KeyValueSet)
        throws
    {
        let name = "\(workload.rawValue) (\(durability.rawValue))"
        var stores: [(name: String, store: any CommitStore, directory: String)] = []
        for engine in engines {
            let directory = try makeDirectory("\(engine.name.lowercased())-\(workload.rawValue)-\(durability.rawValue)")
            stores.append((engine.name, try engine.openCommitStore(directory: directory, durability: durability), directory))
        }
        // The commits run in slices, the engines taking turns (alternating which goes first), so
        // that a burst of someone else's disk traffic lands on both rather than on one.
        let slices = plan.commitSlices(threads: threads)
        var seconds: [String: Double] = [:]
        var latencies: [String: [UInt64]] = [:]
        var steadyOps: [String: Int] = [:]
        var steadySeconds: [String: Double] = [:]
        var countersBefore: [String: [String: Double]] = [:]
        for (engine, store, _) in stores { countersBefore[engine] = try store.counters() }
        for slice in 0..<slices {
            let range = (count * slice / slices)..<(count * (slice + 1) / slices)
            for (engine, store, _) in slice % 2 == 0 ? stores : stores.reversed() {
                let run = try commitConcurrently(store: store, data: data, range: range, threads: threads)
                seconds[engine, default: 0] += run.seconds
                latencies[engine, default: []].append(contentsOf: run.latencies)
                steadyOps[engine, default: 0] += run.steadyOps
                steadySeconds[engine, default: 0] += run.steadySeconds
            }
        }
        var results: [String: Measurement] = [:]
        for (engine, store, directory) in stores {
            var measurement = Measurement(
                ops: latencies[engine]?.count ?? 0, seconds: seconds[engine] ?? 0,
                latency: Latency(nanos: latencies[engine] ?? []),
                details: [
                    "slices": Double(slices), "steadyOps": Double(steadyOps[engine] ?? 0),
                    "steadySeconds": steadySeconds[engine] ?? 0,
                    "steadyOpsPerSecond": (steadySeconds[engine] ?? 0) > 0
                        ? Double(steadyOps[engine] ?? 0) / steadySeconds[engine]! : 0,
                ])
            progress("\(name): \(engine) \(duration(measurement.seconds))")
            for (counter, after) in try store.counters() {
                measurement.details[counter] = after - (countersBefore[engine]?[counter] ?? 0)
            }
            // Durability check: one thread in full mode cannot share syncs, so an engine that
            // counts its log syncs must have made at least one per commit.
            if durability == .full, threads == 1, let syncs = measurement.details["logSyncs"], syncs < Double(count) {
                fail("\(name): \(engine) acknowledged \(count) commits with only \(Int(syncs)) log syncs")
            }
            let keys = try store.keyCount()
            if keys != count { fail("\(name): \(engine) holds \(keys) keys after \(count) commits") }
            try store.close()
            removeDirectory(directory)
            results[engine] = measurement
        }
        report.rows.append(Row(workload: workload, durability: durability, ops: count, results: results))
    }

    // MARK: - helpers

    /// Runs a read workload `plan.readRounds` times on every store, alternating which engine goes
    /// first, cross-checks every round's tallies, and keeps each engine's median round.
    private func readRounds(
        _ what: String, _ stores: [(name: String, store: any MainStore)], ops: Int,
        _ body: (any MainStore) throws -> (Tally, String?)
    ) throws -> [String: Measurement] {
        var seconds: [String: [Double]] = [:]
        var rows: [String: Int] = [:]
        for round in 0..<plan.readRounds {
            var tallies: [String: Tally] = [:]
            for (name, store) in round % 2 == 0 ? stores : stores.reversed() {
                let ((tally, problem), time) = try step("\(what) round \(round + 1)", name) { try body(store) }
                if let problem { fail("\(what): \(name) \(problem)") }
                tallies[name] = tally
                rows[name] = tally.rows
                seconds[name, default: []].append(time)
            }
            crossCheck(what, tallies)
        }
        var results: [String: Measurement] = [:]
        for (name, times) in seconds {
            var details: [String: Double] = ["rows": Double(rows[name] ?? 0)]
            for (i, time) in times.enumerated() { details["round\(i + 1)Seconds"] = time }
            results[name] = Measurement(ops: ops, seconds: times.sorted()[times.count / 2], details: details)
        }
        return results
    }

    func step<T>(_ what: String, _ engine: String, _ body: () throws -> T) throws -> (T, Double) {
        let (value, seconds) = try timed(body)
        progress("\(what): \(engine) \(duration(seconds))")
        return (value, seconds)
    }

    func fail(_ message: String) {
        progress("FAILED CHECK: " + message)
        report.failures.append(message)
    }

    /// Both engines did the same reads on the same data, so they must have seen the same bytes.
    func crossCheck<T: Equatable>(_ what: String, _ tallies: [String: T]) {
        guard let first = tallies.first else { return }
        for (name, tally) in tallies where tally != first.value {
            fail("\(what): \(name) returned \(tally) but \(first.key) returned \(first.value)")
        }
    }

    func makeDirectory(_ name: String) throws -> String {
        let path = root + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    func removeDirectory(_ path: String) {
        if keepsStores { return }
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Commits `data[range]` on `threads` threads (thread t commits range.lowerBound + t, + t +
/// threads, ...), each thread with its own session opened before the clock starts. The wall time
/// runs from releasing the threads together to the last one finishing. Returns it with every
/// commit's latency, and the steady part: the middle 80% of the commits by completion time (from
/// the 10th to the 90th percentile) and the time they took, leaving out the ramp-up and the
/// stragglers draining at the end.
func commitConcurrently(store: any CommitStore, data: KeyValueSet, range: Range<Int>, threads: Int) throws
    -> (seconds: Double, latencies: [UInt64], steadyOps: Int, steadySeconds: Double)
{
    final class Shared: Sendable {
        let latencies = Mutex<[UInt64]>([])  // guards the merged per-commit latencies
        let ends = Mutex<[UInt64]>([])  // guards the merged commit completion times (monotonic ns)
        let failure = Mutex<String?>(nil)  // guards the first error any thread met
        let stop = Atomic<Bool>(false)
        func fail(_ error: any Error) {
            failure.withLock { if $0 == nil { $0 = "\(error)" } }
            stop.store(true, ordering: .relaxed)
        }
    }
    let shared = Shared()
    let ready = DispatchGroup()
    let done = DispatchGroup()
    let go = DispatchSemaphore(value: 0)
    for t in 0..<threads {
        ready.enter()
        done.enter()
        let thread = Thread {
            defer { done.leave() }
            let session: (any CommitSession)?
            do { session = try store.makeSession() } catch {
                session = nil
                shared.fail(error)
            }
            ready.leave()
            go.wait()
            guard let session else { return }
            var local: [UInt64] = []
            var ends: [UInt64] = []
            local.reserveCapacity(range.count / threads + 1)
            ends.reserveCapacity(range.count / threads + 1)
            var i = range.lowerBound + t
            while i < range.upperBound && !shared.stop.load(ordering: .relaxed) {
                let start = monotonicNanos()
                do { try session.commit(key: data.key(i), value: data.value(i)) } catch {
                    shared.fail(error)
                    break
                }
                let end = monotonicNanos()
                local.append(end - start)
                ends.append(end)
                i += threads
            }
            shared.latencies.withLock { $0.append(contentsOf: local) }
            shared.ends.withLock { $0.append(contentsOf: ends) }
        }
        thread.start()
    }
    ready.wait()
    let start = monotonicNanos()
    for _ in 0..<threads { go.signal() }
    done.wait()
    let seconds = Double(monotonicNanos() - start) / 1e9
    if let failure = shared.failure.withLock({ $0 }) { throw BenchError(failure) }
    let ends = shared.ends.withLock { $0 }.sorted()
    var steadyOps = 0
    var steadySeconds = 0.0
    if ends.count >= 10 {
        let low = ends.count / 10
        let high = ends.count - 1 - ends.count / 10
        steadyOps = high - low
        steadySeconds = Double(ends[high] - ends[low]) / 1e9
    }
    return (seconds, shared.latencies.withLock { $0 }, steadyOps, steadySeconds)
}

/// A progress line on standard error (standard output carries only the table or the JSON).
func progress(_ line: String) {
    let text = "keel-bench: " + line + "\n"
    var bytes = Array(text.utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}
