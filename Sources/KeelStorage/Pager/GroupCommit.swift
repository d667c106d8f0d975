// Group commit: committers that wait for durability at the same time share one fdatasync.
//
// A committer appends its frames under the writer lock, releases the writer lock, then calls
// `waitDurable(sequence)`. If no sync under way covers its frames and fewer than
// `maxSyncsInFlight` (two) run, it becomes a leader: it syncs everything appended so far (its own
// frames and those of every committer that appended before the sync started), then wakes
// everyone whose frames that sync covered. Committers that appended while the syncs allowed run
// wait; the ending leader hands the next sync to one of them. So under load, one fdatasync
// acknowledges many commits (Docs/Invariants.md, I1), the disk always has the next sync queued
// (a second leader does not wait for the first sync's end and a hand-off's wake-up), and nobody
// is acknowledged early: ended syncs count in the order they started.
//
// Waking: each waiting committer parks on its own semaphore (`Parker`) and is told why it was
// woken — durable, failed, or "lead the next sync" — so it returns without taking the lock
// again. The ending leader wakes exactly the committers its sync covered and at most one more,
// the next leader; the others sleep on until that sync covers them. (A condition variable's
// broadcast woke every waiter, each then queued for the mutex and most went back to sleep: under
// 16 saving clients that was half the daemon's context switches; Docs/Performance.md.)
//
// Fail-stop (I6): if a sync fails, the failure is remembered; every waiter not yet covered by an
// earlier successful sync gets the error, and so does every later waiter. The sync is never
// retried: after a failed fdatasync Linux may have dropped the dirty pages, so a retry that
// "succeeds" proves nothing — nor does a concurrent sync that started after the failed one
// (it counts for nothing, even when it ended first).

final class GroupCommit: @unchecked Sendable {
    // `@unchecked Sendable`: every mutable field below, and each waiter's `wake` until its parker
    // is unparked, is guarded by `lock`.
    private let lock = PthreadMutex()
    /// Guarded by `lock`: the last frame sequence appended, and the last one known durable.
    private var appended: UInt64 = 0
    private var synced: UInt64 = 0
    /// Syncs under way, or leaders chosen to start one (woken with `.lead`): at most
    /// `maxSyncsInFlight`.
    private var slots = 0
    /// The syncs under way or ended but not yet accounted, in the order they started. A sync's
    /// success counts only once every sync that started before it has ended well (below).
    private var flights: [Flight] = []
    private var failure: StorageError?
    /// A sync failed: no later sync's success counts (its fdatasync may not have seen the error
    /// that an earlier one took).
    private var syncFailed = false
    private var syncCount: UInt64 = 0
    /// Committers waiting while a sync is under way, in the order they came.
    private var waiters: [Waiter] = []
    /// How many fdatasyncs may run at once (1: the next starts when one ends).
    let maxSyncsInFlight: Int

    /// One sync: what it covers (everything appended when it started), and how it ended.
    private final class Flight {
        let upTo: UInt64
        var ended = false
        var succeeded = false
        init(upTo: UInt64) { self.upTo = upTo }
    }

    /// Why a waiting committer was woken.
    private enum Wake {
        case durable
        case failed(StorageError)
        /// Lead a sync: a slot (`slots`) is already taken on its behalf.
        case lead
    }

    /// One committer waiting for durability.
    private final class Waiter {
        let sequence: UInt64
        let parker = Parker()
        /// Set under `lock` before `parker` is unparked; read by the waiter after it wakes.
        var wake = Wake.durable

        init(sequence: UInt64) { self.sequence = sequence }
    }

    private let syncLog: @Sendable () throws(StorageError) -> Void
    private let publish: @Sendable (FrameSequence) -> Void

    /// `syncLog` makes every appended frame durable; `publish` makes a durable sequence visible to
    /// new readers (called with the lock held, in increasing order).
    init(
        durableUpTo start: FrameSequence, syncLog: @escaping @Sendable () throws(StorageError) -> Void,
        publish: @escaping @Sendable (FrameSequence) -> Void, maxSyncsInFlight: Int = 2
    ) {
        precondition(maxSyncsInFlight >= 1)
        self.maxSyncsInFlight = maxSyncsInFlight
        appended = start.rawValue
        synced = start.rawValue
        self.syncLog = syncLog
        self.publish = publish
    }

    /// Called under the writer lock after a commit's frames are written.
    func noteAppended(_ sequence: FrameSequence) {
        lock.lock()
        appended = max(appended, sequence.rawValue)
        lock.unlock()
    }

