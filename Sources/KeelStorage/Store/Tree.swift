// A named B+tree inside a transaction: ordered byte keys to byte values.

/// A handle on one tree, valid inside the transaction that returned it.
public final class Tree {
    public let name: String
    let btree: BTree
    let transaction: ReadTransaction

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
    /// returns nil when the key is absent.
    public func withValue<R>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R)
        throws(StorageError) -> R?
    {
        transaction.checkOpen()
        return try key.withBytes { (k) throws(StorageError) -> R? in
            if let w = transaction as? WriteTransaction { return try btree.withValue(forKey: k, in: w.pages, body) }
            return try btree.withValue(forKey: k, in: transaction.readPages, body)
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
            try value.withBytes { (v) throws(StorageError) in try btree.put(key: k, value: v, in: pages) }
        }
    }

    public func put(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(StorageError) {
        transaction.checkOpen()
        try btree.put(key: key, value: value, in: writePages)
    }

    /// Removes `key`; returns whether it was there.
    @discardableResult
    public func delete(key: [UInt8]) throws(StorageError) -> Bool {
        transaction.checkOpen()
        let pages = writePages
        return try key.withBytes { (k) throws(StorageError) in try btree.delete(key: k, in: pages) }
    }

    @discardableResult
    public func delete(key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        transaction.checkOpen()
        return try btree.delete(key: key, in: writePages)
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

    /// Calls `body` with the current key in page memory (valid only inside `body`).
    public mutating func withKey<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        if read != nil, let r = try read?.withKey(body) { return r }
        guard let r = try write?.withKey(body) else { preconditionFailure("the cursor does not stand on an entry") }
        return r
    }

    /// Calls `body` with the current value (valid only inside `body`).
    public mutating func withValue<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        if read != nil, let r = try read?.withValue(body) { return r }
        guard let r = try write?.withValue(body) else { preconditionFailure("the cursor does not stand on an entry") }
        return r
    }

    /// Calls `body` with the current key and value (valid only inside `body`).
    public mutating func withEntry<R>(
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(StorageError) -> R
    ) throws(StorageError) -> R {
        if read != nil, let r = try read?.withEntry(body) { return r }
        guard let r = try write?.withEntry(body) else { preconditionFailure("the cursor does not stand on an entry") }
        return r
    }
}
