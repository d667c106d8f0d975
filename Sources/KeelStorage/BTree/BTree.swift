// A B+tree of byte-string keys and values on pages (node layout: Node.swift; cells: Cell.swift;
// overflow values: OverflowChain.swift; limits: BTreeLimits.swift).
//
// Keys are ordered as unsigned bytes (memcmp, a proper prefix first). Values may be empty and up
// to 1 GiB. The tree is edited in place through a `PageSink` (the pager makes the copies that
// give readers their snapshots) and read through any `PageSource`.
//
// Invariants (numbered in Node.swift): N1–N3 order and separators, N4 fill (no empty non-root
// page; pages under a quarter full are merged or refilled after a delete), N5 balance, and:
// - T1 the root's page number never changes: a root split moves its cells into two new pages
//   and makes the root a branch over them; a root branch left with one child takes that child's
//   content and the child is freed. The catalog and the meta page rely on this;
// - T2 every page of a tree (nodes and overflow chains) is reachable from its root exactly once.

/// A B+tree, identified by the page number of its root (fixed for the tree's whole life).
///
/// Operations are generic over the page source, so they specialise for the pager's own types.
public struct BTree: Sendable, Hashable, CustomStringConvertible {
    public let root: PageNumber

    public init(root: PageNumber) { self.root = root }

    public var description: String { "B+tree at \(root)" }

    /// Allocates an empty tree (one empty leaf) and returns its root page number.
    public static func create(in sink: some PageSink) throws(StorageError) -> PageNumber {
        let (number, page) = try sink.allocatePage()
        Node(unchecked: page, number).format(leaf: true)
        return number
    }

    /// The longest key a tree on pages of this size accepts (`BTreeLimits`).
    public static func maxKeySize(pageSize: Int) -> Int { BTreeLimits.maxKeySize(pageSize: pageSize) }

    // MARK: Point reads

    /// The value stored under `key`, or nil.
    public func get(_ key: UnsafeRawBufferPointer, in source: some PageSource) throws(StorageError) -> [UInt8]? {
        try withValue(forKey: key, in: source) { value in [UInt8](value) }
    }

    public func get(_ key: [UInt8], in source: some PageSource) throws(StorageError) -> [UInt8]? {
        try key.withBytes { k throws(StorageError) in try get(k, in: source) }
    }

    /// Calls `body` with the value stored under `key` without copying it (for an overflow value, a
    /// temporary buffer that is only valid inside `body`); nil when the key is absent.
    public func withValue<R>(
        forKey key: UnsafeRawBufferPointer, in source: some PageSource,
        _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R
    ) throws(StorageError) -> R? {
        switch try locate(key, in: source) {
        case .absent:
            return nil
        case .inline(let value, let owner):
            return try withExtendedLifetime(owner) { () throws(StorageError) -> R in try body(value) }
        case .overflow(let reference, let leaf):
            return try OverflowChain.withValue(reference, in: source, owner: leaf, body)
        }
    }

    /// Finds where the value under `key` lives (non-generic in its result, so it is compiled once
    /// per page source and the public accessors built on it stay cheap).
    func locate(_ key: UnsafeRawBufferPointer, in source: some PageSource) throws(StorageError) -> ValueLocation {
        var number = root
        for _ in 0...BTreeLimits.maxDepth {
            let page = try source.page(number)
            let node = try Node(page, number)
            if !node.isLeaf {
                number = try node.child(at: node.childPosition(for: key))
                continue
            }
            let (index, found) = try node.leafSearch(key)
            guard found else { return .absent }
            let entry = try node.leafEntry(at: index)
            if entry.isOverflow {
                return .overflow(try OverflowReference.read(node.base + entry.valueStart, page: number), leaf: number)
            }
            return .inline(UnsafeRawBufferPointer(start: node.base + entry.valueStart, count: entry.valueLength), page)
        }
        throw .corrupt("tree is deeper than \(BTreeLimits.maxDepth) levels (a cycle?)", page: root)
    }

    public func withValue<R>(
        forKey key: [UInt8], in source: some PageSource, _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R
    ) throws(StorageError) -> R? {
        try key.withBytes { k throws(StorageError) in try withValue(forKey: k, in: source, body) }
    }

    /// Whether `key` is present.
    public func contains(_ key: UnsafeRawBufferPointer, in source: some PageSource) throws(StorageError) -> Bool {
        try withValue(forKey: key, in: source) { _ in () } != nil
    }

    // MARK: Descent

    /// Walks from the root to the leaf that holds (or would hold) `key`, recording the path.
    func descend<Source: PageSource>(
        to key: UnsafeRawBufferPointer, in source: Source, path: inout TreePath
    ) throws(StorageError) -> Node {
        var number = root
        while true {
            let node = try Node(source.page(number), number)
            if node.isLeaf { return node }
            let position = try node.childPosition(for: key)
            try path.push(number, position: position, count: node.count)
            number = try node.child(at: position)
        }
    }
}

/// Where a value lives: inline in its leaf (the bytes, valid while `owner` lives), in an overflow
/// chain, or nowhere.
enum ValueLocation {
    case absent
    case inline(UnsafeRawBufferPointer, PageBuffer)
    case overflow(OverflowReference, leaf: PageNumber)
}