    /// How many fdatasyncs committers have issued.
    var syncs: UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return syncCount
    }

    /// Committers parked behind a sync under way (tests wait for a given number).
    var waitingCommitters: Int {
        lock.lock()
        defer { lock.unlock() }
        return waiters.count
    }

    /// The failure that stopped the store, if any.
    var stopReason: StorageError? {
        lock.lock()
        defer { lock.unlock() }
        return failure
    }

    /// Marks everything appended as durable without syncing (sync modes normal and off).
    func markDurableWithoutSync(_ sequence: FrameSequence) {
        lock.lock()
        appended = max(appended, sequence.rawValue)
        synced = max(synced, sequence.rawValue)
        publish(FrameSequence(synced))
        let woken = takeCovered()
        lock.unlock()
        for waiter in woken { waiter.parker.unpark() }
    }

    /// Returns once `sequence` is durable, syncing as the leader when no sync under way covers
    /// it and a sync may start.
    func waitDurable(_ sequence: FrameSequence) throws(StorageError) {
        let target = sequence.rawValue
        lock.lock()
        if synced >= target {
            lock.unlock()
            return
        }
        if let failure {
            lock.unlock()
            throw failure
        }
        if flightCovers(target) || slots >= maxSyncsInFlight {
            try waitAsWaiter(target)
            return
        }
        slots += 1
        try lead(until: target)
    }

    /// Whether a sync under way (or ended, not yet accounted) covers `target` (lock held).
    private func flightCovers(_ target: UInt64) -> Bool {
        flights.last.map { $0.upTo >= target } ?? false
    }

    /// Parks until `target` is durable, the store failed, or this committer is to lead a sync
    /// (the lock held on entry; returns with it released).
    private func waitAsWaiter(_ target: UInt64) throws(StorageError) {
        let me = Waiter(sequence: target)
        waiters.append(me)
        lock.unlock()
        me.parker.park()
        switch me.wake {
        case .durable: return
        case .failed(let error): throw error
        case .lead:
            lock.lock()
            try lead(until: target)
        }
    }

    /// Syncs as a leader (a slot taken for this thread, the lock held): one fdatasync of what is
    /// appended, then accounts every sync that has ended in start order, wakes the waiters that
    /// made durable, and hands free slots to waiters no sync under way covers. Returns with the
    /// lock released once `target` is durable; waits as a waiter when an earlier sync is still
    /// under way; throws when the store has failed.
    ///
    /// Several syncs may run at once (`maxSyncsInFlight`): a leader whose frames an earlier sync
    /// does not cover starts its own at once instead of waiting for that sync's end and the
    /// hand-off's wake-up, so the disk always has the next sync queued. Each fdatasync makes
    /// durable what was written before it began; a later one that ends first counts only once
    /// the earlier ones have ended well (after a failed fdatasync, a concurrent one may return
    /// success for pages the kernel dropped: the error is reported once per open file).
    private func lead(until target: UInt64) throws(StorageError) {
        let flight = Flight(upTo: appended)
        flights.append(flight)
        lock.unlock()
        var syncError: StorageError?
        do throws(StorageError) {
            try syncLog()
        } catch {
            syncError = error
        }
        lock.lock()
        syncCount += 1
        slots -= 1
        flight.ended = true
        flight.succeeded = syncError == nil
        if let syncError {
            syncFailed = true
            if failure == nil {
                failure = StorageError(
                    .readOnly, "fdatasync of the log failed; the store is read-only until reopened (fail-stop)",
                    cause: syncError)
            }
        }
        // Account the ended syncs in the order they started.
        let before = synced
        while let first = flights.first, first.ended {
            flights.removeFirst()
            if first.succeeded && !syncFailed { synced = max(synced, first.upTo) }
        }
        if synced > before { publish(FrameSequence(synced)) }
        var woken = takeCovered()
        if let failure {
            // Fail-stop: nobody leads again; every waiter not covered gets the failure.
            for waiter in waiters { waiter.wake = .failed(failure) }
            woken += waiters
            waiters = []
        } else {
            // A free slot goes to the first waiter no sync under way covers: the next sync is its
            // to run, and covers every waiter appended so far.
            if slots < maxSyncsInFlight, let i = waiters.firstIndex(where: { !flightCovers($0.sequence) }) {
                let next = waiters.remove(at: i)
                next.wake = .lead
                slots += 1
                woken.append(next)
            }
        }
        let covered = synced >= target
        if covered || failure != nil {
            lock.unlock()
            for waiter in woken { waiter.parker.unpark() }
            if covered { return }
            throw failure!
        }
        // An earlier sync is still under way: wait for it like any committer (it wakes this one).
        let me = Waiter(sequence: target)
        waiters.append(me)
        lock.unlock()
        for waiter in woken { waiter.parker.unpark() }
        me.parker.park()
        switch me.wake {
        case .durable: return
        case .failed(let error): throw error
        case .lead:
            lock.lock()
            try lead(until: target)
        }
    }

    /// Removes and returns the waiters `synced` covers, each told it is durable (lock held).
    private func takeCovered() -> [Waiter] {
        guard !waiters.isEmpty else { return [] }
        var covered: [Waiter] = []
        waiters.removeAll { waiter in
            guard waiter.sequence <= synced else { return false }
            waiter.wake = .durable
            covered.append(waiter)
            return true
        }
        return covered
    }

    /// Syncs everything appended so far (checkpoint, close).
    func syncAll() throws(StorageError) {
        lock.lock()
        let target = appended
        lock.unlock()
        try waitDurable(FrameSequence(target))
    }

    /// Records an outside failure that must stop all writes (fail-stop): every committer waiting
    /// gets it (a sync under way still acknowledges its leader if it succeeds).
    func stop(_ error: StorageError) {
        lock.lock()
        if failure == nil { failure = error }
        let stopped = failure ?? error
        let woken = waiters
        waiters = []
        for waiter in woken { waiter.wake = .failed(stopped) }
        lock.unlock()
        for waiter in woken { waiter.parker.unpark() }
    }
}
