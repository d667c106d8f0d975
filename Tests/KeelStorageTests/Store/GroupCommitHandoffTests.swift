// GroupCommit on its own, against a log whose syncs the test holds and releases: the end of a
// sync wakes exactly the commits it covered plus one next leader (the rest stay parked until the
// next sync covers them); nobody is acknowledged before a sync that began after its append; a
// failed sync fails every waiter and every later commit with no retry; `stop` wakes the waiters
// behind a sync under way. No timing is asserted: the test waits for states (a sync started, N
// committers parked), never for durations.

import Foundation
import Synchronization
import Testing

@testable import KeelStorage

/// A log for GroupCommit alone. `append` hands out the next frame sequence (and tells the group
/// commit, as the writer lock does); a sync makes durable what was appended when it began, after
/// waiting for `release` when the log is held, and fails when it is the one `failingSync` names.
final class HeldLog: Sendable {
    struct State {
        var appended: UInt64 = 0
        var durable: UInt64 = 0
        var syncsStarted = 0
        var published: [UInt64] = []
        var failingSync: Int?
    }

    let state = Mutex(State())
    /// Serialises append + noteAppended, as the writer lock does.
    let writer = Mutex(())
    /// Signalled once per sync that may finish (held logs only).
    let release = DispatchSemaphore(value: 0)
    let held: Bool
    /// Slows each sync a little so committers pile up (free-running logs).
    let syncMicroseconds: UInt32
    /// The group commit under test (set in init; its closures refer back to this log).
    let commit = Mutex<GroupCommit?>(nil)

    init(held: Bool, syncMicroseconds: UInt32 = 0, failingSync: Int? = nil) {
        self.held = held
        self.syncMicroseconds = syncMicroseconds
        state.withLock { $0.failingSync = failingSync }
        let group = GroupCommit(
            durableUpTo: FrameSequence(0), durableTransaction: TransactionID(0),
            syncLog: { [unowned self] () throws(StorageError) in try self.sync() },
            publish: { [unowned self] seq in self.state.withLock { $0.published.append(seq.rawValue) } })
        commit.withLock { $0 = group }
    }

    var group: GroupCommit { commit.withLock { $0! } }

    func append() -> FrameSequence {
        writer.withLock { _ in
            let seq = FrameSequence(state.withLock { s -> UInt64 in
                s.appended += 1
                return s.appended
            })
            // One frame per transaction here: transaction n ends at sequence n.
            group.noteAppended(seq, transaction: TransactionID(seq.rawValue))
            return seq
        }
    }

    private func sync() throws(StorageError) {
        let (covers, number, fails) = state.withLock { s -> (UInt64, Int, Bool) in
            s.syncsStarted += 1
            return (s.appended, s.syncsStarted, s.failingSync == s.syncsStarted)
        }
        if held { release.wait() }
        if syncMicroseconds > 0 { usleep(syncMicroseconds) }
        if fails { throw StorageError(.io, "sync \(number) failed (test)") }
        state.withLock { $0.durable = max($0.durable, covers) }
    }

    var snapshot: State { state.withLock { $0 } }

    /// Waits (without a deadline the test asserts on) until `condition` holds.
    func waitUntil(_ what: String, _ condition: (State, GroupCommit) -> Bool) {
        for _ in 0..<200_000 {
            if condition(snapshot, group) { return }
            usleep(100)
        }
        Issue.record("never reached: \(what)")
    }
}

/// One committer's outcome.
final class Outcome: Sendable {
    let value = Mutex<String?>(nil)
    func set(_ text: String) { value.withLock { $0 = text } }
    var text: String? { value.withLock { $0 } }
}

@Suite("Group commit hand-off: a sync wakes what it covered and one next leader, never early, fail-stop")
struct GroupCommitHandoffTests {
    /// Starts a committer that appends, waits for durability, and records what it saw then.
    static func committer(_ log: HeldLog, _ outcome: Outcome) -> DispatchSemaphore {
        let seq = log.append()
        return startThread("committer \(seq)") {
            do throws(StorageError) {
                try log.group.waitDurable(seq)
                let durable = log.snapshot.durable
                outcome.set(durable >= seq.rawValue ? "durable" : "early: \(seq) acknowledged with \(durable) durable")
            } catch {
                outcome.set("failed: \(error.code)")
            }
        }
    }

    /// A first committer leading a held sync, and `count` more parked behind it.
    static func leaderAndParked(
        _ log: HeldLog, parked count: Int
    ) -> (leader: Outcome, leaderDone: DispatchSemaphore, parked: [Outcome], parkedDone: [DispatchSemaphore]) {
        let leader = Outcome()
        let leaderDone = committer(log, leader)
        log.waitUntil("the first sync started") { s, _ in s.syncsStarted == 1 }
        let parked = (0..<count).map { _ in Outcome() }
        let parkedDone = parked.map { committer(log, $0) }
        log.waitUntil("\(count) committers parked") { _, g in g.waitingCommitters == count }
        return (leader, leaderDone, parked, parkedDone)
    }

