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
        if let w = transaction as? WriteTransaction { return Cursor(.write(Cursor.Box(BTreeCursor(tree: btree, source: w.pages)))) }
        return Cursor(.read(Cursor.Box(BTreeCursor(tree: btree, source: transaction.readPages))))
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
/// transaction (it re-seeks from its current key).
public final class Cursor {
    /// Holds a (mutating) B+tree cursor behind a reference so the enum below can drive it.
    final class Box<Source: PageSource> {
        var cursor: BTreeCursor<Source>
        init(_ cursor: BTreeCursor<Source>) { self.cursor = cursor }
    }
    enum Inner {
        case read(Box<ReadPages>)
        case write(Box<WritePages>)
    }
    let inner: Inner

    init(_ inner: Inner) { self.inner = inner }

    /// Moves to the first entry with a key ≥ `key`; false when there is none.
    @discardableResult
    public func seek(to key: [UInt8]) throws(StorageError) -> Bool {
        try key.withBytes { (k) throws(StorageError) in try seek(to: k) }
    }

    @discardableResult
    public func seek(to key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        switch inner {
        case .read(let c): return try c.cursor.seek(to: key)
        case .write(let c): return try c.cursor.seek(to: key)
        }
    }

    @discardableResult
    public func seekFirst() throws(StorageError) -> Bool {
        switch inner {
        case .read(let c): return try c.cursor.seekFirst()
        case .write(let c): return try c.cursor.seekFirst()
        }
    }

    @discardableResult
    public func seekLast() throws(StorageError) -> Bool {
        switch inner {
        case .read(let c): return try c.cursor.seekLast()
        case .write(let c): return try c.cursor.seekLast()
        }
    }

    /// Moves to the next entry; false (and invalid) past the last.
    @discardableResult
    public func next() throws(StorageError) -> Bool {
        switch inner {
        case .read(let c): return try c.cursor.next()
        case .write(let c): return try c.cursor.next()
        }
    }

    /// Moves to the previous entry; false (and invalid) before the first.
    @discardableResult
    public func previous() throws(StorageError) -> Bool {
        switch inner {
        case .read(let c): return try c.cursor.previous()
        case .write(let c): return try c.cursor.previous()
        }
    }

    public var isValid: Bool {
        switch inner {
        case .read(let c): return c.cursor.isValid
        case .write(let c): return c.cursor.isValid
        }
    }

    /// The current key (a copy).
    public var key: [UInt8] {
        get throws(StorageError) {
            switch inner {
            case .read(let c): return try c.cursor.key
            case .write(let c): return try c.cursor.key
            }
        }
    }

    /// The current value (a copy; reads overflow pages when needed).
    public func value() throws(StorageError) -> [UInt8] {
        switch inner {
        case .read(let c): return try c.cursor.value()
        case .write(let c): return try c.cursor.value()
        }
    }

    public func withKey<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        switch inner {
        case .read(let c): return try c.cursor.withKey(body)
        case .write(let c): return try c.cursor.withKey(body)
        }
    }

    public func withValue<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        switch inner {
        case .read(let c): return try c.cursor.withValue(body)
        case .write(let c): return try c.cursor.withValue(body)
        }
    }
}
