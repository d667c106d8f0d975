// The object workloads (issue 3, "Figures"; Docs/Performance.md, "Object layer"):
//   obj-batch-insert  N employees with their department, by batches of 10k (one transaction each)
//   obj-save          the same by saves of 10k in a fresh store (IDs handed out one by one)
//   obj-fetch         100k employees by ID, random order, one read transaction (3 rounds, median)
//   obj-cascade       delete a department with 10k employees under cascade (3 rounds, median)
// The chunks of the inserts alternate which engine goes first, so a burst of someone else's
// disk traffic lands on both.

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

        if plan.includes(.objectSave) {
            let stores = try openObjectStores("saves", data)
            let seconds = try insertAll(stores, chunks, data, what: "obj-save") { try $0.saveInserts() }
            report.rows.append(Row(workload: .objectSave, durability: nil, ops: n, results: insertResults(stores, seconds)))
            for (_, store) in stores {
                try store.close()
                removeDirectory(store.directory)
            }
        }
        report.contextMemory = ContextMemoryFigure(
            pendingInserts: 100_000, peakRSSBytes: nil,
            note: "not measured: ObjectContext is not on main yet (the row appears once it is)")
    }

    private func openObjectStores(_ label: String, _ data: EmployeeSet) throws -> [(name: String, store: any ObjectBenchStore)] {
        var stores: [(name: String, store: any ObjectBenchStore)] = []
        for engine in objectEngines {
            let directory = try makeDirectory("\(engine.name.lowercased())-objects-\(label)")
            stores.append((engine.name, try engine.open(directory: directory, data: data)))
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
        for d in 0..<rounds {
            for (name, store) in d % 2 == 0 ? stores : stores.reversed() {
                let before = try store.employeeCount(department: d)
                if before != per { fail("obj-cascade: \(name) department \(d) has \(before) employees, expected \(per)") }
                try store.prepareDelete(d)
                let (said, time) = try step("obj-cascade: department \(d)", name) { try store.deleteDepartment(d) }
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
            results[name] = Measurement(
                ops: per, seconds: t.sorted()[t.count / 2], latency: Latency(nanos: t.map { UInt64($0 * 1e9) }), details: details)
        }
        report.rows.append(Row(workload: .objectCascade, durability: nil, ops: per, results: results))
    }
}

/// Peak memory of a context holding pending inserts (issue 3, "Figures").
struct ContextMemoryFigure: Codable, Sendable {
    var pendingInserts: Int
    /// VmHWM growth, in bytes, of a child process that builds the context; nil when not measured.
    var peakRSSBytes: Int?
    var note: String
}
