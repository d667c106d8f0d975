// The object workloads (issue 3, "Figures"; Docs/Performance.md, "Object layer"):
//   obj-batch-insert  N employees with their department, by batches of 10k (one transaction each)
//   obj-save          the same through an ObjectContext, saved every 10k, in a fresh store
//   obj-store-save    the same as change sets handed to ObjectStore.save (no context)
//   obj-fetch         100k employees by ID, random order, one read transaction (3 rounds, median)
//   obj-cascade       delete a department with 10k employees under cascade (3 rounds, median)
// The chunks of the inserts alternate which engine goes first, so a burst of someone else's
// disk traffic lands on both.

import Foundation

extension Runner {
    func runObjectWorkloads() throws {
        let n = plan.objectEmployees
        progress("generating \(grouped(n)) employees in \(grouped(plan.objectDepartments)) departments")
        let data = EmployeeSet(count: n, departments: plan.objectDepartments, seed: plan.seed &+ 10)
        let chunks = stride(from: 0, to: n, by: plan.objectChunk).map { $0..<min(n, $0 + plan.objectChunk) }

        if plan.includes(.objectBatchInsert) || plan.includes(.objectFetch) || plan.includes(.objectCascade) {
            let stores = try openObjectStores("batch", data)
            let seconds = try insertAll(stores, chunks, data, what: "obj-batch-insert") { try $0.batchInsert() }
            if plan.includes(.objectBatchInsert) {
                report.rows.append(Row(workload: .objectBatchInsert, durability: nil, ops: n, results: insertResults(stores, seconds)))
            }
            for (_, store) in stores { try store.checkpoint() }
            if plan.includes(.objectFetch) { try runObjectFetch(stores, data) }
            if plan.includes(.objectCascade) { try runObjectCascade(stores, data) }
            for (_, store) in stores {
                try store.close()
                removeDirectory(store.directory)
            }
        }

        for (workload, label) in [(Workload.objectSave, "saves"), (.objectStoreSave, "store-saves")] where plan.includes(workload) {
            let stores = try openObjectStores(label, data)
            let seconds = try insertAll(stores, chunks, data, what: workload.rawValue) { store in
                if workload == .objectSave { try store.saveInserts() } else { try store.storeSaveInserts() }
            }
            report.rows.append(Row(workload: workload, durability: nil, ops: n, results: insertResults(stores, seconds)))
            for (_, store) in stores {
                try store.close()
                removeDirectory(store.directory)
            }
        }
        if plan.includes(.objectSave) { report.contextMemory = try measureContextMemory() }
    }

