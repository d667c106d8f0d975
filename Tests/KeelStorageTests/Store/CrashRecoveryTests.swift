// Crash simulation: a scripted workload of a few hundred file operations, crashed at every
// operation in the drop, keep and torn variants. After reopening what the disk holds, every
// acknowledged transaction is there (I1), none is partial (I2), the state is exactly the state
// after some prefix of the transactions, verify is clean, and the recovered store takes new
// commits that survive another reopen. A second test crashes the recovery itself.
//
// The default run covers every crash point in every mode, with one torn seed per point derived
// from the point. KEEL_SLOW_TESTS=1 adds three more torn seeds per point and crashes recovery at
// every operation for every crash image instead of a sample.

import Testing

@testable import KeelStorage

/// The scripted workload: 40 write transactions over two (later three) trees, an explicit
/// checkpoint after the 20th, automatic checkpoints (small threshold) along the way, then close.
/// Two transactions use range deletes (BTree+RangeDelete.swift): one across many leaves of tree
/// a, one of every key with the prefix "big" (values with overflow chains) in tree c.
enum CrashWorkload {
    static let transactionCount = 40
    static let path = "/crash/store.keel"

    static func options(_ fs: any FileSystem, syncMode: SyncMode = .full, background: Bool = false) -> StoreOptions {
        var options = testOptions(fs, syncMode: syncMode)
        options.checkpointThresholdBytes = 8 << 10
        options.checkpointInBackground = background
        return options
    }

    /// One step of a transaction.
    enum Operation {
        case put(tree: String, key: Bytes, value: Bytes)
        case delete(tree: String, key: Bytes)
        /// Every key k with from ≤ k < below.
        case deleteRange(tree: String, from: Bytes, below: Bytes)
        case createTree(String)
        case dropTree(String)
    }

    /// What transaction `i` (1-based) does, in order.
    static func operations(_ i: Int) -> [Operation] {
        var ops: [Operation] = []
        if i == 1 { ops += [.createTree("a"), .createTree("b")] }
        let side = i >= 30 ? "c" : "b"  // tree b is dropped at the 30th and c takes its place
        if i == 30 { ops.append(.createTree("c")) }
        for j in 0..<4 {
            let n = i * 4 + j
            ops.append(.put(tree: "a", key: numberedKey(n), value: taggedValue(key: numberedKey(n), version: i, length: 60 + n % 50)))
        }
        let small = numberedKey(i % 7, prefix: "b")
        ops.append(.put(tree: side, key: small, value: taggedValue(key: small, version: i)))
        if i > 3 { ops.append(.delete(tree: "a", key: numberedKey((i - 3) * 4 + 1))) }  // a key of an earlier transaction
        if i % 3 == 0 {  // a large, incompressible value: overflow pages and a bigger log append
            ops.append(.put(tree: side, key: numberedKey(i % 4, prefix: "big"), value: randomBytes(3_000 + i * 150, seed: UInt64(i))))
        }
        if i % 5 == 0 { ops.append(.delete(tree: side, key: numberedKey((i + 1) % 4, prefix: "big"))) }
        if i == 25 {  // many deletes: leaves merge, pages go to the free list
            for n in stride(from: 4, to: 80, by: 1) where n % 4 != 1 { ops.append(.delete(tree: "a", key: numberedKey(n))) }
        }
        if i == 30 { ops.append(.dropTree("b")) }  // a whole tree freed; its pages are reused after
        if i == 35 { ops.append(.deleteRange(tree: "a", from: numberedKey(81), below: numberedKey(130))) }  // many leaves
        if i == 37 { ops.append(.deleteRange(tree: "c", from: Array("big".utf8), below: Array("bih".utf8))) }  // overflow chains freed
        if i > 30 { ops.append(.put(tree: "c", key: numberedKey(i, prefix: "c"), value: randomBytes(500, seed: UInt64(i)))) }
        return ops
    }

    /// Applies `operations(i)` to a write transaction.
    static func apply(_ i: Int, to txn: WriteTransaction) throws {
        for op in operations(i) {
            switch op {
            case .put(let name, let key, let value): try #require(try txn.tree(name)).put(key: key, value: value)
            case .delete(let name, let key): try #require(try txn.tree(name)).delete(key: key)
            case .deleteRange(let name, let from, let below): try #require(try txn.tree(name)).deleteRange(from: from, below: below)
            case .createTree(let name): _ = try txn.createTree(name)
            case .dropTree(let name): try txn.dropTree(name)
            }
        }
    }

