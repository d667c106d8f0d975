// Snapshot isolation with real threads (Foundation's Thread; no Swift concurrency for blocking
// work). Accounts whose balances sum to a constant; a writer moves money between them in many
// transactions while readers sum every account inside `read { }`: every sum is the constant (I5),
// each reader's snapshots only move forward, and checkpoints run meanwhile (I7: never overwriting
// what a live reader needs). A reader that holds its snapshot does not block the writer (the
// writer commits and checkpoints while it waits) and keeps seeing exactly its old snapshot. A
// reader that holds it while the log passes `maxLogBytes` gets SNAPSHOT_TOO_OLD on its next read,
// and the log is reset (I7).

import Foundation
import Synchronization
import Testing

@testable import KeelStorage

/// Failures seen on other threads, reported on the test's thread.
final class ThreadFailures: Sendable {
    /// Guards the messages.
    let messages = Mutex<[String]>([])
    func record(_ message: String) { messages.withLock { $0.append(message) } }
    func report(sourceLocation: SourceLocation = #_sourceLocation) {
        for message in messages.withLock({ $0 }) { Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation) }
    }
}

/// An atomic integer that escaping closures can share (Atomic itself cannot be captured).
final class SharedCounter: Sendable {
    let value = Atomic<Int>(0)
    func add(_ n: Int) { value.add(n, ordering: .relaxed) }
    var current: Int { value.load(ordering: .acquiring) }
    func set(_ n: Int) { value.store(n, ordering: .releasing) }
}

/// Runs `body` on a new thread; the returned semaphore is signalled when it returns.
func startThread(_ name: String, _ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.name = name
    thread.start()
    return done
}

enum Accounts {
    static let count = 200
    static let initial: UInt64 = 1_000
    static let total = UInt64(count) * initial

    /// A balance as a 100-byte value (8 bytes little-endian, then filler), so the accounts span
    /// several leaves and a torn view would show in the sum.
    static func value(_ balance: UInt64, account: Int) -> Bytes {
        withUnsafeBytes(of: balance.littleEndian) { Bytes($0) } + taggedValue(key: numberedKey(account), version: 0, length: 92)
    }

