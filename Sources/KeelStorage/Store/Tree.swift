// A named B+tree inside a transaction: ordered byte keys to byte values.

/// A handle on one tree, valid inside the transaction that returned it.
public final class Tree {
    public let name: String
    let btree: BTree
    let transaction: ReadTransaction
    /// The leaf of the last put, delete or lookup through this handle (BTree+Hint.swift): writes
    /// and lookups in key order skip the descent.
    private var hint = BTreeHint()

    init(name: String, root: PageNumber, transaction: ReadTransaction) {
        self.name = name
        self.btree = BTree(root: root)
        self.transaction = transaction
    }

    private var writePages: WritePages {
        guard let w = transaction as? WriteTransaction else {
            preconditionFailure("tree \(name) was opened in a read transaction and cannot be changed")
        }
        return w.pages
    }

    // MARK: Reading

    /// The value stored under `key`, or nil.
    public func get(_ key: [UInt8]) throws(StorageError) -> [UInt8]? {
        try key.withBytes { (k) throws(StorageError) in try get(k) }
    }

    public func get(_ key: UnsafeRawBufferPointer) throws(StorageError) -> [UInt8]? {
        transaction.checkOpen()
        if let w = transaction as? WriteTransaction { return try btree.get(key, in: w.pages) }
        return try btree.get(key, in: transaction.readPages)
    }

    /// Calls `body` with the value's bytes without copying them (valid only inside `body`);
    /// returns nil when the key is absent. @inlinable over non-generic lookups so callers get it
    /// specialised.
    @inlinable
    public func withValue<R>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R)
        throws(StorageError) -> R?
    {
        switch try _lookup(key) {
        case .absent:
            return nil
        case .inline(let value, let owner):
            return try withExtendedLifetime(owner) { () throws(StorageError) -> R in try body(value) }
        case .assembled(let bytes):
            let result: Result<R, StorageError> = bytes.withUnsafeBytes { b in Result { () throws(StorageError) -> R in try body(b) } }
            return try result.get()
        }
    }

    /// Where a looked-up value is.
    @usableFromInline
    enum _Lookup {
        case absent
        case inline(UnsafeRawBufferPointer, PageBuffer)
        case assembled([UInt8])
    }

    @usableFromInline
    func _lookup(_ key: [UInt8]) throws(StorageError) -> _Lookup {
        transaction.checkOpen()
        return try key.withBytes { (k) throws(StorageError) -> _Lookup in
            let location: ValueLocation
            if let w = transaction as? WriteTransaction {
                location = try btree.locate(k, in: w.pages, hint: &hint, shape: w.pages.shapeCount)
            } else {
                location = try btree.locate(k, in: transaction.readPages, hint: &hint, shape: 0)
            }
            switch location {
            case .absent: return .absent
            case .inline(let value, let owner): return .inline(value, owner)
            case .overflow: return .assembled(try get(k) ?? [])
            }
        }
    }

    /// Whether `key` is present.
    public func contains(_ key: [UInt8]) throws(StorageError) -> Bool {
        try withValue(forKey: key) { _ in () } != nil
    }

    /// The number of entries (walks the leaves).
    public func count() throws(StorageError) -> Int {
        transaction.checkOpen()
        if let w = transaction as? WriteTransaction { return try btree.count(in: w.pages) }
        return try btree.count(in: transaction.readPages)
    }

    /// A cursor positioned nowhere; call `seek`, `seekFirst` or `seekLast`.
    public func cursor() throws(StorageError) -> Cursor {
        transaction.checkOpen()
        if let w = transaction as? WriteTransaction { return Cursor(write: BTreeCursor(tree: btree, source: w.pages)) }
        return Cursor(read: BTreeCursor(tree: btree, source: transaction.readPages))
    }

    // MARK: Writing (write transactions only)

    /// Inserts or replaces the value under `key`.
    public func put(key: [UInt8], value: [UInt8]) throws(StorageError) {
        transaction.checkOpen()
        let pages = writePages
        try key.withBytes { (k) throws(StorageError) in
            try value.withBytes { (v) throws(StorageError) in try btree.put(key: k, value: v, in: pages, hint: &hint) }
        }
    }

    public func put(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(StorageError) {
        transaction.checkOpen()
        try btree.put(key: key, value: value, in: writePages, hint: &hint)
    }

    /// Removes `key`; returns whether it was there.
    @discardableResult
    public func delete(key: [UInt8]) throws(StorageError) -> Bool {
        transaction.checkOpen()
        let pages = writePages
        return try key.withBytes { (k) throws(StorageError) in try btree.delete(key: k, in: pages, hint: &hint) }
    }

    @discardableResult
    public func delete(key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        transaction.checkOpen()
        return try btree.delete(key: key, in: writePages, hint: &hint)
    }

    /// Removes every key `k` with `lower ≤ k < upper` (`upper` nil: to the end) in one pass, leaf
    /// by leaf (BTree+RangeDelete.swift); returns how many were removed.
    @discardableResult
    public func deleteRange(from lower: [UInt8], below upper: [UInt8]?) throws(StorageError) -> Int {
        transaction.checkOpen()
        let pages = writePages
        hint = BTreeHint()
        return try btree.deleteRange(from: lower, below: upper, in: pages)
    }
}