    /// The contents after transactions 1...n.
    static let states: [StoreContents] = {
        var states: [StoreContents] = [[:]]
        var current: StoreContents = [:]
        for i in 1...transactionCount {
            for op in operations(i) {
                switch op {
                case .put(let name, let key, let value): current[name]![key] = value
                case .delete(let name, let key): current[name]![key] = nil
                case .deleteRange(let name, let from, let below):
                    for key in current[name]!.keys where !key.lexicographicallyPrecedes(from) && key.lexicographicallyPrecedes(below) {
                        current[name]![key] = nil
                    }
                case .createTree(let name): current[name] = [:]
                case .dropTree(let name): current[name] = nil
                }
            }
            states.append(current)
        }
        return states
    }()

    /// What one run managed before it stopped.
    struct Outcome {
        /// Transactions whose `write` returned.
        var acknowledged = 0
        /// Whether the run stopped inside a `write` (that transaction may or may not be on disk).
        var stoppedInWrite = false
        /// Transactions covered by the last checkpoint that completed (sync mode normal makes
        /// commits durable only there).
        var checkpointed = 0
        var error: (any Error)?
    }

    /// Runs the workload on `fs` until the first error. `background`: the automatic checkpoints
    /// run on the background checkpointer, and the run waits for each before its next write, so
    /// the file operations (and the crash point) come in the same order every run; a crash inside
    /// a background checkpoint fails that checkpoint on its thread and the next write here.
    static func run(on fs: any FileSystem, syncMode: SyncMode = .full, background: Bool = false) -> Outcome {
        var outcome = Outcome()
        let store: Store
        do {
            store = try Store.open(at: path, options: options(fs, syncMode: syncMode, background: background), logger: quietLogger)
        } catch {
            outcome.error = error
            return outcome
        }
        var checkpoints: UInt64 = 0
        for i in 1...transactionCount {
            do {
                try store.write { txn in try apply(i, to: txn) }
            } catch {
                outcome.stoppedInWrite = true
                outcome.error = error
                return outcome
            }
            outcome.acknowledged = i
            if background { try? store.waitForBackgroundCheckpoint() }
            // An automatic checkpoint after this commit completed: everything up to it is durable.
            if let count = try? store.statistics().checkpoints, count > checkpoints {
                checkpoints = count
                outcome.checkpointed = i
            }
            if i == transactionCount / 2 {
                do { try store.checkpoint() } catch {
                    outcome.error = error
                    return outcome
                }
                outcome.checkpointed = i
                checkpoints = (try? store.statistics().checkpoints) ?? checkpoints
            }
        }
        do { try store.close() } catch { outcome.error = error }
        return outcome
    }

    /// The torn-mode seed for crash point `k` (variant `v`): fixed, so a failure replays.
    static func tornSeed(_ k: Int, variant: Int = 0) -> UInt64 {
        (UInt64(k) &* 0x9E37_79B9_7F4A_7C15) ^ (UInt64(variant) &* 0xD1B5_4A32_D192_ED03) ^ 0x5EED
    }

    /// Checks a crashed image: recovery gives the state after a prefix of transactions that holds
    /// every acknowledged one (at most the one in flight besides), verify is clean, and a new
    /// commit after recovery survives a further close and reopen. Returns the prefix length.
    /// `durable` is the shortest prefix allowed: every acknowledged transaction in sync mode full;
    /// in sync mode normal those covered by the last completed checkpoint (after a power cut).
    @discardableResult
    static func checkRecovery(
        _ image: InMemoryFileSystem, outcome: Outcome, durable: Int? = nil, context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Int? {
        let store: Store
        do {
            store = try Store.open(at: path, options: options(image), logger: quietLogger)
        } catch {
            Issue.record("\(context): reopening the crashed image failed: \(error)", sourceLocation: sourceLocation)
            return nil
        }
        let actual = try contents(of: store)
        let allowed = (durable ?? outcome.acknowledged)...(outcome.acknowledged + (outcome.stoppedInWrite ? 1 : 0))
        let prefix = allowed.first { states[$0] == actual }
        #expect(
            prefix != nil,
            "\(context): recovered state is not the state after \(allowed) transactions (I1, I2): \(describeDifference(actual, states[outcome.acknowledged])); it matches \(states.indices.filter { states[$0] == actual })",
            sourceLocation: sourceLocation)
        try expectVerifies(store, "\(context): after recovery", sourceLocation: sourceLocation)

        // The recovered store keeps working: a commit after recovery survives close and reopen.
        let marker = Array("after-recovery".utf8)
        try store.write { txn in try txn.openTree("post").put(key: marker, value: marker) }
        try store.close()
        let again = try Store.open(at: path, options: options(image), logger: quietLogger)
        defer { try? again.close() }
        var expected = actual
        expected["post"] = [marker: marker]
        let final = try contents(of: again)
        expectContents(final, equal: expected, "\(context): a commit after recovery", sourceLocation: sourceLocation)
        try expectVerifies(again, "\(context): after a commit following recovery", sourceLocation: sourceLocation)
        return prefix
    }

