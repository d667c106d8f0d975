import ArgumentParser

/// The workloads, by the names `--workload` takes.
enum Workload: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    case bulkInsert = "bulk-insert"
    case pointRead = "point-read"
    case rangeScan = "range-scan"
    case commit1 = "commit-1"
    case commit16 = "commit-16"
    case compact
    // The object layer (issue 3): KeelModel's ObjectStore against SQLite tables.
    case objectBatchInsert = "obj-batch-insert"
    case objectSave = "obj-save"
    case objectStoreSave = "obj-store-save"
    case objectFetch = "obj-fetch"
    case objectCascade = "obj-cascade"

    /// Whether the workload runs on the bulk-loaded key/value store.
    var needsBulkLoad: Bool { !isObjectWorkload && self != .commit1 && self != .commit16 }

    /// Whether the workload is one of the object layer's (the `objects` suite).
    var isObjectWorkload: Bool {
        switch self {
        case .objectBatchInsert, .objectSave, .objectStoreSave, .objectFetch, .objectCascade: true
        default: false
        }
    }
}

/// Groups of workloads for `--suite`.
enum Suite: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    /// The storage engine's key/value workloads (issue 2).
    case storage
    /// The object layer's workloads (issue 3).
    case objects
    case all

    func contains(_ w: Workload) -> Bool {
        switch self {
        case .storage: !w.isObjectWorkload
        case .objects: w.isObjectWorkload
        case .all: true
        }
    }
}

/// How much of each workload a run does: the full sizes of issue 2's "Figures", or the quick ones.
struct Plan: Codable, Sendable {
    var quick: Bool
    var workloads: [Workload]
    var seed: UInt64
    /// Keys of the bulk insert (and of the store the reads, scans and compaction run on).
    var keys: Int
    var pointReads = 100_000
    /// Untimed point reads (a different random sequence) before the timed ones: a warm cache.
    var warmupReads = 10_000
    var rangeScans: Int
    /// point-read and range-scan run this many times per engine, alternating which engine goes
    /// first; each engine's median round is its figure (reads change nothing, so rounds are cheap
    /// insurance against a noisy neighbour).
    var readRounds = 3
    var rangeLength = 100
    var commit1: Int
    var commit16: Int
    var commitThreads = 16
    /// compact: every key whose insertion index is not a multiple of 10 is deleted (90%).
    var keepEvery = 10
    var fdatasyncIterations = 200
    /// Object workloads: employees inserted (by batches, and again by saves, each in a fresh store).
    var objectEmployees: Int
    /// Employees per department (the cascade row deletes one department of this many).
    var employeesPerDepartment = 10_000
    /// Employees per batch-insert call and per save.
    var objectChunk = 10_000
    /// Objects fetched by ID (random order, with replacement) per round.
    var objectFetches = 100_000
    /// Departments deleted by the cascade row, one per round, the engines alternating.
    var cascadeRounds = 3
    /// Pending inserts of the context-memory figure (issue 3: 100k).
    var contextPendingInserts = 100_000
    /// `--keel-inline-checkpoints`: the object rows' Keel stores checkpoint on the committing
    /// thread, as before the background checkpointer (for before/after runs of one binary).
    var keelInlineCheckpoints = false
    var objectDepartments: Int { max(1, objectEmployees / employeesPerDepartment) }

    init(quick: Bool, suite: Suite = .all, workloads: [Workload], keys: Int?, objects: Int? = nil, seed: UInt64) {
        self.quick = quick
        self.workloads = Workload.allCases.filter { workloads.isEmpty ? suite.contains($0) : workloads.contains($0) }
        objectEmployees = objects ?? (quick ? 200_000 : 1_000_000)
        self.seed = seed
        self.keys = keys ?? (quick ? 200_000 : 1_000_000)
        rangeScans = quick ? 2_000 : 10_000
        commit1 = quick ? 1_000 : 10_000
        commit16 = quick ? 2_000 : 10_000
    }

    /// Commit workloads run in this many slices, the engines taking turns. One thread: 5 slices.
    /// Many threads: 1, because each slice ends with its stragglers finishing alone (SQLite's
    /// writers can sleep up to 100 ms in the busy handler), which slicing would add once per
    /// slice, and the bill would be SQLite's more than Keel's.
    func commitSlices(threads: Int) -> Int { threads == 1 ? 5 : 1 }

    func includes(_ workload: Workload) -> Bool { workloads.contains(workload) }
    var needsBulkLoad: Bool { workloads.contains { $0.needsBulkLoad } }
    var hasObjectWorkloads: Bool { workloads.contains { $0.isObjectWorkload } }

    /// The pass mark of each row's Keel/SQLite ratio (issue 2, "Figures").
    static func target(_ workload: Workload, _ durability: Durability?) -> Double {
        workload == .commit16 && durability == .full ? 3 : 1
    }
}
