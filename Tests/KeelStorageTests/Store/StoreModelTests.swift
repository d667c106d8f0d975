// The randomised model test: thousands of random operations through the public Store API —
// small, boundary-sized and large (overflow) puts, updates, deletes, point gets, forward and
// backward range scans in read and write transactions, commits, rollbacks (I14), tree creation
// and removal, checkpoints and close/reopen — compared after every step with an in-memory
// ordered model. `verify()` must be clean after every reopen and at the end.
//
// The seed is printed; replay a failure with KEEL_SEED=<seed> swift test --filter StoreModelTests.
// KEEL_SLOW_TESTS=1 runs five times as many steps, and three seeds per in-memory configuration.

import Testing

@testable import KeelStorage

/// How a model run's store is set up.
enum ModelConfiguration: String, CaseIterable, CustomTestStringConvertible {
    /// 4 KiB pages, LZ4 log frames, sync mode full.
    case small
    /// 8 KiB pages, uncompressed log frames, sync mode normal, a tiny cache.
    case wide
    /// 4 KiB pages, LZ4 log frames, sync mode normal (real files: fsync only at checkpoints, so
    /// the run does not depend on this machine's fsync latency).
    case normal

    var testDescription: String { rawValue }

    func configure(_ options: inout StoreOptions) {
        switch self {
        case .small:
            break
        case .wide:
            options.pageSize = 8192
            options.compressLog = false
            options.syncMode = .normal
            options.cacheSizeBytes = 16 * 8192
        case .normal:
            options.syncMode = .normal
        }
    }
}

/// One randomised run against a model.
final class ModelRun {
    let fs: any FileSystem
    let path: String
    let configuration: ModelConfiguration
    let seed: UInt64
    var random: SeededRandom
    var store: Store
    /// What the store must hold after the last committed transaction.
    var model: StoreContents = [:]
    /// Keys are drawn from this set so that updates and deletes hit existing keys.
    let keySpace: [Bytes]
    var step = 0
    var counts: [String: Int] = [:]
    var nextTreeNumber = 0

    init(fs: any FileSystem, path: String, configuration: ModelConfiguration, seed: UInt64) throws {
        self.fs = fs
        self.path = path
        self.configuration = configuration
        self.seed = seed
        var random = SeededRandom(seed: seed)
        var keys = Set<Bytes>()
        while keys.count < 1_500 {
            if keys.isEmpty || random.chance(0.6) {
                keys.insert(randomBytes(1 + Int(random.next() % 16), using: &random))
            } else {
                let base = keys.randomElement(using: &random)!  // safe: the set is not empty here
                keys.insert(base + randomBytes(1 + Int(random.next() % 8), using: &random))
            }
        }
        keySpace = keys.sorted { $0.lexicographicallyPrecedes($1) }
        self.random = random
        store = try openTestStore(fs, at: path) { configuration.configure(&$0) }
    }

    var context: String { "seed \(seed), config \(configuration.rawValue), step \(step)" }

    // MARK: The run

    func run(steps: Int) throws {
        try store.write { txn in
            for name in ["alpha", "beta", "gamma"] { _ = try txn.createTree(name) }
        }
        model = ["alpha": [:], "beta": [:], "gamma": [:]]
        for s in 1...steps {
            step = s
            let roll = random.next() % 100
            switch roll {
            case 0..<55: try writeTransaction(rollback: false)
            case 55..<62: try writeTransaction(rollback: true)
            case 62..<90: try readTransaction()
            case 90..<94: try checkpoint()
            case 94..<96: try reopen()
            case 96..<98 where random.chance(0.5): try changeTrees()
            default: try writeTransaction(rollback: false)
            }
        }
        try reopen()
        try store.close()
        print("[StoreModelTests] seed \(seed) \(configuration.rawValue): \(counts.sorted { $0.key < $1.key })")
    }

    func count(_ what: String, _ n: Int = 1) { counts[what, default: 0] += n }

