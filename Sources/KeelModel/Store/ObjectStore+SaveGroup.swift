// Save groups: single-store saves queued behind the save lock share one engine transaction and
// one commit (flat combining; Decision 0008, Docs/Concurrency.md "Save groups").
//
// A saver pushes its save onto its home store's queue. If no leader is waiting for that queue,
// it becomes the leader: it takes the save lock, takes every save queued by then (its own among
// them), and runs them in queue order inside one `writeDeferringSync` of the store, each exactly
// as `performSave` runs a save alone (`runSave`: apply, validate, flush, its own history record
// and save ID). It commits once, releases the save lock, waits once for the commit's durability,
// and hands each save its result. Every other saver sleeps on its own `Parker` until then — it
// never touches the save lock. Savers that come while a group runs queue for the next leader,
// who waits for the save lock meanwhile. A new leader yields the CPU once before it takes the
// queue when other savers of the store are under way, so that those already runnable can join
// its group.
//
// Each save stays atomic and fails on its own. A save that fails (CONFLICT, VALIDATION, unique,
// deny, …) without having changed a page of the transaction (`WriteTransaction.changeMark`
// unmoved — conflicts are found before anything is written) simply fails. One that fails after
// writing (relationship edits write their link trees before validation) poisons the shared
// transaction: the leader abandons it (the engine drops everything, I14), records the failure,
// and runs the group again without that save — the saves before it come out the same, since
// they read the same state. A commit or a durability wait that fails fails every save of the
// group that had not failed on its own; nothing of the group is acknowledged.
//
// Save IDs are handed out in queue order inside the group, observers hear of its saves in that
// order once the commit is durable, and nobody returns before then (sync mode full).
//
// Once durable, the leader also runs each successful save's `onDurable` (the daemon writes the
// SAVE's reply there) before it settles the saver. A saver that passed its thread's own wake-up
// (`ThreadWakeUp`, which its next job posts too) sleeps on that; when its `onDurable` says the
// saver's work can wait (the reply went out and nothing else waits for it), the leader does not
// wake it: the thread wakes once, for its client's next request, finishes the save and runs the
// request — one sleep per save where it took two (Performance.md, round `savepath`).

import Glibc
import KeelStorage
import Synchronization

/// The single-store saves of one store waiting for a leader.
final class SaveQueue: @unchecked Sendable {
    // `@unchecked Sendable`: `pending` and `leaderWaiting` are guarded by `lock`.
    let lock = PthreadMutex()
    var pending: [QueuedSave] = []
    /// A saver has become the leader of the saves queued now and has not taken them yet.
    var leaderWaiting = false
    /// Counts since open: groups led, saves they took, transactions abandoned for a save that
    /// failed after writing.
    private var counts = (groups: 0, saves: 0, abandoned: 0)
    /// Savers between their push and their settling (parked ones included).
    private let inFlight = Atomic<Int>(0)

    init() {}

    /// Pushes `save`; true when its saver is to lead. The leader calls `finished` once it has
    /// settled it.
    func push(_ save: QueuedSave) -> Bool {
        inFlight.add(1, ordering: .relaxed)
        lock.lock()
        defer { lock.unlock() }
        pending.append(save)
        if leaderWaiting { return false }
        leaderWaiting = true
        return true
    }

    func finished() { inFlight.subtract(1, ordering: .relaxed) }

    /// Whether another saver of this store is under way (queued, running or waiting for its
    /// durability) besides the caller.
    var othersInFlight: Bool { inFlight.load(ordering: .relaxed) > 1 }

    /// Takes every queued save (the leader, under the save lock).
    func take() -> [QueuedSave] {
        lock.lock()
        defer { lock.unlock() }
        let group = pending
        pending = []
        leaderWaiting = false
        counts.groups += 1
        counts.saves += group.count
        return group
    }

    func noteAbandoned() {
        lock.lock()
        counts.abandoned += 1
        lock.unlock()
    }

    /// Saves waiting now (tests wait for a number of them).
    var waiting: Int {
        lock.lock()
        defer { lock.unlock() }
        return pending.count
    }

    var statistics: (groups: Int, saves: Int, abandoned: Int) {
        lock.lock()
        defer { lock.unlock() }
        return counts
    }
}