/// An ordered position in a tree. Stays usable across changes to its tree in the same write
/// transaction (it re-seeks from its current key). A value type: keep it in a `var`.
public struct Cursor {
    // Exactly one of these is set. Optional chaining mutates the payload in place (no copy).
    var read: BTreeCursor<ReadPages>?
    var write: BTreeCursor<WritePages>?

    init(read: BTreeCursor<ReadPages>) { self.read = read }
    init(write: BTreeCursor<WritePages>) { self.write = write }

    /// Moves to the first entry with a key ≥ `key`; false when there is none.
    @discardableResult
    public mutating func seek(to key: [UInt8]) throws(StorageError) -> Bool {
        try key.withBytes { (k) throws(StorageError) in try seek(to: k) }
    }

    @discardableResult
    public mutating func seek(to key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        if read != nil { return try read?.seek(to: key) ?? false }
        return try write?.seek(to: key) ?? false
    }

    /// `seek(to:)` for keys in ascending order: starts from the current position when `key` is
    /// at or after it (a key in the same leaf costs no descent), else from the root. Same result.
    @discardableResult
    public mutating func seekForward(to key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        if read != nil { return try read?.seekForward(to: key) ?? false }
        return try write?.seekForward(to: key) ?? false
    }

    @discardableResult
    public mutating func seekForward(to key: [UInt8]) throws(StorageError) -> Bool {
        try key.withBytes { (k) throws(StorageError) in try seekForward(to: k) }
    }

    @discardableResult
    public mutating func seekFirst() throws(StorageError) -> Bool {
        if read != nil { return try read?.seekFirst() ?? false }
        return try write?.seekFirst() ?? false
    }

    @discardableResult
    public mutating func seekLast() throws(StorageError) -> Bool {
        if read != nil { return try read?.seekLast() ?? false }
        return try write?.seekLast() ?? false
    }

    /// Moves to the next entry; false (and invalid) past the last.
    @discardableResult
    public mutating func next() throws(StorageError) -> Bool {
        if read != nil { return try read?.next() ?? false }
        return try write?.next() ?? false
    }

    /// Calls `body` with each entry from the current one on, in key order, until `body` returns
    /// false (the cursor then stands on that entry) or the entries run out (the cursor is then
    /// invalid). In a read transaction the leaves are walked in place, much cheaper per entry
    /// than `withEntry` and `next()`; in a write transaction `body` may change the tree.
    public mutating func walk(
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(StorageError) -> Bool
    ) throws(StorageError) {
        if read != nil { try read?.walk(body) } else { try write?.walk(body) }
    }

    /// For each of `count` keys (`key(i)`, bytes that stay valid for the whole call; best in
    /// ascending order), calls `body(i, value)` when the tree holds exactly that key. In a read
    /// transaction the leaves of a few keys are found and prefetched before any is searched, so
    /// their cache misses overlap (BTreeCursor+Batch.swift).
    /// The cursor stands nowhere afterwards.
    public mutating func lookUpEach(
        _ count: Int, key: (Int) -> UnsafeRawBufferPointer,
        _ body: (_ index: Int, _ value: UnsafeRawBufferPointer) throws(StorageError) -> Void
    ) throws(StorageError) {
        if read != nil { try read?.lookUpEach(count, key: key, body) } else { try write?.lookUpEach(count, key: key, body) }
    }

