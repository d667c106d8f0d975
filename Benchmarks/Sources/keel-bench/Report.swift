/// The human-readable table (the default output).
extension RunReport {
    func renderText() -> String {
        var out: [String] = []
        let m = machine
        out.append("keel-bench: Keel against SQLite, side by side in one run\(plan.quick ? " (--quick)" : "")")
        out.append("date      \(date)")
        out.append(
            "machine   \(m.cpuCount) CPUs\(m.cpuModel.map { " (\($0))" } ?? ""), load average \(m.loadAverage ?? "?") at start"
                + (m.loadAverageAtEnd.map { ", \($0) at end" } ?? ""))
        var disk = "disk      \(m.benchDirectory) (\(m.fileSystem)): preallocated 4 KiB overwrite + fdatasync "
        if let f = m.fdatasync {
            disk += "p50 \(micros(f.p50Micros)), p99 \(micros(f.p99Micros)) (\(f.samples) runs)"
        }
        if let e = m.fdatasyncAtEnd {
            disk += "; after the run p50 \(micros(e.p50Micros)), p99 \(micros(e.p99Micros))"
        }
        out.append(disk)
        if let busy = m.diskLooksBusy {
            out.append("          WARNING: \(busy); something else was using the disk. Rerun when the machine is quiet.")
        }
        if m.isVolatileFileSystem {
            out.append("          WARNING: \(m.fileSystem) does not persist; fdatasync is free here and commit figures mean nothing. Use --dir on a real disk.")
        }
        out.append("CRC32C    hardware-accelerated: \(m.crc32cHardwareAccelerated ? "yes" : "no")")
        out.append("Keel      KeelStorage: page 4096 B, cache 64 MiB, sync .full (.normal in the normal rows)"
            + (keelEngineBuiltIn ? "" : "  [NOT BUILT IN: engine façade not in KeelStorage yet; Keel columns empty]"))
        out.append("SQLite    \(m.sqliteVersion), C API: journal_mode=WAL, synchronous=FULL (NORMAL in the normal rows),")
        out.append("          page_size=4096, cache_size=-65536 (64 MiB), kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID, prepared statements")
        if plan.hasObjectWorkloads {
            out.append("objects   Keel: KeelModel ObjectStore (Department 1—* Employee, cascade; Employee.name indexed; Department.name unique);")
            out.append("          SQLite: tables department/employee, FOREIGN KEY ON DELETE CASCADE (foreign_keys=ON), indexes on name and department_id")
            out.append("          \(grouped(plan.objectEmployees)) employees in \(grouped(plan.objectDepartments)) departments of \(grouped(plan.employeesPerDepartment)); \(grouped(plan.objectChunk)) per batch / save")
        }
        if plan.workloads.contains(where: { !$0.isObjectWorkload }) {
            out.append("data      \(grouped(plan.keys)) keys of \(data.keyBytes) random bytes; values of \(data.valueBytes) bytes = \(KeyValueSet.randomValuePrefix) random + \(data.valueBytes - KeyValueSet.randomValuePrefix) repeated (~50% compressible); seed \(data.seed)")
        }
        out.append("")

        // The main table.
        var table: [[String]] = [[
            "workload", "ops", "Keel ops/s", "SQLite ops/s", "Keel/SQLite", "target", "Keel p50 / p99 / max", "SQLite p50 / p99 / max",
        ]]
        for row in rows {
            let keel = row.results[keelName]
            let sqlite = row.results[SQLiteEngine.name]
            func latency(_ m: Measurement?) -> String {
                guard let l = m?.latency else { return row.durability == nil ? "" : "—" }
                return "\(micros(l.p50Micros)) / \(micros(l.p99Micros)) / \(micros(l.maxMicros))"
            }
            let ratio = row.ratio.map { fixed($0, 2) + "×" + (row.meetsTarget == true ? "" : " (below)") } ?? "—"
            table.append([
                row.name, grouped(row.ops), keel.map { rate($0.opsPerSecond) } ?? "—",
                sqlite.map { rate($0.opsPerSecond) } ?? "—", ratio, "≥ " + fixed(row.target, 0) + "×",
                latency(keel), latency(sqlite),
            ])
        }
        out.append(contentsOf: layout(table, leftAligned: [0]))
        let syncs = rows.compactMap { row -> String? in
            guard let n = row.results[keelName]?.details["logSyncs"], row.durability == .full else { return nil }
            let per = n > 0 ? ", " + fixed(Double(row.ops) / n, 2) + " commits per sync" : ""
            return "\(row.name) \(grouped(Int(n))) for \(grouped(row.ops)) commits\(per)"
        }
        if !syncs.isEmpty { out.append("Keel log fdatasyncs (StoreStatistics.logSyncs): " + syncs.joined(separator: "; ")) }
        for row in rows where row.workload == .commit16 {
            let rates = [keelName, SQLiteEngine.name].map { row.results[$0]?.details["steadyOpsPerSecond"] }
            guard let keel = rates[0], let sqlite = rates[1], keel > 0, sqlite > 0 else { continue }
            out.append(
                "\(row.name), middle 80% of the commits (no ramp-up, no stragglers): Keel \(rate(keel))/s, "
                    + "SQLite \(rate(sqlite))/s, \(fixed(keel / sqlite, 2))×")
        }
        for row in rows where row.workload == .objectCascade {
            // The same deletes with the background work each left counted (Keel's checkpoint,
            // waited for untimed; SQLite's autocheckpoint is already inside its DELETE).
            let totals = [keelName, SQLiteEngine.name].map { name -> Double? in
                guard let details = row.results[name]?.details else { return nil }
                var sums: [Double] = []
                var round = 1
                while let t = details["round\(round)Seconds"] {
                    sums.append(t + (details["round\(round)BackgroundSeconds"] ?? 0))
                    round += 1
                }
                return sums.isEmpty ? nil : sums.sorted()[sums.count / 2]
            }
            guard let keel = totals[0], let sqlite = totals[1], keel > 0 else { continue }
            out.append(
                "\(row.name) with its background checkpoint counted (median of delete + checkpoint): Keel \(duration(keel)), "
                    + "SQLite \(duration(sqlite)), \(fixed(sqlite / keel, 2))×")
        }

        if !compaction.isEmpty {
            out.append("")
            let names = [keelName, SQLiteEngine.name]
            let any = compaction.values.first!
            var c: [[String]] = [[
                "compact: delete 90% (\(grouped(any.keysDeleted)) keys), checkpoint, compact", "Keel", "SQLite (VACUUM)",
            ]]
            func line(_ label: String, _ value: (CompactionFigures) -> String) {
                c.append([label] + names.map { compaction[$0].map(value) ?? "—" })
            }
            line("live data: key + value bytes of \(grouped(any.keysRemaining)) keys") { bytes($0.liveBytes) }
            line("store files after the bulk load") { bytes($0.bytesLoaded) }
            line("before compaction (after deletes + checkpoint)") { bytes($0.bytesBefore) }
            line("after compaction") { bytes($0.bytesAfter) }
            line("after / live data (target Keel ≤ 1.10×)") { fixed($0.afterOverLive, 2) + "×" }
            line("time: delete / checkpoint / compact") {
                "\(duration($0.deleteSeconds)) / \(duration($0.checkpointSeconds)) / \(duration($0.compactSeconds))"
            }
            out.append(contentsOf: layout(c, leftAligned: [0]))
            for name in names {
                guard let figures = compaction[name] else { continue }
                let files = figures.filesAfter.sorted { $0.key < $1.key }.map { "\($0.key) \(bytes($0.value))" }
                out.append("files after compaction, \(name): " + files.joined(separator: " + "))
            }
        }

        out.append("")
        out.append("Keel/SQLite is Keel's throughput over SQLite's: above 1 Keel is faster. Latencies are per commit (nearest rank).")
        if plan.workloads.contains(where: { !$0.isObjectWorkload }) {
            out.append("bulk-insert: all keys in one transaction, commit, checkpoint (timed to the end of the checkpoint).")
            out.append("point-read: \(grouped(plan.pointReads)) random existing keys in one read transaction, after \(grouped(plan.warmupReads)) untimed warm-up reads; median of \(plan.readRounds) rounds.")
            out.append("range-scan: first \(plan.rangeLength) keys >= a random existing key, in key order, all scans in one read transaction; median of \(plan.readRounds) rounds.")
            out.append("commit-N: single-put transactions of new keys into a fresh store from N threads, each durable per its sync mode when it returns.")
            out.append("Every read workload touches every byte returned; both engines must return the same bytes (checked).")
        }
        if plan.hasObjectWorkloads {
            out.append("obj-batch-insert: employees with their department by batches of \(grouped(plan.objectChunk)), one durable transaction each (Keel batchInsert).")
            out.append("obj-save: the same through a context in a fresh store: ObjectContext.insert per object, save() every \(grouped(plan.objectChunk)); SQLite as in obj-batch-insert with rowids assigned by SQLite.")
            out.append("obj-store-save: the same without the context: newObjectID per object, then ObjectStore.save(ChangeSet) of \(grouped(plan.objectChunk)) inserts.")
            out.append("obj-fetch: \(grouped(plan.objectFetches)) employees by ID in random order, one read transaction, every attribute materialised; median of \(plan.readRounds) rounds.")
            out.append("obj-cascade: delete one department with its \(grouped(plan.employeesPerDepartment)) employees (cascade), one durable transaction; ops = employees deleted; median of \(plan.cascadeRounds) departments; Keel's background checkpoint after each delete is waited for untimed (JSON: roundNBackgroundSeconds).")
        }
        if let m = contextMemory {
            out.append("context memory, \(grouped(m.pendingInserts)) pending inserts: " + (m.peakRSSBytes.map { "peak RSS +" + bytes($0) + " (" + m.note + ")" } ?? m.note))
        }
        if !failures.isEmpty {
            out.append("")
            out.append("CHECKS FAILED (these figures are not valid):")
            out.append(contentsOf: failures.map { "  - " + $0 })
        }
        out.append("")
        out.append("total \(duration(totalSeconds))")
        return out.joined(separator: "\n")
    }
}

/// Pads every column to its widest cell: left-aligned for the columns named, right otherwise.
private func layout(_ rows: [[String]], leftAligned: Set<Int>) -> [String] {
    let columns = rows.map(\.count).max() ?? 0
    var widths = [Int](repeating: 0, count: columns)
    for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
    return rows.map { row in
        row.enumerated().map { i, cell in
            let pad = String(repeating: " ", count: widths[i] - cell.count)
            return leftAligned.contains(i) ? cell + pad : pad + cell
        }.joined(separator: "  ").replacing(/\s+$/, with: "")
    }
}
