// Group commit: committers that wait for durability at the same time share one fdatasync.
//
// A committer appends its frames under the writer lock, releases the writer lock, then calls
// `waitDurable(sequence)`. If no sync is running it becomes the leader: it syncs everything
// appended so far (its own frames and those of every committer that appended before the sync
// started), then wakes everyone whose frames that sync covered. Committers that appended while a
// sync ran wait for it to end and elect the next leader among themselves. So under load, one
// fdatasync acknowledges many commits (Docs/Invariants.md, I1), and nobody is acknowledged early.
//
// Fail-stop (I6): if a sync fails, the failure is remembered; every waiter not yet covered by an
// earlier successful sync gets the error, and so does every later waiter. The sync is never
// retried: after a failed fdatasync Linux may have dropped the dirty pages, so a retry that
// "succeeds" proves nothing.

final class GroupCommit: @unchecked Sendable {
    // `@unchecked Sendable`: every mutable field below is guarded by `lock`.
    private let lock = ConditionLock()
    /// Guarded by `lock`: the last frame sequence appended, and the last one known durable.
    private var appended: UInt64 = 0
    private var synced: UInt64 = 0
    private var syncing = false
    private var failure: StorageError?
    private var syncCount: UInt64 = 0

    private let syncLog: @Sendable () throws(StorageError) -> Void
    private let publish: @Sendable (FrameSequence) -> Void

    /// `syncLog` makes every appended frame durable; `publish` makes a durable sequence visible to
    /// new readers (called with the lock held, in increasing order).
    init(
        durableUpTo start: FrameSequence, syncLog: @escaping @Sendable () throws(StorageError) -> Void,
        publish: @escaping @Sendable (FrameSequence) -> Void
    ) {
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
        lock.unlock()
    }

    /// Returns once `sequence` is durable, syncing as the leader when nobody else is.
    func waitDurable(_ sequence: FrameSequence) throws(StorageError) {
        lock.lock()
        while synced < sequence.rawValue {
            if let failure {
                lock.unlock()
                throw failure
            }
            if syncing {
                lock.wait()
                continue
            }
            syncing = true
            let target = appended
            lock.unlock()
            var syncError: StorageError?
            do throws(StorageError) {
                try syncLog()
            } catch {
                syncError = error
            }
            lock.lock()
            syncing = false
            syncCount += 1
            if let syncError {
                failure = StorageError(
                    .readOnly, "fdatasync of the log failed; the store is read-only until reopened (fail-stop)",
                    cause: syncError)
            } else {
                synced = max(synced, target)
                publish(FrameSequence(synced))
            }
            lock.broadcast()
        }
        lock.unlock()
    }

    /// Syncs everything appended so far (checkpoint, close).
    func syncAll() throws(StorageError) {
        lock.lock()
        let target = appended
        lock.unlock()
        try waitDurable(FrameSequence(target))
    }

    /// Records an outside failure that must stop all writes (fail-stop).
    func stop(_ error: StorageError) {
        lock.lock()
        if failure == nil { failure = error }
        lock.broadcast()
        lock.unlock()
    }
}