/// One save waiting in a queue. Its closures belong to its saver, which sleeps until the leader
/// has set `outcome` and unparked it, so the leader may call them. They are the saver's
/// non-escaping closures (`withoutActuallyEscaping`): the leader lets go of them (`release`)
/// before it unparks the saver, whose closures must not outlive its call.
final class QueuedSave: @unchecked Sendable {
    // `@unchecked Sendable`: written by the leader only while the saver is parked (or by the
    // saver itself when it leads); the unpark orders those writes before the saver's reads.
    typealias Apply = (SaveSession, _ reservedMarks: [UInt64]) throws(KeelError) -> [ObjectID: ObjectID]
    private(set) var apply: Apply?
    private(set) var onCommit: (() -> Void)?
    private(set) var onDurable: ((SaveResult) -> Bool)?
    let marks: [UInt64]
    /// Where the saver sleeps: a parker of its own (made only for a saver without a wake-up), or
    /// its thread's wake-up (shared with the thread's other wakers, so it may wake before its save
    /// is settled).
    private enum Sleep {
        case own(Parker)
        case shared(ThreadWakeUp)
    }
    private let sleep: Sleep
    /// Set by the leader once it is done with this save (sequentially consistent): `outcome` is set and the
    /// saver's closures let go.
    let settled = Atomic<Bool>(false)
    /// Times the saver woke on its shared wake-up (a Dekker pair with `settled`: a leader that
    /// means to leave the saver asleep wakes it after all when it counted a wake-up meanwhile).
    let wakeUps = Atomic<Int>(0)
    var outcome: Result<SaveResult, KeelError>?
    /// The result and history record, once the save is in the group's commit (not yet durable).
    var committed: (result: SaveResult, record: HistoryRecord)?

    init(
        apply: @escaping Apply, onCommit: @escaping () -> Void, onDurable: @escaping (SaveResult) -> Bool, marks: [UInt64],
        wakeUp: ThreadWakeUp?
    ) {
        self.apply = apply
        self.onCommit = onCommit
        self.onDurable = onDurable
        self.marks = marks
        self.sleep = wakeUp.map(Sleep.shared) ?? .own(Parker())
    }

    /// The saver (not leading) sleeps until the leader has settled its save. On its thread's
    /// shared wake-up every wake-up taken is given back once the save is settled: those were
    /// (or may have been) for the thread's next work, which then finds them.
    func waitSettled() {
        let wakeUp: ThreadWakeUp
        switch sleep {
        case .own(let parker):
            parker.park()
            return
        case .shared(let shared): wakeUp = shared
        }
        var taken = 0
        repeat {
            wakeUp.wait()
            taken += 1
            wakeUps.add(1, ordering: .sequentiallyConsistent)
        } while !settled.load(ordering: .sequentiallyConsistent)
        for _ in 0..<taken { wakeUp.post() }
    }

    /// The leader is done with the save: it lets the saver go on, waking it unless `leaveAsleep`
    /// (and the saver woke meanwhile on its shared wake-up, in which case it is woken anyway:
    /// that wake-up may have been its thread's next job, which it took and gave back only once
    /// settled).
    func settle(leaveAsleep: Bool) {
        settled.store(true, ordering: .sequentiallyConsistent)
        switch sleep {
        case .own(let parker): parker.unpark()
        case .shared(let wakeUp):
            if !leaveAsleep || wakeUps.load(ordering: .sequentiallyConsistent) > 0 { wakeUp.post() }
        }
    }

    /// Lets go of the saver's closures.
    func release() {
        apply = nil
        onCommit = nil
        onDurable = nil
    }
}

extension ObjectStore {
    /// Runs a save of store `home` in a transaction shared with the other saves queued for that
    /// store (see the top of the file). `performSave`'s contract; `onCommit` may run on another
    /// saver's thread (the group's leader) while this one waits, and so may `onDurable`, which
    /// runs once the save is durable and before this call returns (not when it fails); it returns
    /// whether this thread may sleep on until `wakeUp` is posted by someone else (nil: it is
    /// always woken).
    func performGroupedSave(
        home: Int, onCommit: () -> Void, wakeUp: ThreadWakeUp?, onDurable: (SaveResult) -> Bool,
        _ apply: (SaveSession, _ reservedMarks: [UInt64]) throws(KeelError) -> [ObjectID: ObjectID]
    ) throws(KeelError) -> SaveResult {
        let marks = reservedMarks()
        let outcome = withoutActuallyEscaping(apply) { apply in
            withoutActuallyEscaping(onCommit) { onCommit in
                withoutActuallyEscaping(onDurable) { onDurable in
                    let me = QueuedSave(apply: apply, onCommit: onCommit, onDurable: onDurable, marks: marks, wakeUp: wakeUp)
                    if saveQueues[home].push(me) {
                        runGroup(home: home, leader: me)
                    } else {
                        me.waitSettled()
                    }
                    // Set by the group that took this save (this thread's own when it led): a leader
                    // settles every save it takes before it returns or unparks anyone.
                    return me.outcome ?? .failure(KeelError(.io, "a save group ended without settling a save"))
                }
            }
        }
        return try outcome.get()
    }