    @Test("the end of a sync acknowledges what it covered and hands the next sync to one parked committer")
    func handsOnToOneWaiter() {
        let log = HeldLog(held: true)
        // Three more commits arrive while the first sync (covering only the first) runs.
        let (leader, leaderDone, others, othersDone) = Self.leaderAndParked(log, parked: 3)
        log.release.signal()
        #expect(leaderDone.wait(timeout: .now() + 60) == .success)
        #expect(leader.text == "durable")
        // What new frames record as durable (their durable lag) is what a sync really covered.
        #expect(log.group.durableTransaction == TransactionID(1))
        // One of the three leads the second sync; the other two stay parked until it ends.
        log.waitUntil("the second sync started") { s, _ in s.syncsStarted == 2 }
        #expect(log.group.waitingCommitters == 2)
        #expect(others.allSatisfy { $0.text == nil }, "nobody is acknowledged before the sync covering them ends")
        log.release.signal()
        for done in othersDone { #expect(done.wait(timeout: .now() + 60) == .success) }
        #expect(others.map(\.text) == ["durable", "durable", "durable"])
        let s = log.snapshot
        #expect(s.syncsStarted == 2, "one sync for the leader, one for the three that came during it")
        #expect(s.published == [1, 4])
        #expect(log.group.durableTransaction == TransactionID(4))
        #expect(log.group.syncs == 2)
        #expect(log.group.waitingCommitters == 0)
    }

    @Test("16 threads × 200 commits: every one acknowledged only once durable, publishes in order, syncs shared")
    func manyCommitters() {
        let log = HeldLog(held: false, syncMicroseconds: 200)
        let (threads, commits) = (16, 200)
        let failures = ThreadFailures()
        let workers = (0..<threads).map { t in
            startThread("committer \(t)") {
                for c in 0..<commits {
                    let seq = log.append()
                    do {
                        try log.group.waitDurable(seq)
                        let durable = log.snapshot.durable
                        if durable < seq.rawValue { failures.record("thread \(t) commit \(c): acknowledged at \(durable) < \(seq)") }
                    } catch {
                        failures.record("thread \(t) commit \(c): \(error)")
                    }
                }
            }
        }
        for worker in workers { #expect(worker.wait(timeout: .now() + 600) == .success) }
        failures.report()
        let s = log.snapshot
        #expect(s.published == s.published.sorted() && Set(s.published).count == s.published.count, "publishes increase")
        #expect(s.published.last == UInt64(threads * commits))
        #expect(s.syncsStarted < threads * commits, "commits share syncs: \(s.syncsStarted) syncs")
        #expect(log.group.waitingCommitters == 0)
    }

    @Test("a failed sync fails its leader and every parked committer, once, and every later commit (fail-stop)")
    func failedSync() {
        let log = HeldLog(held: true, failingSync: 1)
        let (leader, leaderDone, others, othersDone) = Self.leaderAndParked(log, parked: 2)
        log.release.signal()
        for done in [leaderDone] + othersDone { #expect(done.wait(timeout: .now() + 60) == .success) }
        #expect(leader.text == "failed: READ_ONLY")
        #expect(others.map(\.text) == ["failed: READ_ONLY", "failed: READ_ONLY"])
        #expect(log.group.stopReason?.code == .readOnly)
        #expect(log.group.durableTransaction == TransactionID(0), "a failed sync makes nothing durable")
        // Later commits fail at once, and the sync is never retried.
        let later = Outcome()
        #expect(Self.committer(log, later).wait(timeout: .now() + 60) == .success)
        #expect(later.text == "failed: READ_ONLY")
        #expect(log.snapshot.syncsStarted == 1)
        #expect(log.snapshot.published.isEmpty)
    }

    @Test("stop wakes the committers parked behind a sync under way; the sync still acknowledges its leader")
    func stopWakesWaiters() {
        let log = HeldLog(held: true)
        let (leader, leaderDone, parkedOnes, parkedDones) = Self.leaderAndParked(log, parked: 1)
        let (parked, parkedDone) = (parkedOnes[0], parkedDones[0])
        log.group.stop(StorageError(.io, "stopped (test)"))
        // Woken while the leader's sync is still held.
        #expect(parkedDone.wait(timeout: .now() + 60) == .success)
        #expect(parked.text == "failed: IO")
        #expect(leader.text == nil)
        log.release.signal()
        #expect(leaderDone.wait(timeout: .now() + 60) == .success)
        #expect(leader.text == "durable")
        let later = Outcome()
        #expect(Self.committer(log, later).wait(timeout: .now() + 60) == .success)
        #expect(later.text == "failed: IO")
    }

    @Test("sync modes normal and off: marking durable wakes nobody early and later waits return at once")
    func markDurableWithoutSync() throws {
        let log = HeldLog(held: false)
        let seq = log.append()
        log.group.markDurableWithoutSync(seq)
        try log.group.waitDurable(seq)
        #expect(log.snapshot.syncsStarted == 0)
        #expect(log.snapshot.published == [1])
    }
}