    func randomKey() -> Bytes { keySpace[Int(random.next() % UInt64(keySpace.count))] }

    func randomValue() -> Bytes {
        let roll = random.next() % 100
        let length: Int
        switch roll {
        case 0..<5: length = 3072 + Int(random.next() % 14_000)  // overflow pages
        case 5..<12: length = 900 + Int(random.next() % 300)  // around the inline/overflow boundary
        case 12..<15: length = 0
        default: length = Int(random.next() % 200)
        }
        if random.chance(0.3) {  // compressible
            return Bytes(repeating: UInt8(truncatingIfNeeded: random.next()), count: length)
        }
        return randomBytes(length, using: &random)
    }

    // MARK: Steps

    func writeTransaction(rollback: Bool) throws {
        guard !model.isEmpty else { return try changeTrees() }
        var pending = model
        let operations = 1 + Int(random.next() % 16)
        var touched: [(String, Bytes)] = []
        let body = { [self] (txn: WriteTransaction) throws in
            for _ in 0..<operations {
                let name = pending.keys.sorted()[Int(random.next() % UInt64(pending.count))]
                let tree = try #require(try txn.tree(name), "\(context): tree \(name) missing in the write transaction")
                let key = randomKey()
                touched.append((name, key))
                switch random.next() % 100 {
                case 0..<50:
                    let value = randomValue()
                    try tree.put(key: key, value: value)
                    pending[name]![key] = value
                    count(value.count >= 3072 ? "put.large" : "put")
                case 50..<75:
                    let existed = try tree.delete(key: key)
                    #expect(existed == (pending[name]![key] != nil), "\(context): delete's result")
                    pending[name]![key] = nil
                    count("delete")
                case 75..<90:
                    #expect(try tree.get(key) == pending[name]![key], "\(context): get in a write transaction")
                    count("get.write")
                default:
                    try checkScan(tree, pending[name]!, from: key, forward: random.chance(0.5), limit: 1 + Int(random.next() % 40))
                    count("scan.write")
                }
            }
            if rollback { throw Rollback() }
        }
        if rollback {
            #expect(throws: Rollback.self, "\(context)") { try self.store.write(body) }
            count("rollback")
            // Nothing of it is visible (I14): every touched key reads as before.
            try store.read { (txn) throws in
                for (name, key) in touched {
                    #expect(try txn.tree(name)?.get(key) == model[name]?[key], "\(context): a rolled-back change is visible (I14)")
                }
            }
        } else {
            try store.write(body)
            model = pending
            count("commit")
        }
    }

    func readTransaction() throws {
        try store.read { txn in
            #expect(try txn.treeNames() == model.keys.sorted(), "\(context): tree names")
            for (name, entries) in model.sorted(by: { $0.key < $1.key }) {
                let tree = try #require(try txn.tree(name), "\(context): tree \(name) missing")
                for _ in 0..<4 {
                    let key = randomKey()
                    #expect(try tree.get(key) == entries[key], "\(context): get \(key) in \(name)")
                    #expect(try tree.contains(key) == (entries[key] != nil), "\(context): contains")
                    count("get")
                }
                let probe = randomKey()
                #expect(try tree.withValue(forKey: probe) { Bytes($0) } == entries[probe], "\(context): withValue")
                try checkScan(tree, entries, from: randomKey(), forward: true, limit: 1 + Int(random.next() % 80))
                try checkScan(tree, entries, from: randomKey(), forward: false, limit: 1 + Int(random.next() % 80))
                count("scan", 2)
                if random.chance(0.1) {
                    #expect(try tree.count() == entries.count, "\(context): count of \(name)")
                }
            }
        }
    }

