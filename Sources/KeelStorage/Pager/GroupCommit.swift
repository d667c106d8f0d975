// Group commit: committers that wait for durability at the same time share one fdatasync.
//
// A committer appends its frames under the writer lock, releases the writer lock, then calls
// `waitDurable(sequence)`. If no sync is running it becomes the leader: it syncs everything
// appended so far (its own frames and those of every committer that appended before the sync
// started), then wakes everyone whose frames that sync covered. Committers that appended while a
// sync ran wait for it to end; the ending leader hands the next sync to one of them. So under
// load, one fdatasync acknowledges many commits (Docs/Invariants.md, I1), and nobody is
// acknowledged early.
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
// "succeeds" proves nothing.

import Synchronization

final class GroupCommit: @unchecked Sendable {
    // `@unchecked Sendable`: every mutable field below, and each waiter's `wake` until its parker
    // is unparked, is guarded by `lock`.
    private let lock = PthreadMutex()
    /// Guarded by `lock`: the last frame sequence appended, and the last one known durable.
    private var appended: UInt64 = 0
    private var synced: UInt64 = 0
    /// Guarded by `lock`: the transaction of the last frame appended.
    private var appendedTransaction: TransactionID
    /// The last transaction an fdatasync has really made durable (not advanced by
    /// `markDurableWithoutSync`): what new frames record as their durable lag (LogFormat.swift).
    /// Written under `lock`, read by committers without it.
    private let fsyncedTransaction: Atomic<UInt64>
    /// A leader is syncing, or has been chosen to (woken with `.lead`).
    private var syncing = false
    private var failure: StorageError?
    private var syncCount: UInt64 = 0
    /// Committers waiting while a sync is under way, in the order they came.
    private var waiters: [Waiter] = []

    /// Why a waiting committer was woken.
    private enum Wake {
        case durable
        case failed(StorageError)
        /// Lead the next sync: `syncing` is already set on its behalf.
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
    /// `durableTransaction`: a transaction known durable at open (the log's base: the page file
    /// holds it; the frames recovered after it are not known to have been synced).
    init(
        durableUpTo start: FrameSequence, durableTransaction: TransactionID,
        syncLog: @escaping @Sendable () throws(StorageError) -> Void,
        publish: @escaping @Sendable (FrameSequence) -> Void
    ) {
        appended = start.rawValue
        synced = start.rawValue
        appendedTransaction = durableTransaction
        fsyncedTransaction = Atomic(durableTransaction.rawValue)
        self.syncLog = syncLog
        self.publish = publish
    }

    /// Called under the writer lock after a commit's frames are written.
    func noteAppended(_ sequence: FrameSequence, transaction: TransactionID) {
        lock.lock()
        appended = max(appended, sequence.rawValue)
        if transaction > appendedTransaction { appendedTransaction = transaction }
        lock.unlock()
    }

    /// The last transaction an fdatasync of the log has made durable.
    var durableTransaction: TransactionID { TransactionID(fsyncedTransaction.load(ordering: .acquiring)) }

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

    /// Returns once `sequence` is durable, syncing as the leader when nobody else is.
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
        if syncing {
            let me = Waiter(sequence: target)
            waiters.append(me)
            lock.unlock()
            me.parker.park()
            switch me.wake {
            case .durable: return
            case .failed(let error): throw error
            case .lead: lock.lock()
            }
        } else {
            syncing = true
        }
        try lead(until: target)
    }

    /// Syncs as the leader (`syncing` set for this thread, the lock held) until `target` is
    /// durable or the store has failed; wakes the waiters each sync covered and hands the next
    /// sync to one of the rest. Returns with the lock released.
    private func lead(until target: UInt64) throws(StorageError) {
        while true {
            let upTo = appended
            let upToTransaction = appendedTransaction
            lock.unlock()
            var syncError: StorageError?
            do throws(StorageError) {
                try syncLog()
            } catch {
                syncError = error
            }
            lock.lock()
            syncCount += 1
            if let syncError, failure == nil {
                failure = StorageError(
                    .readOnly, "fdatasync of the log failed; the store is read-only until reopened (fail-stop)",
                    cause: syncError)
            }
            if syncError == nil {
                synced = max(synced, upTo)
                if upToTransaction.rawValue > fsyncedTransaction.load(ordering: .relaxed) {
                    fsyncedTransaction.store(upToTransaction.rawValue, ordering: .releasing)
                }
                publish(FrameSequence(synced))
            }
            var woken = takeCovered()
            let covered = synced >= target
            if let failure {
                // Fail-stop: nobody leads again; every waiter not covered gets the failure.
                for waiter in waiters { waiter.wake = .failed(failure) }
                woken += waiters
                waiters = []
                syncing = false
            } else if covered {
                if waiters.isEmpty {
                    syncing = false
                } else {
                    // The next sync is this waiter's to run (`syncing` stays set for it).
                    let next = waiters.removeFirst()
                    next.wake = .lead
                    woken.append(next)
                }
            }  // else: not covered (it appended before waiting, so it cannot be): sync again
            lock.unlock()
            for waiter in woken { waiter.parker.unpark() }
            if covered { return }
            if let failure { throw failure }
            lock.lock()
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
