// The public face of the engine: a store of named B+trees with snapshot reads and one writer.
//
//     let store = try Store.open(at: "data/main.keel")
//     try store.write { txn in try txn.createTree("people").put(key: k, value: v) }
//     let v = try store.read { txn in try txn.tree("people")?.get(k) }
//
// `write` runs one transaction at a time (the writer lock) and returns once the commit is
// durable (sync mode full); `read` runs on any thread at once, each on the snapshot of one commit,
// never blocking the writer. Transactions are confined to their closure.

public import Logging
import Synchronization

public final class Store: Sendable {
    /// The page file's path; the log is `path + "-wal"`.
    public let path: String
    public let options: StoreOptions
    let logger: Logger
    /// The open pager, replaced by compaction, nil once closed. Guards only the reference.
    let current: Mutex<Pager?>

    private init(path: String, options: StoreOptions, pager: Pager, logger: Logger) {
        self.path = path
        self.options = options
        self.logger = logger
        self.current = Mutex(pager)
    }

    /// Opens the store at `path`, creating it when missing (unless `options.readOnly`), and
    /// recovers every transaction committed before a crash.
    public static func open(
        at path: String, options: StoreOptions = StoreOptions(), logger: Logger = Logger(label: "keel.storage")
    ) throws(StorageError) -> Store {
        try open(at: path, options: options, logger: logger, newStoreIdentity: 0)
    }

    /// `open(at:options:logger:)`, giving a store it creates the store identity `newStoreIdentity`
    /// (0: a fresh one). Compaction's new page file keeps the old one's, so the old log, which
    /// serves it after the swap, names the same store (I17).
    static func open(at path: String, options: StoreOptions, logger: Logger, newStoreIdentity: UInt64) throws(StorageError) -> Store {
        let pager = try Pager.open(path: path, options: options, logger: logger, newStoreIdentity: newStoreIdentity)
        let store = Store(path: path, options: options, pager: pager, logger: logger)
        if pager.writer.withLock({ $0.meta.catalogRoot.rawValue == 0 }), !options.readOnly {
            do {
                try store.write { _ in }  // the first transaction creates the catalog
            } catch {
                try? store.close()
                throw error as? StorageError ?? StorageError(.io, "could not initialise the store", cause: error)
            }
        }
        return store
    }

    /// What a salvaging open (`StoreOptions.salvageLog`) dropped: the log's damage, in words
    /// (where it is, and which transactions were durable past it); nil when nothing was.
    public var logDamage: String? { current.withLock { $0?.logDamage?.message } }

    func pager() throws(StorageError) -> Pager {
        guard let p = current.withLock({ $0 }) else { throw StorageError(.closed, "the store is closed", path: path) }
        return p
    }