    /// Runs this program again as a child (`--context-memory-probe`), which fills one context
    /// with `plan.contextPendingInserts` pending inserts and reports its VmHWM before and after.
    private func measureContextMemory() throws -> ContextMemoryFigure? {
        guard objectEngines.contains(where: { $0.name == keelName }) else { return nil }
        let n = plan.contextPendingInserts
        let directory = try makeDirectory("keel-context-memory")
        defer { removeDirectory(directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["--context-memory-probe", directory, "--context-inserts", "\(n)", "--seed", "\(plan.seed)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let numbers = output.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard process.terminationStatus == 0, numbers.count == 4 else {
            fail("context memory probe failed (exit \(process.terminationStatus)): \(output)")
            return nil
        }
        let figure = ContextMemoryFigure(
            pendingInserts: n, peakRSSBytes: numbers[1] - numbers[0], hwmBeforeBytes: numbers[0], hwmHoldingBytes: numbers[1],
            rssHoldingBytes: numbers[2], hwmAfterSaveBytes: numbers[3],
            note: "VmHWM growth of a child process from an open store to one ObjectContext holding the inserts; "
                + "\(grouped((numbers[1] - numbers[0]) / max(n, 1))) B per pending insert; peak through its save +\(bytes(numbers[3] - numbers[0]))")
        progress("context memory: \(figure.note)")
        return figure
    }

    private func openObjectStores(_ label: String, _ data: EmployeeSet) throws -> [(name: String, store: any ObjectBenchStore)] {
        var stores: [(name: String, store: any ObjectBenchStore)] = []
        for engine in objectEngines {
            let directory = try makeDirectory("\(engine.name.lowercased())-objects-\(label)")
            stores.append((engine.name, try engine.open(directory: directory, data: data, plan: plan)))
        }
        return stores
    }

    /// Runs `body` once per chunk per engine (inputs prepared untimed), the engines alternating
    /// which goes first; returns each engine's summed seconds and checks the employee counts.
    private func insertAll(
        _ stores: [(name: String, store: any ObjectBenchStore)], _ chunks: [Range<Int>], _ data: EmployeeSet, what: String,
        _ body: (any ObjectBenchStore) throws -> Void
    ) throws -> [String: Double] {
        var seconds: [String: Double] = [:]
        for (k, chunk) in chunks.enumerated() {
            for (name, store) in k % 2 == 0 ? stores : stores.reversed() {
                store.prepare(data, chunk)
                let (_, s) = try timed { try body(store) }
                seconds[name, default: 0] += s
            }
        }
        for (name, store) in stores {
            progress("\(what): \(name) \(duration(seconds[name] ?? 0))")
            let count = try store.employeeCount()
            if count != data.count { fail("\(what): \(name) holds \(count) employees, expected \(data.count)") }
        }
        return seconds
    }

    private func insertResults(_ stores: [(name: String, store: any ObjectBenchStore)], _ seconds: [String: Double])
        -> [String: Measurement]
    {
        var results: [String: Measurement] = [:]
        for (name, store) in stores {
            results[name] = Measurement(
                ops: plan.objectEmployees, seconds: seconds[name] ?? 0,
                details: [
                    "chunk": Double(plan.objectChunk), "transactions": Double((plan.objectEmployees + plan.objectChunk - 1) / plan.objectChunk),
                    "storeBytes": Double(storeBytes(in: store.directory)),
                ])
        }
        return results
    }

    private func runObjectFetch(_ stores: [(name: String, store: any ObjectBenchStore)], _ data: EmployeeSet) throws {
        let order = randomIndices(plan.objectFetches, below: data.count, seed: plan.seed &+ 11)
        let warmup = randomIndices(plan.warmupReads, below: data.count, seed: plan.seed &+ 12)
        for (_, store) in stores { _ = try store.fetch(warmup) }
        var seconds: [String: [Double]] = [:]
        for round in 0..<plan.readRounds {
            var tallies: [String: ObjectTally] = [:]
            for (name, store) in round % 2 == 0 ? stores : stores.reversed() {
                let (tally, time) = try step("obj-fetch round \(round + 1)", name) { try store.fetch(order) }
                if tally.found != order.count { fail("obj-fetch: \(name) found \(tally.found) of \(order.count) objects") }
                tallies[name] = tally
                seconds[name, default: []].append(time)
            }
            crossCheck("obj-fetch", tallies)
        }
        // Salaries, exact decimals, compared untimed on a sample (and against the data set).
        let sample = Array(order.prefix(2_000))
        var salaries: [String: [String]] = [:]
        for (name, store) in stores { salaries[name] = try store.salaries(sample) }
        let expected = sample.map { i -> String in
            var text = data.salaryText(Int(i))
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
            return text
        }
        for (name, got) in salaries where got != expected {
            let bad = zip(got, expected).first { $0 != $1 }
            fail("obj-fetch: \(name) salaries differ from the data set (first: \(bad.map { "\($0.0) for \($0.1)" } ?? "count"))")
        }
        var results: [String: Measurement] = [:]
        for (name, times) in seconds {
            var details: [String: Double] = [:]
            for (i, t) in times.enumerated() { details["round\(i + 1)Seconds"] = t }
            results[name] = Measurement(ops: order.count, seconds: times.sorted()[times.count / 2], details: details)
        }
        report.rows.append(Row(workload: .objectFetch, durability: nil, ops: order.count, results: results))
    }

    private func runObjectCascade(_ stores: [(name: String, store: any ObjectBenchStore)], _ data: EmployeeSet) throws {
        let per = data.employeesPerDepartment
        let rounds = min(plan.cascadeRounds, data.departments)
        var times: [String: [Double]] = [:]
        var settled: [String: [Double]] = [:]
        for d in 0..<rounds {
            for (name, store) in d % 2 == 0 ? stores : stores.reversed() {
                let before = try store.employeeCount(department: d)
                if before != per { fail("obj-cascade: \(name) department \(d) has \(before) employees, expected \(per)") }
                try store.prepareDelete(d)
                let (said, time) = try step("obj-cascade: department \(d)", name) { try store.deleteDepartment(d) }
                // Untimed, before the other engine's turn so it does not run beside it: Keel's
                // background checkpoint after the delete (SQLite's is inside its DELETE).
                let (_, settle) = try timed { try store.waitForBackgroundWork() }
                settled[name, default: []].append(settle)
                if settle >= 0.001 { progress("obj-cascade: department \(d): \(name) background checkpoint after it \(duration(settle)) (untimed)") }
                if said >= 0, said != per { fail("obj-cascade: \(name) says it deleted \(said) employees, expected \(per)") }
                let left = try store.employeeCount()
                if left != data.count - (d + 1) * per {
                    fail("obj-cascade: \(name) holds \(left) employees after deleting department \(d), expected \(data.count - (d + 1) * per)")
                }
                times[name, default: []].append(time)
            }
        }
        var results: [String: Measurement] = [:]
        for (name, t) in times {
            var details: [String: Double] = [:]
            for (i, s) in t.enumerated() { details["round\(i + 1)Seconds"] = s }
            // The background work each delete left (Keel's checkpoint), waited for untimed.
            for (i, s) in (settled[name] ?? []).enumerated() { details["round\(i + 1)BackgroundSeconds"] = s }
            results[name] = Measurement(
                ops: per, seconds: t.sorted()[t.count / 2], latency: Latency(nanos: t.map { UInt64($0 * 1e9) }), details: details)
        }
        report.rows.append(Row(workload: .objectCascade, durability: nil, ops: per, results: results))
    }
}

/// Peak memory of a context holding pending inserts (issue 3, "Figures").
struct ContextMemoryFigure: Codable, Sendable {
    var pendingInserts: Int
    /// VmHWM growth, in bytes, of a child process from the open store to the filled context.
    var peakRSSBytes: Int?
    var hwmBeforeBytes: Int?
    var hwmHoldingBytes: Int?
    var rssHoldingBytes: Int?
    /// VmHWM after the context saved (the save's own peak included).
    var hwmAfterSaveBytes: Int?
    var note: String
}
