/// Everything a run produced: what `--json` prints and what the table is drawn from.
struct RunReport: Codable, Sendable {
    var tool = "keel-bench"
    var date: String
    var plan: Plan
    var machine: MachineFacts
    var data: DataFacts
    var engines: [String]
    var keelEngineBuiltIn: Bool
    var rows: [Row] = []
    var compaction: [String: CompactionFigures] = [:]
    /// Peak memory of a context holding pending inserts (object suite).
    var contextMemory: ContextMemoryFigure?
    /// Cross-checks that failed (an engine returned different data from the other, lost a key...).
    var failures: [String] = []
    var totalSeconds: Double = 0
}

struct DataFacts: Codable, Sendable {
    var keyBytes = KeyValueSet.keySize
    var valueBytes = KeyValueSet.valueSize
    var valueLayout = "\(KeyValueSet.randomValuePrefix) random bytes + 1 random byte repeated \(KeyValueSet.valueSize - KeyValueSet.randomValuePrefix) times (~50% compressible)"
    var keyLayout = "16 random bytes"
    var seed: UInt64
}

/// One line of the table: both engines on one workload.
struct Row: Codable, Sendable {
    var name: String
    var workload: Workload
    var durability: Durability?
    var ops: Int
    var results: [String: Measurement]
    var ratio: Double?
    var target: Double
    var meetsTarget: Bool?

    init(workload: Workload, durability: Durability?, ops: Int, results: [String: Measurement]) {
        self.workload = workload
        self.durability = durability
        self.name = workload.rawValue + (durability.map { " (\($0.rawValue))" } ?? "")
        self.ops = ops
        self.results = results
        if let keel = results[keelName], let sqlite = results[SQLiteEngine.name], sqlite.opsPerSecond > 0 {
            ratio = keel.opsPerSecond / sqlite.opsPerSecond
        }
        target = Plan.target(workload, durability)
        meetsTarget = ratio.map { $0 >= target }
    }
}

/// The compact workload's figures for one engine.
struct CompactionFigures: Codable, Sendable {
    var keysDeleted: Int
    var keysRemaining: Int
    /// Key + value bytes of the remaining keys.
    var liveBytes: Int
    /// Store files after the bulk load and checkpoint (before the deletes).
    var bytesLoaded: Int
    /// Store files after the deletes and a checkpoint: what compaction starts from.
    var bytesBefore: Int
    /// Store files after compaction (Keel `compact()`; SQLite `VACUUM` + truncating checkpoint).
    var bytesAfter: Int
    /// `bytesBefore` and `bytesAfter` file by file.
    var filesBefore: [String: Int]
    var filesAfter: [String: Int]
    var afterOverLive: Double
    var deleteSeconds: Double
    var checkpointSeconds: Double
    var compactSeconds: Double
    var details: [String: Double]
}

/// The name the Keel side reports under (also when it is not built in, for the table's header).
let keelName = "Keel"