    /// Counts the entries from the current one on with keys below `upper` (nil: to the end), at
    /// most `limit`; the cursor then stands on the first entry not counted (invalid when none).
    /// In a read transaction each leaf is counted by a binary search for `upper`, not entry by
    /// entry (BTreeCursor+Walk.swift).
    public mutating func countEntries(below upper: [UInt8]?, limit: Int = .max) throws(StorageError) -> Int {
        guard let upper else {
            if read != nil { return try read?.countEntries(below: nil, limit: limit) ?? 0 }
            return try write?.countEntries(below: nil, limit: limit) ?? 0
        }
        return try upper.withBytes { (u) throws(StorageError) -> Int in
            if read != nil { return try read?.countEntries(below: u, limit: limit) ?? 0 }
            return try write?.countEntries(below: u, limit: limit) ?? 0
        }
    }

    /// Moves to the previous entry; false (and invalid) before the first.
    @discardableResult
    public mutating func previous() throws(StorageError) -> Bool {
        if read != nil { return try read?.previous() ?? false }
        return try write?.previous() ?? false
    }

    public var isValid: Bool { read?.isValid ?? write?.isValid ?? false }

    /// The current key (a copy).
    public var key: [UInt8] {
        mutating get throws(StorageError) { try withKey { [UInt8]($0) } }
    }

    /// The current value (a copy; reads overflow pages when needed).
    public mutating func value() throws(StorageError) -> [UInt8] { try withValue { [UInt8]($0) } }

    // The closure-taking accessors are @inlinable shells over non-generic primitives, so a caller
    // in another module gets them specialised for its result type (no runtime generic metadata
    // on the per-row path of a scan).

    /// Calls `body` with the current key in page memory (valid only inside `body`).
    @inlinable
    public mutating func withKey<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        let (key, owner) = try _currentKey()
        return try withExtendedLifetime(owner) { () throws(StorageError) -> R in try body(key) }
    }

    /// Calls `body` with the current value (valid only inside `body`).
    @inlinable
    public mutating func withValue<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        let (_, owner) = try _currentKey()
        if let value = _inlineValue() {
            return try withExtendedLifetime(owner) { () throws(StorageError) -> R in try body(value) }
        }
        let bytes = try _overflowValue()
        let result: Result<R, StorageError> = bytes.withUnsafeBytes { b in Result { () throws(StorageError) -> R in try body(b) } }
        return try result.get()
    }

    /// Calls `body` with the current key and value (valid only inside `body`).
    @inlinable
    public mutating func withEntry<R>(
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(StorageError) -> R
    ) throws(StorageError) -> R {
        let (key, owner) = try _currentKey()
        if let value = _inlineValue() {
            return try withExtendedLifetime(owner) { () throws(StorageError) -> R in try body(key, value) }
        }
        let bytes = try _overflowValue()
        let result: Result<R, StorageError> = bytes.withUnsafeBytes { b in
            withExtendedLifetime(owner) { Result { () throws(StorageError) -> R in try body(key, b) } }
        }
        return try result.get()
    }

    /// The current key's bytes in its leaf page, and the page that keeps them alive. Re-seeks
    /// first when the tree changed under the cursor.
    @usableFromInline
    mutating func _currentKey() throws(StorageError) -> (UnsafeRawBufferPointer, PageBuffer) {
        let current = read != nil ? try read?.currentKey() : try write?.currentKey()
        guard let current else { preconditionFailure("the cursor does not stand on an entry") }
        return current
    }

    /// The current value's bytes in its leaf page, or nil when it lives in overflow pages. Call
    /// right after `_currentKey()`. (Reads the cursor in place: binding it would copy its path.)
    @usableFromInline
    func _inlineValue() -> UnsafeRawBufferPointer? {
        read != nil ? read?.inlineValue ?? nil : write?.inlineValue ?? nil
    }

    /// An overflow value, assembled.
    @usableFromInline
    mutating func _overflowValue() throws(StorageError) -> [UInt8] {
        if read != nil { return try read?.value() ?? [] }
        return try write?.value() ?? []
    }
}
