// A read snapshot that outlives one closure: what a managed-object context reads between its
// saves. `Store.read { }` pins a commit for the length of its closure; a `Snapshot` pins one until
// `close()` (or deinit), and every `read { }` on it sees exactly that commit (I10).
//
//     let snapshot = try store.snapshot()
//     defer { snapshot.close() }
//     let a = try snapshot.read { try $0.tree("people")?.get(k1) }
//     // ...other threads commit...
//     let b = try snapshot.read { try $0.tree("people")?.get(k2) }   // same commit as `a`
//
// A snapshot held past the log limit is cut off by the checkpoint like any reader: its next
// `read` throws `snapshotTooOld` (I12), and the owner takes a new one.

import Synchronization

public final class Snapshot: Sendable {
    /// The last transaction included in this snapshot.
    public let transaction: TransactionID
    let pager: Pager
    private let frames: FrameSequence
    /// The reader registration, nil once closed. Guards use and close: one read at a time.
    private let registration: Mutex<Int?>
    /// The pages of the last read that ended with nothing else holding them (no transaction,
    /// tree or cursor kept past its closure), emptied (`ReadPages.reset`): the next read of this
    /// snapshot, which sees the same commit, reads through them instead of building and freeing
    /// a branch table of its own. They hold no page buffer between reads. Used only under
    /// `registration`'s lock, as a read's pages are used only by the thread running the read.
    nonisolated(unsafe) private var spare: ReadPages?
    /// Tree roots looked up by this snapshot's reads: its catalog never changes.
    private let roots = TreeRoots()

    init(pager: Pager) {
        let (id, frames, transaction) = pager.beginRead()
        self.pager = pager
        self.frames = frames
        self.transaction = transaction
        self.registration = Mutex(id)
    }

    deinit { close() }

    /// Runs `body` on the pinned commit. Throws `closed` after `close()`, `snapshotTooOld` when a
    /// checkpoint cut the snapshot off.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        try registration.withLock { (id: inout Int?) throws -> R in
            guard id != nil else { throw StorageError(.closed, "the snapshot is closed") }
            var pages = spare.take() ?? ReadPages(pager: pager, snapshot: frames)
            defer {
                // Kept only when the ended read's transaction is gone and nothing it made holds
                // the pages (an escaped cursor reads through them): else the next read builds its own.
                if isKnownUniquelyReferenced(&pages) {
                    pages.reset()
                    spare = pages
                }
            }
            let txn = ReadTransaction(pages: pages, transaction: transaction, roots: roots)
            defer { txn.end() }  // runs before the check above: the transaction's last use
            return try body(txn)
        }
    }

    /// Whether a read of this snapshot already found no tree called `name`: true only then —
    /// false when the tree exists, when no read has looked it up yet, and once the snapshot is
    /// closed. Opens no read and takes no reader lock (a pinned read may hold it on this thread):
    /// a caller that would open a read only to find the tree missing (a fetch's to-many members,
    /// per chunk, of a relationship nothing was ever related by) answers without one. Exact: the
    /// snapshot's catalog never changes, and a read's `tree(name)` gives nil from the same record.
    public func knowsNoTree(_ name: String) -> Bool {
        roots.knownAbsent(name)
    }

    /// The pages kept for the next read, and how many buffers they hold (tests).
    var sparePages: (id: ObjectIdentifier, keptBranches: Int)? {
        registration.withLock { _ in spare.map { (ObjectIdentifier($0), $0.keptBranches) } }
    }

    /// Releases the snapshot so checkpoints may overwrite what it pinned. Idempotent.
    public func close() {
        if let id = registration.withLock({ (id: inout Int?) -> Int? in
            defer {
                id = nil
                spare = nil
                // Nothing is known once closed: `knowsNoTree` answers false, so callers read (and
                // throw). Under the lock, so no read can record a root after it.
                roots.removeAll()
            }
            return id
        }) {
            pager.endRead(id)
        }
    }
}

extension Store {
    /// Pins the newest commit until the returned snapshot is closed.
    public func snapshot() throws(StorageError) -> Snapshot {
        Snapshot(pager: try pager())
    }
}
