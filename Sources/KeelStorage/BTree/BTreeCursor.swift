// A position in a B+tree, for ordered walks in both directions. It keeps the path from the root
// (one frame per branch: the page and the child position taken; there are no sibling links), so
// `next()`/`previous()` are amortised O(1) and allocate nothing.
//
// On a write transaction the tree may change under the cursor. The cursor remembers the key it
// stands on and the source's `changeCount`; when the count has moved, the next call re-seeks
// from that key before doing anything else. If that key is gone, the cursor lands on the entry
// that followed it: `next()` then stops there (it *is* the next entry), `previous()` moves to
// the entry before it, and the accessors read it. So "scan and delete as you go" just works.

/// A cursor over one tree in one page source. Create it with `BTree.cursor(in:)`.
public struct BTreeCursor<Source: PageSource> {
    struct Frame {
        var node: Node
        var position: Int
    }

    public let tree: BTree
    public let source: Source
    var frames: [Frame] = []
    var leaf: Node?
    var index = 0
    var entry = LeafEntry(cellStart: 0, keyStart: 0, keyLength: 0, valueStart: 0, valueLength: 0, isOverflow: false)
    /// Whether the cursor stands on an entry.
    public internal(set) var isValid = false

    /// True when the source can change (a write transaction): then the current key is kept.
    let tracksChanges: Bool
    var seenChangeCount: UInt64 = 0
    var savedKey: [UInt8] = []

    public init(tree: BTree, source: Source) {
        self.tree = tree
        self.source = source
        self.tracksChanges = source is any PageSink
        frames.reserveCapacity(8)
    }

    // MARK: Reading the current entry

    /// The current key (a copy).
    public var key: [UInt8] {
        mutating get throws(StorageError) { try withKey { [UInt8]($0) } }
    }

    /// The current value (a copy).
    public mutating func value() throws(StorageError) -> [UInt8] { try withValue { [UInt8]($0) } }

    /// Calls `body` with the current key, in page memory (valid only inside `body`).
    public mutating func withKey<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        try prepareToRead()
        guard let leaf else { preconditionFailure("cursor has no leaf") }
        return try withExtendedLifetime(leaf.buffer) { () throws(StorageError) -> R in
            try body(UnsafeRawBufferPointer(start: leaf.base + entry.keyStart, count: entry.keyLength))
        }
    }

    /// The current key in page memory and the buffer that keeps it alive (one reference taken,
    /// for `Cursor`'s inlinable accessors; `withKey` takes and drops two).
    mutating func currentKey() throws(StorageError) -> (UnsafeRawBufferPointer, PageBuffer) {
        try prepareToRead()
        guard let owner = leaf?.buffer, let base = leaf?.base else { preconditionFailure("cursor has no leaf") }
        return (UnsafeRawBufferPointer(start: base + entry.keyStart, count: entry.keyLength), owner)
    }

    /// The current value in page memory, nil when it is in overflow pages or the cursor stands
    /// nowhere. Valid while the leaf is kept alive (`currentKey()`'s buffer).
    var inlineValue: UnsafeRawBufferPointer? {
        guard isValid, !entry.isOverflow, let base = leaf?.base else { return nil }
        return UnsafeRawBufferPointer(start: base + entry.valueStart, count: entry.valueLength)
    }

    /// Calls `body` with the current value: in page memory, or for an overflow value a temporary
    /// buffer (valid only inside `body`).
    public mutating func withValue<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        try withEntry { _, value throws(StorageError) in try body(value) }
    }

    /// Calls `body` with the current key and value (valid only inside `body`).
    public mutating func withEntry<R>(
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(StorageError) -> R
    ) throws(StorageError) -> R {
        try prepareToRead()
        guard let leaf else { preconditionFailure("cursor has no leaf") }
        return try withExtendedLifetime(leaf.buffer) { () throws(StorageError) -> R in try Self.withEntry(entry, of: leaf, in: source, body) }
    }

    /// Calls `body` with the key and value of `entry` in `leaf` (which the caller keeps alive):
    /// the value in page memory, or an overflow value in a temporary buffer.
    @inline(__always)
    static func withEntry<R>(
        _ entry: LeafEntry, of leaf: Node, in source: Source,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(StorageError) -> R
    ) throws(StorageError) -> R {
        let key = UnsafeRawBufferPointer(start: leaf.base + entry.keyStart, count: entry.keyLength)
        if entry.isOverflow {
            let reference = try OverflowReference.read(leaf.base + entry.valueStart, page: leaf.number)
            return try OverflowChain.withValue(reference, in: source, owner: leaf.number) { value throws(StorageError) in
                try body(key, value)
            }
        }
        return try body(key, UnsafeRawBufferPointer(start: leaf.base + entry.valueStart, count: entry.valueLength))
    }

    /// Re-seeks when the tree changed since the cursor moved; the cursor must stand on an entry.
    private mutating func prepareToRead() throws(StorageError) {
        precondition(isValid, "the cursor does not stand on an entry")
        _ = try resyncIfChanged()
        guard isValid else {
            throw StorageError(.invalidArgument, "the cursor's entry and every entry after it were deleted")
        }
    }

    // MARK: Positioning

    /// Moves to the first entry with a key ≥ `key`; false (and invalid) when there is none.
    @discardableResult
    public mutating func seek(to key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        try descend(to: key)
        return try landInLeaf(key, from: 0)
    }

    @discardableResult
    public mutating func seek(to key: [UInt8]) throws(StorageError) -> Bool {
        try key.withBytes { k throws(StorageError) in try seek(to: k) }
    }

    /// Moves to the first entry; false when the tree is empty.
    @discardableResult
    public mutating func seekFirst() throws(StorageError) -> Bool {
        try startEdgeWalk(first: true)
        return isValid
    }

    /// Moves to the last entry; false when the tree is empty.
    @discardableResult
    public mutating func seekLast() throws(StorageError) -> Bool {
        try startEdgeWalk(first: false)
        return isValid
    }

    /// Moves to the next entry; false (and invalid) past the last one. False on an invalid cursor.
    @discardableResult
    public mutating func next() throws(StorageError) -> Bool {
        guard isValid else { return false }
        if let exact = try resyncIfChanged(), !exact { return isValid }
        try moveForward()
        return isValid
    }

    /// Moves to the previous entry; false (and invalid) before the first one. False on an
    /// invalid cursor.
    @discardableResult
    public mutating func previous() throws(StorageError) -> Bool {
        guard isValid else { return false }
        if try resyncIfChanged() != nil, !isValid {
            // Every entry from the old key on is gone: the previous entry is the last one.
            try startEdgeWalk(first: false)
            return isValid
        }
        try moveBackward()
        return isValid
    }

    /// Makes the cursor stand on nothing.
    public mutating func invalidate() {
        isValid = false
        leaf = nil
        // Frame by frame, the list's storage kept: a path is a few frames, and
        // `removeAll(keepingCapacity:)` (a generic range replacement) costs more than they do.
        while !frames.isEmpty { frames.removeLast() }
    }
}