    /// Leads one group of store `home`: takes what is queued under the save lock, runs it in one
    /// transaction, waits once for its durability, settles every save and wakes the others.
    private func runGroup(home: Int, leader: QueuedSave) {
        // While other savers are under way, give the CPU away once before taking the queue: the
        // savers that are runnable reach the queue meanwhile and join this group (16 clients on
        // 2 cores: ~7 saves per transaction instead of ~1.3-2.5, and ~20-40% less CPU per save;
        // Performance.md, round `groupsave`). A lone saver does not yield: on a loaded machine
        // the yield hands its CPU to other processes and only adds latency.
        if saveQueues[home].othersInFlight { sched_yield() }
        let (group, ticket) = saveLock.withLock { (counter: inout SaveCounter) -> ([QueuedSave], CommitTicket?) in
            let group = saveQueues[home].take()
            return (group, commitGroup(group, home: home, counter: &counter))
        }
        // Outside the save lock, as for a save alone: the next group commits meanwhile and shares
        // this fsync.
        let done = group.filter { $0.committed != nil }
        for save in done { save.onCommit?() }
        var failure: KeelError?
        if let ticket {
            do throws(StorageError) {
                try stores[home].waitDurable(ticket)
            } catch {
                failure = KeelError(error)
            }
        }
        // One take of the notice lock for the group (observers hear its saves in commit order).
        settleNotices(done.lazy.map { $0.committed!.record.saveID }, durable: failure == nil)
        for save in done {
            save.outcome = failure.map { .failure($0) } ?? .success(save.committed!.result)
        }
        // Each saver's `onDurable` before it is settled: its reply is out before its thread runs,
        // and the thread is left asleep when nothing but its next request needs it.
        for save in group {
            var leaveAsleep = false
            if case .success(let result)? = save.outcome, let onDurable = save.onDurable { leaveAsleep = onDurable(result) }
            save.release()
            saveQueues[home].finished()
            if save !== leader { save.settle(leaveAsleep: leaveAsleep) }
        }
    }

    /// Runs `group` in one write transaction of store `home` (the save lock held) and commits it;
    /// returns the commit's ticket, or nil when it failed. Sets `outcome` of each save that
    /// failed (on its own, or with the commit) and `committed` of each one the commit holds.
    private func commitGroup(_ group: [QueuedSave], home: Int, counter: inout SaveCounter) -> CommitTicket? {
        var live = Array(group.indices)
        while true {
            var next = counter
            var ran: [(member: Int, result: SaveResult, record: HistoryRecord)] = []
            var reachedCommit = false
            // The save that failed after writing, which abandons the transaction.
            var abort: Int?
            do throws(KeelError) {
                let (_, ticket) = try untyped { try stores[home].writeDeferringSync { (txn: WriteTransaction) throws in
                    // The group's saves share the transaction's tree handles (SaveSession.swift).
                    let trees = TreeHandles(storeCount: stores.count)
                    for m in live {
                        let save = group[m]
                        guard let apply = save.apply else { preconditionFailure("a queued save is released only once settled") }
                        let mark = txn.changeMark
                        let session = SaveSession(
                            model: model, layout: layout, storeCount: stores.count, freshAbove: next.stored, trees: trees)
                        session.txns[home] = txn
                        do throws(KeelError) {
                            guard let (result, record) = try runSave(session, order: [home], saveID: next.last + 1, marks: save.marks, apply) else {
                                preconditionFailure("runSave returns nil only when asked to (unchangedIsNoSave)")
                            }
                            next.last += 1
                            next.noteStored(result.inserted)
                            ran.append((m, result, record))
                        } catch {
                            // Nothing written: the save fails alone and the transaction goes on.
                            // Something written: the transaction is abandoned (below).
                            save.outcome = .failure(error)
                            guard txn.changeMark == mark else {
                                abort = m
                                throw error
                            }
                        }
                    }
                    reachedCommit = true
                } }
                counter = next
                committed.store(counter.last, ordering: .releasing)
                // Queued under the save lock, so observers hear saves in commit order (once durable).
                for (m, result, record) in ran {
                    group[m].committed = (result, record)
                    queueNotice(record)
                }
                return ticket
            } catch {
                if abort != nil {
                    // Run the group again without the save that failed (its outcome is set), nor
                    // those that failed alone before it (they fail the same way against the same
                    // state).
                    saveQueues[home].noteAbandoned()
                    live.removeAll { group[$0].outcome != nil }
                    continue
                }
                // A commit that failed part-way: never hand its ids out again (as a save alone).
                if reachedCommit { counter = next }
                for m in live where group[m].outcome == nil { group[m].outcome = .failure(error) }
                return nil
            }
        }
    }
}