    /// The number of file operations of an uncrashed run.
    static func cleanOperationCount() throws -> Int { try cleanOperationCountFixture.get() }
    /// The same with the background checkpointer.
    static func cleanOperationCountInBackground() throws -> Int { try cleanOperationCountInBackgroundFixture.get() }
    private static let cleanOperationCountInBackgroundFixture = Fixture<Int> {
        let fs = CrashSimulatingFileSystem()
        let outcome = run(on: fs, background: true)
        try #require(outcome.error == nil && outcome.acknowledged == transactionCount, "the clean run failed: \(String(describing: outcome.error))")
        #expect(outcome.checkpointed > transactionCount / 2, "no background checkpoint ran after the explicit one")
        return fs.operationCount
    }
    private static let cleanOperationCountFixture = Fixture<Int> {
        let fs = CrashSimulatingFileSystem()
        let outcome = run(on: fs)
        try #require(outcome.error == nil && outcome.acknowledged == transactionCount, "the clean run failed: \(String(describing: outcome.error))")
        return fs.operationCount
    }
}

@Suite("Crash simulation: a crash at every file operation loses no acknowledged transaction and applies none partially")
struct CrashRecoveryTests {
    @Test("the uncrashed workload commits everything, checkpoints and verifies clean")
    func cleanRun() throws {
        let fs = CrashSimulatingFileSystem()
        let outcome = CrashWorkload.run(on: fs)
        #expect(outcome.error == nil)
        #expect(outcome.acknowledged == CrashWorkload.transactionCount)
        let n = fs.operationCount
        print("[CrashRecoveryTests] the workload makes \(n) file operations")
        #expect(n >= 100, "the workload should exercise a few hundred operations, made \(n)")
        for mode in CrashMode.allCases {
            let image = fs.crashedImage(mode: mode, seed: 1)
            let prefix = try CrashWorkload.checkRecovery(image, outcome: outcome, context: "clean run, \(mode)")
            #expect(prefix == CrashWorkload.transactionCount)
        }
    }