    /// Runs `body` in a read transaction: a consistent snapshot of the newest durable commit.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        let pager = try pager()
        let (id, snapshot, transaction) = pager.beginRead()
        defer { pager.endRead(id) }
        let txn = ReadTransaction(pages: ReadPages(pager: pager, snapshot: snapshot), transaction: transaction)
        defer { txn.end() }
        return try body(txn)
    }

    /// Runs `body` in the write transaction and commits it. If `body` throws, nothing it did is
    /// kept (I14) and the error is rethrown. Returns after the commit is durable in sync mode full
    /// (I1); concurrent writers share fsyncs.
    public func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        let (result, ticket) = try writeDeferringSync(body)
        try waitDurable(ticket)
        return result
    }

    /// Runs `body` in the write transaction and commits it like `write`, but returns as soon as
    /// the commit is in the log and visible to new readers, before it is durable: the caller must
    /// pass the ticket to `waitDurable` before telling anyone the commit happened. A layer above
    /// that serialises its own commits (the object store's save lock) calls `waitDurable` after
    /// releasing its lock, so its concurrent commits still share fsyncs (group commit).
    public func writeDeferringSync<R>(_ body: (WriteTransaction) throws -> R) throws -> (R, CommitTicket) {
        while true {
            let pager = try pager()
            if let refusal = pager.writeRefusal { throw refusal }
            let outcome: WriteOutcome<R> = try pager.writer.withLock { (w: inout WriterState) throws -> WriteOutcome<R> in
                if w.retired { return .retry }
                if let refusal = pager.writeRefusal { throw refusal }
                let pages = WritePages(pager: pager, base: w.sequence, meta: w.meta)
                let txn = WriteTransaction(pages: pages, transaction: w.lastTransaction.next)
                defer { txn.end() }
                if w.meta.catalogRoot.rawValue == 0 { try txn.createCatalog() }
                let result = try body(txn)
                let sequence = try pager.commit(pages, writer: &w)
                return .done(UnsafeTransfer(result), sequence)
            }
            guard case .done(let result, let sequence) = outcome else { continue }
            // The transaction's pages are released now: let the cache shed what it could not
            // while the commit still held them.
            if sequence != nil { pager.trimCache() }
            return (result.value, CommitTicket(pager: pager, sequence: sequence))
        }
    }

    /// Waits until the commit of `ticket` is durable (sync mode full; at once otherwise), then
    /// runs the automatic checkpoint when the log has grown past its threshold — or, with
    /// `checkpointInBackground`, asks the background checkpointer for it and returns. Throws when
    /// the log could not be synced (the store is then fail-stopped, I4).
    public func waitDurable(_ ticket: CommitTicket) throws(StorageError) {
        let pager = ticket.pager
        if let sequence = ticket.sequence, options.syncMode == .full { try pager.groupCommit.waitDurable(sequence) }
        if pager.needsCheckpoint {
            if options.checkpointInBackground {
                pager.backgroundCheckpointer.request(pager)
            } else {
                pager.runAutomaticCheckpoint()
            }
        }
    }

    /// Waits until the background checkpointer (`checkpointInBackground`) has finished what the
    /// commits so far asked of it; returns at once when nothing is asked for. A benchmark or a
    /// test that must not overlap the checkpoint with other work calls it.
    public func waitForBackgroundCheckpoint() throws(StorageError) {
        try pager().backgroundCheckpointer.waitIdle()
    }

    /// Copies committed changes into the page file and resets the log when it can (readers with
    /// old snapshots may keep part of the log alive; see `CheckpointMode`).
    @discardableResult
    public func checkpoint() throws(StorageError) -> CheckpointReport {
        let r = try pager().checkpoint(.passive)
        return CheckpointReport(pagesWritten: r.pagesWritten, logReset: r.logReset)
    }

    /// Checkpoints everything (unless `checkpoint` is false: the log stays as it is, for the
    /// next open to recover — a store that was only read) and closes the files. Later calls
    /// throw `.closed`. Read transactions still running are cut off.
    public func close(checkpoint: Bool = true) throws(StorageError) {
        guard let pager = current.withLock({ p -> Pager? in
            let old = p
            p = nil
            return old
        }) else { return }
        var failure: StorageError?
        do throws(StorageError) {
            try pager.writer.withLock { (w: inout WriterState) throws(StorageError) in
                w.retired = true
                if checkpoint, pager.writeRefusal == nil { _ = try pager.checkpointLocked(.complete, writer: &w) }
            }
        } catch {
            failure = error
        }
        // A background checkpoint that waited for the lock above finds the pager retired and
        // ends; none outlives the store.
        pager.backgroundCheckpointer.waitIdle()
        pager.closeFiles()
        if let failure { throw failure }
    }
}

/// A commit made by `writeDeferringSync`, to wait for with `waitDurable`.
public struct CommitTicket: Sendable {
    let pager: Pager
    /// The commit's last log frame; nil when the transaction changed nothing.
    let sequence: FrameSequence?
}

/// What a checkpoint did.
public struct CheckpointReport: Sendable, Equatable {
    public var pagesWritten: Int
    public var logReset: Bool
}

enum WriteOutcome<R> {
    case retry
    case done(UnsafeTransfer<R>, FrameSequence?)
}

/// Moves a value out of the writer lock's closure. The value was produced by the caller's own
/// closure on this thread and goes straight back to it, so no other thread ever sees it.
struct UnsafeTransfer<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

extension Pager {
    func closeFiles() {
        try? pageFile.close()
        try? log.close()
    }
}