    static func balance(_ value: Bytes) -> UInt64 {
        value.prefix(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    static func create(_ store: Store) throws {
        try store.write { txn in
            let tree = try txn.createTree("accounts")
            for a in 0..<count { try tree.put(key: numberedKey(a), value: value(initial, account: a)) }
        }
    }

    /// Moves random amounts between random accounts, `transfers` times, in one transaction.
    static func transfer(_ store: Store, transfers: Int, random: inout SeededRandom) throws {
        try store.write { txn in
            let tree = try txn.tree("accounts")!
            for _ in 0..<transfers {
                let from = Int(random.next() % UInt64(count))
                let to = (from + 1 + Int(random.next() % UInt64(count - 1))) % count
                let a = balance(try tree.get(numberedKey(from))!)
                let b = balance(try tree.get(numberedKey(to))!)
                let amount = min(a, random.next() % 300)
                try tree.put(key: numberedKey(from), value: value(a - amount, account: from))
                try tree.put(key: numberedKey(to), value: value(b + amount, account: to))
            }
        }
    }

    /// Every balance in one read transaction, in key order.
    static func balances(_ txn: ReadTransaction) throws -> [UInt64] {
        var cursor = try txn.tree("accounts")!.cursor()
        var out: [UInt64] = []
        var more = try cursor.seekFirst()
        while more {
            out.append(balance(try cursor.value()))
            more = try cursor.next()
        }
        return out
    }
}

@Suite("Snapshot isolation: readers on several threads see one commit each; the writer is never blocked")
struct SnapshotIsolationTests {
    @Test("I5 I7: four readers always sum the accounts to the constant while a writer transfers and checkpoints (inline and on the background checkpointer)",
          arguments: [false, true])
    func invariantSum(background: Bool) throws {
        let seed = testSeed("SnapshotIsolationTests.invariantSum")
        try withVerifiedStore(syncMode: .normal, configure: {
            $0.cacheSizeBytes = 16 * 4096
            $0.checkpointThresholdBytes = 48 << 10
            $0.checkpointInBackground = background
        }) { store in
            try Accounts.create(store)
            let failures = ThreadFailures()
            let writerDone = SharedCounter()
            let commits = slowTestsEnabled ? 10_000 : 1_500
            let reads = SharedCounter()
            let writer = startThread("writer") {
                var random = SeededRandom(seed: seed)
                do {
                    for i in 0..<commits {
                        try Accounts.transfer(store, transfers: 1 + Int(random.next() % 4), random: &random)
                        if i % 150 == 149 { try store.checkpoint() }
                    }
                } catch {
                    failures.record("writer: \(error)")
                }
                writerDone.set(1)
            }
            let readers = (0..<4).map { r in
                startThread("reader \(r)") {
                    var last = TransactionID(0)
                    repeat {
                        do {
                            try store.read { txn in
                                let balances = try Accounts.balances(txn)
                                let sum = balances.reduce(0, +)
                                if balances.count != Accounts.count || sum != Accounts.total {
                                    failures.record("reader \(r) at \(txn.transaction): \(balances.count) accounts summing to \(sum), expected \(Accounts.total) (I5)")
                                }
                                if txn.transaction < last { failures.record("reader \(r): snapshot went back from \(last) to \(txn.transaction)") }
                                last = txn.transaction
                            }
                            reads.add(1)
                        } catch {
                            failures.record("reader \(r): \(error)")
                        }
                    } while writerDone.current == 0
                }
            }
            #expect(writer.wait(timeout: .now() + 300) == .success, "the writer did not finish")
            for reader in readers { #expect(reader.wait(timeout: .now() + 60) == .success, "a reader did not finish") }
            failures.report()
            let stats = try store.statistics()
            print("[SnapshotIsolationTests] \(commits) commits, \(reads.current) consistent reads, \(stats.checkpoints) checkpoints")
            #expect(reads.current >= 4, "the readers ran")
            #expect(stats.checkpoints >= 2, "checkpoints ran while readers were reading")
            try store.read { (txn) throws in #expect(try Accounts.balances(txn).reduce(0, +) == Accounts.total) }
        }
    }

    @Test("I5 I7: a reader holding its snapshot does not block the writer, and keeps seeing it across checkpoints")
    func pinnedReader() throws {
        let seed = testSeed("SnapshotIsolationTests.pinnedReader")
        try withVerifiedStore(syncMode: .normal, configure: { $0.cacheSizeBytes = 16 * 4096; $0.checkpointThresholdBytes = 32 << 10 }) { store in
            try Accounts.create(store)
            let failures = ThreadFailures()
            let ready = DispatchSemaphore(value: 0)
            let writerDone = DispatchSemaphore(value: 0)
            let reader = startThread("pinned reader") {
                do {
                    try store.read { txn in
                        let before = try Accounts.balances(txn)
                        ready.signal()
                        // The writer must get through many commits and checkpoints while we hold on.
                        if writerDone.wait(timeout: .now() + 120) == .timedOut {
                            failures.record("the writer made no progress while a reader held its snapshot")
                            return
                        }
                        let after = try Accounts.balances(txn)
                        if after != before { failures.record("the pinned snapshot changed under its reader (I5)") }
                        if before != [UInt64](repeating: Accounts.initial, count: Accounts.count) {
                            failures.record("the pinned reader did not see the initial balances")
                        }
                    }
                } catch {
                    failures.record("pinned reader: \(error)")
                }
            }
            #expect(ready.wait(timeout: .now() + 60) == .success)
            var random = SeededRandom(seed: seed)
            var resets = 0
            for i in 0..<300 {
                try Accounts.transfer(store, transfers: 3, random: &random)
                if i % 50 == 49 { resets += try store.checkpoint().logReset ? 1 : 0 }
            }
            #expect(resets == 0, "the log was reset while a reader still needed its frames (I7)")
            try store.read { txn in
                let now = try Accounts.balances(txn)
                #expect(now.reduce(0, +) == Accounts.total)
                #expect(now != [UInt64](repeating: Accounts.initial, count: Accounts.count), "new readers see the transfers")
            }
            writerDone.signal()
            #expect(reader.wait(timeout: .now() + 60) == .success)
            failures.report()
            #expect(try store.checkpoint().logReset, "once the reader is gone the checkpoint resets the log")
        }
    }

    @Test("I7: a reader holding its snapshot while the log passes maxLogBytes gets SNAPSHOT_TOO_OLD, and the log is reset")
    func snapshotTooOld() throws {
        let maxLog: UInt64 = 160 << 10
        try withVerifiedStore(syncMode: .normal, configure: {
            $0.checkpointThresholdBytes = 24 << 10
            $0.maxLogBytes = maxLog
            $0.compressLog = false
        }) { store in
            try Accounts.create(store)
            try store.checkpoint()
            var random = SeededRandom(seed: 7)
            var pinnedLog: UInt64 = 0
            let error = try store.read { txn -> StorageError? in
                let before = try Accounts.balances(txn)
                var commits = 0
                // Commit until a checkpoint cuts this reader off; before that the reader pins the log.
                while try store.statistics().readersCutOff == 0 && commits < 2_000 {
                    try Accounts.transfer(store, transfers: 2, random: &random)
                    commits += 1
                    let stats = try store.statistics()
                    if stats.readersCutOff == 0 {
                        pinnedLog = max(pinnedLog, stats.logFrameBytes)
                        // Still within limits: the old snapshot reads as before.
                        if commits % 20 == 0 { #expect(try Accounts.balances(txn) == before) }
                    }
                }
                do {
                    _ = try Accounts.balances(txn)
                    return nil
                } catch let error as StorageError {
                    return error
                }
            }
            let tooOld = try #require(error, "the reader was never cut off")
            #expect(tooOld.code == .snapshotTooOld, "\(tooOld)")
            #expect(tooOld.message.contains("snapshot too old"), "\(tooOld)")
            #expect(pinnedLog > (24 << 10), "while the reader was live the log grew past the checkpoint threshold (it pinned it)")
            let stats = try store.statistics()
            #expect(stats.readersCutOff == 1)
            #expect(stats.logFrameBytes < maxLog / 2, "the log was reset after the cut-off: \(stats.logFrameBytes) bytes of frames")
            // A new reader works and sees the newest state.
            try store.read { (txn) throws in #expect(try Accounts.balances(txn).reduce(0, +) == Accounts.total) }
        }
    }
}