    @Test("I1 I2 I8 I9: crashed at every operation, recovery keeps every acknowledged commit and no partial one",
          arguments: CrashMode.allCases)
    func crashAtEveryOperation(mode: CrashMode) throws {
        let n = try CrashWorkload.cleanOperationCount()
        let variants = mode == .torn ? (slowTestsEnabled ? 4 : 1) : 1
        var prefixes: [Int: Int] = [:]
        for k in 1...(n + 1) {
            for variant in 0..<variants {
                let fs = CrashSimulatingFileSystem()
                fs.crash(after: k)
                let outcome = CrashWorkload.run(on: fs)
                let seed = CrashWorkload.tornSeed(k, variant: variant)
                let image = fs.crashedImage(mode: mode, seed: seed)
                let context = "crash at operation \(k) of \(n), mode \(mode)\(mode == .torn ? ", seed \(seed)" : ""), acknowledged \(outcome.acknowledged)"
                if k <= n { #expect(fs.isCrashed, "\(context): the crash never fired") }
                if let prefix = try CrashWorkload.checkRecovery(image, outcome: outcome, context: context) {
                    prefixes[prefix, default: 0] += 1
                }
            }
        }
        // The sweep really crossed the workload: early crashes recover little, late ones everything.
        #expect(prefixes[0] != nil && prefixes[CrashWorkload.transactionCount] != nil, "prefixes seen: \(prefixes)")
        print("[CrashRecoveryTests] \(mode): \(n + 1) crash points × \(variants); recovered prefixes \(prefixes.sorted { $0.key < $1.key })")
    }

    @Test("I1 I2 I8: with the background checkpointer, crashed at every operation (inside its checkpoints too), recovery keeps every acknowledged commit and no partial one",
          arguments: CrashMode.allCases)
    func crashAtEveryOperationInBackground(mode: CrashMode) throws {
        let n = try CrashWorkload.cleanOperationCountInBackground()
        var prefixes: [Int: Int] = [:]
        for k in 1...(n + 1) {
            let fs = CrashSimulatingFileSystem()
            fs.crash(after: k)
            let outcome = CrashWorkload.run(on: fs, background: true)
            let seed = CrashWorkload.tornSeed(k)
            let image = fs.crashedImage(mode: mode, seed: seed)
            let context = "background checkpoints, crash at operation \(k) of \(n), mode \(mode), acknowledged \(outcome.acknowledged)"
            if k <= n { #expect(fs.isCrashed, "\(context): the crash never fired") }
            if let prefix = try CrashWorkload.checkRecovery(image, outcome: outcome, context: context) {
                prefixes[prefix, default: 0] += 1
            }
        }
        #expect(prefixes[0] != nil && prefixes[CrashWorkload.transactionCount] != nil, "prefixes seen: \(prefixes)")
    }

    @Test("I2: sync mode normal, crashed at every operation: a process crash loses nothing; a power cut loses at most the commits since the last checkpoint, none partially",
          arguments: CrashMode.allCases)
    func crashInSyncModeNormal(mode: CrashMode) throws {
        let clean = CrashSimulatingFileSystem()
        let cleanRun = CrashWorkload.run(on: clean, syncMode: .normal)
        try #require(cleanRun.error == nil, "the clean run failed: \(String(describing: cleanRun.error))")
        let n = clean.operationCount
        var prefixes: [Int: Int] = [:]
        for k in 1...(n + 1) {
            let fs = CrashSimulatingFileSystem()
            fs.crash(after: k)
            let outcome = CrashWorkload.run(on: fs, syncMode: .normal)
            let seed = CrashWorkload.tornSeed(k)
            let image = fs.crashedImage(mode: mode, seed: seed)
            let context = "sync normal, crash at operation \(k) of \(n), \(mode)\(mode == .torn ? ", seed \(seed)" : ""), acknowledged \(outcome.acknowledged), checkpointed \(outcome.checkpointed)"
            // keep: the kernel wrote everything back (a process crash); drop/torn: a power cut.
            let durable = mode == .keep ? outcome.acknowledged : outcome.checkpointed
            if let prefix = try CrashWorkload.checkRecovery(image, outcome: outcome, durable: durable, context: context) {
                prefixes[prefix, default: 0] += 1
            }
        }
        print("[CrashRecoveryTests] sync normal, \(mode): \(n + 1) crash points; recovered prefixes \(prefixes.sorted { $0.key < $1.key })")
    }

    @Test("I2 I8: a crash during recovery (reopen and its checkpoint at close) recovers the same state again")
    func crashDuringRecovery() throws {
        let n = try CrashWorkload.cleanOperationCount()
        // Images that leave frames in the log: crashed in the second half of the workload, kept.
        let points = slowTestsEnabled ? Array(stride(from: n / 2, through: n, by: 1)) : Array(stride(from: n / 2, through: n, by: max(1, n / 16)))
        for k in points {
            let first = CrashSimulatingFileSystem()
            first.crash(after: k)
            _ = CrashWorkload.run(on: first)
            let image = first.crashedImage(mode: .keep)
            // Recover cleanly once to learn the expected state and the recovery's operation count.
            let probe = CrashSimulatingFileSystem(startingFrom: image)
            let expected: StoreContents
            do {
                let store = try Store.open(at: CrashWorkload.path, options: CrashWorkload.options(probe), logger: quietLogger)
                expected = try contents(of: store)
                try store.close()
            }
            let recoveryOperations = probe.operationCount
            for j in 1...recoveryOperations {
                for mode in [CrashMode.drop, .torn] {
                    let second = CrashSimulatingFileSystem(startingFrom: image)
                    second.crash(after: j)
                    if let store = try? Store.open(at: CrashWorkload.path, options: CrashWorkload.options(second), logger: quietLogger) {
                        try? store.close()
                    }
                    let seed = CrashWorkload.tornSeed(k * 1_000 + j)
                    let twice = second.crashedImage(mode: mode, seed: seed)
                    let context = "first crash at \(k) (keep), second at recovery operation \(j) of \(recoveryOperations) (\(mode), seed \(seed))"
                    let store = try Store.open(at: CrashWorkload.path, options: CrashWorkload.options(twice), logger: quietLogger)
                    let actual = try contents(of: store)
                    expectContents(actual, equal: expected, "\(context)")
                    try expectVerifies(store, context)
                    try store.close()
                }
            }
        }
    }
}
