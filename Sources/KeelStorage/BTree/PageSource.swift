// How the B+tree (and the free list and catalog) reach pages. The pager implements these for a
// read snapshot (PageSource) and for the one write transaction (PageSink); the B+tree's unit tests
// implement them over a plain dictionary.

/// Read access to the pages of one snapshot. A returned buffer must not be modified.
public protocol PageSource {
    var pageSize: Int { get }
    /// Grows whenever the pages of this transaction change (every writablePage, allocatePage and
    /// freePage call). A cursor that sees it change re-seeks from its current key, so cursors stay
    /// valid across writes in the same transaction. Always 0 for a read snapshot.
    var changeCount: UInt64 { get }
    /// The page as of this snapshot, checksum-verified when it came from disk.
    func page(_ number: PageNumber) throws(StorageError) -> PageBuffer
    /// The pages `numbers`, each as `page(_:)` gives it, appended to `out` in order. A read
    /// snapshot finds the cached ones together (`Pager.readPages`: their cold lines overlap).
    func pages(_ numbers: [PageNumber], into out: inout [PageBuffer]) throws(StorageError)
}

extension PageSource {
    public func pages(_ numbers: [PageNumber], into out: inout [PageBuffer]) throws(StorageError) {
        for number in numbers { out.append(try page(number)) }
    }
}

/// Write access inside the write transaction.
public protocol PageSink: PageSource {
    /// The page as this transaction may modify it: a private copy made on first call (copy on
    /// write), the same buffer on later calls. `page(_:)` returns this copy too once it exists.
    func writablePage(_ number: PageNumber) throws(StorageError) -> PageBuffer
    /// A fresh page (zero-filled, owned by this transaction), from the free list or the end of file.
    func allocatePage() throws(StorageError) -> (PageNumber, PageBuffer)
    /// Returns a page to the free list. It must not be used again by the caller.
    func freePage(_ number: PageNumber) throws(StorageError)
    /// Grows whenever the shape of a tree may have changed: on every `writablePage` of a page
    /// that is not a leaf (branches hold the separators and child pointers), every
    /// `allocatePage` and every `freePage`. Writes to leaves alone leave it unchanged. A
    /// `BTreeHint` is used only while this is what it was when the hint was taken.
    var shapeCount: UInt64 { get }
}
