// Read and write transactions: handles valid only inside their `read { }` / `write { }` closure.

/// A read transaction: every tree as of one commit.
public class ReadTransaction {
    let source: any PageSource
    /// The last transaction included in this snapshot.
    public let transaction: TransactionID
    var isOpen = true
    /// The tree roots already found in the catalog, shared by every read of one `Snapshot` (whose
    /// catalog never changes); nil for `Store.read` and write transactions.
    let roots: TreeRoots?
    /// `source` as the `ReadPages` it is, nil in a write transaction: a tree's reads get their
    /// pages without a forced cast of the existential (a `swift_dynamicCast` of ~260 instructions
    /// on every cursor and look-up).
    let reader: ReadPages?

    /// A read transaction over `pages`.
    init(pages: ReadPages, transaction: TransactionID, roots: TreeRoots? = nil) {
        self.source = pages
        self.reader = pages
        self.transaction = transaction
        self.roots = roots
    }

    /// The write transaction's part (`WriteTransaction.init`).
    init(writing pages: WritePages, transaction: TransactionID) {
        self.source = pages
        self.reader = nil
        self.transaction = transaction
        self.roots = nil
    }

    func end() { isOpen = false }

    func checkOpen() {
        precondition(isOpen, "a transaction was used after its read { } or write { } closure returned")
    }
}

/// The write transaction. Changes become visible to readers when the closure returns and the
/// commit is durable; if the closure throws, they are dropped.
public final class WriteTransaction: ReadTransaction {
    let pages: WritePages

    init(pages: WritePages, transaction: TransactionID) {
        self.pages = pages
        super.init(writing: pages, transaction: transaction)
    }

    /// Moves whenever the transaction changes, allocates or frees a page (every change to its
    /// trees, its catalog and its meta fields goes through one of those): two equal readings mean
    /// nothing changed in between. The object store's save groups use it to tell whether a save
    /// that failed inside a shared transaction left anything in it.
    public var changeMark: UInt64 { pages.changeCount }
}
