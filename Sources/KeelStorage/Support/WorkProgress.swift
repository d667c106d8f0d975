/// How far a long operation (compaction, backup, restore, verify) has come, for a progress bar:
/// `done` of `total` units of work — bytes, pages or entries, the operation says which — with
/// `total` 0 when it is not known. Reported from the thread doing the work, every few thousand
/// units; a handler must be quick and must not call back into the store.
public struct WorkProgress: Sendable, Equatable {
    /// What is being done, for people: "compacting Default.keel".
    public var task: String
    public var done: UInt64
    public var total: UInt64

    public init(task: String, done: UInt64, total: UInt64) {
        self.task = task
        self.done = done
        self.total = total
    }
}

/// Receives progress reports; see `WorkProgress`.
public typealias ProgressHandler = (WorkProgress) -> Void