    /// Compares a cursor walk with the model: forward from the first key ≥ `start`, or backward
    /// from the last key ≤ `start`, for up to `limit` entries.
    func checkScan(_ tree: Tree, _ entries: [Bytes: Bytes], from start: Bytes, forward: Bool, limit: Int) throws {
        let sorted = entries.keys.sorted { $0.lexicographicallyPrecedes($1) }
        let lower = sorted.firstIndex { !$0.lexicographicallyPrecedes(start) } ?? sorted.count
        var expected: [Bytes] = []
        if forward {
            expected = Array(sorted[lower..<min(sorted.count, lower + limit)])
        } else {
            // The last key ≤ start: the one at `lower` if it equals start, else the one before.
            let top = lower < sorted.count && sorted[lower] == start ? lower : lower - 1
            if top >= 0 { expected = Array(sorted[max(0, top - limit + 1)...top].reversed()) }
        }
        var cursor = try tree.cursor()
        var valid = try cursor.seek(to: start)
        if !forward {
            if !valid {
                valid = try cursor.seekLast()
            } else if try cursor.key != start {
                valid = try cursor.previous()
            }
        }
        var seen: [Bytes] = []
        while valid, seen.count < limit {
            let key = try cursor.key
            seen.append(key)
            #expect(try cursor.value() == entries[key], "\(context): value under a cursor")
            valid = forward ? try cursor.next() : try cursor.previous()
        }
        #expect(seen == expected, "\(context): \(forward ? "forward" : "backward") scan of \(tree.name) from \(start)")
    }

    func checkpoint() throws {
        try store.checkpoint()
        count("checkpoint")
    }

    func reopen() throws {
        try store.close()
        store = try openTestStore(fs, at: path) { configuration.configure(&$0) }
        try expectVerifies(store, "\(context): after reopen")
        let actual = try contents(of: store)
        expectContents(actual, equal: model, "\(context): after reopen")
        count("reopen")
    }

    /// Creates a tree (with a few entries) or drops one; checks the errors for taken and
    /// missing names along the way.
    func changeTrees() throws {
        if model.count < 2 || (model.count < 5 && random.chance(0.5)) {
            nextTreeNumber += 1
            let name = "tree\(nextTreeNumber)"
            var entries: [Bytes: Bytes] = [:]
            try store.write { txn in
                let tree = try txn.createTree(name)
                if let existing = model.keys.first {
                    expectStorageError(.treeExists, comment: context) { _ = try txn.createTree(existing) }
                }
                for _ in 0..<Int(random.next() % 30) {
                    let (key, value) = (randomKey(), randomValue())
                    try tree.put(key: key, value: value)
                    entries[key] = value
                }
            }
            model[name] = entries
            count("tree.create")
        } else {
            let name = model.keys.sorted()[Int(random.next() % UInt64(model.count))]
            try store.write { txn in
                try txn.dropTree(name)
                expectStorageError(.noSuchTree, comment: context) { try txn.dropTree(name) }
                #expect(try txn.tree(name) == nil, "\(context): a dropped tree is still there")
            }
            model[name] = nil
            count("tree.drop")
        }
    }
}

@Suite("Randomised model test: the Store against an in-memory ordered model")
struct StoreModelTests {
    @Test("I2 I10 I11 I12 I14: random operations match the model in memory; verify is clean after every reopen",
          arguments: [ModelConfiguration.small, .wide])
    func inMemory(configuration: ModelConfiguration) throws {
        let base = testSeed("StoreModelTests.inMemory")
        for seed in slowTestsEnabled ? [base, base &+ 1, base &+ 2] : [base] {
            let run = try ModelRun(fs: InMemoryFileSystem(), path: testStorePath, configuration: configuration, seed: seed)
            try run.run(steps: slowTestsEnabled ? 10_000 : 2_000)
        }
    }

    @Test("I2 I14: random operations match the model on real files in a temporary directory")
    func realFiles() throws {
        let seed = testSeed("StoreModelTests.realFiles")
        try withTemporaryDirectory { directory in
            let run = try ModelRun(fs: PosixFileSystem(), path: directory + "/model.keel", configuration: .normal, seed: seed)
            try run.run(steps: slowTestsEnabled ? 2_000 : 300)
        }
    }
}
