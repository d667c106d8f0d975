// The catalog: the named trees of a store (Docs/FileFormat.md, "Catalog"). It is itself a B+tree
// whose root page number the meta page keeps; since a root never moves (T1), neither the meta
// page nor a catalog entry ever needs rewriting when a tree grows or shrinks.
//
// Key: the tree's name in UTF-8 (1 ≤ length ≤ maxKeySize). Value, 16 bytes:
//
// | offset | size | field                                                   |
// |--------|------|---------------------------------------------------------|
// | 0      | 1    | entry version, 1                                        |
// | 1      | 1    | kind: defined by the layer above (0 = plain tree)       |
// | 2      | 2    | flags: defined by the layer above                       |
// | 4      | 4    | root page number of the tree (≠ 0)                      |
// | 8      | 8    | reserved, 0                                             |
//
// Validity: version 1, at least 8 bytes, root ≠ 0, the name valid UTF-8. A newer version byte is
// reported as `.unsupportedVersion`. Invariants: C1 each entry's root is the root of a tree no
// other entry names; C2 dropping a tree frees all its pages and removes its entry.

/// The named trees of one store.
public struct Catalog: Sendable, Hashable {
    /// What the catalog keeps about one tree.
    public struct Entry: Sendable, Hashable {
        public var root: PageNumber
        public var kind: UInt8
        public var flags: UInt16

        public init(root: PageNumber, kind: UInt8 = 0, flags: UInt16 = 0) {
            self.root = root
            self.kind = kind
            self.flags = flags
        }
    }

    static let entryVersion: UInt8 = 1
    static let entrySize = 16

    /// The catalog's own tree.
    public let tree: BTree

    /// The catalog whose tree has its root at `root` (kept by the meta page).
    public init(root: PageNumber) { self.tree = BTree(root: root) }

    /// Allocates an empty catalog and returns its root page number (for the meta page).
    public static func create(in sink: some PageSink) throws(StorageError) -> PageNumber {
        try BTree.create(in: sink)
    }

    /// The entry for `name`, or nil.
    public func entry(named name: String, in source: some PageSource) throws(StorageError) -> Entry? {
        let key = try Catalog.key(for: name, pageSize: source.pageSize)
        let root = tree.root
        return try tree.withValue(forKey: key, in: source) { value throws(StorageError) in
            try Catalog.decode(value, name: name, page: root)
        }
    }

    /// The root page of the tree called `name`, or nil when there is none.
    public func root(of name: String, in source: some PageSource) throws(StorageError) -> PageNumber? {
        try entry(named: name, in: source)?.root
    }

    /// Creates an empty tree called `name` and returns its root page number. Throws `.treeExists`
    /// when the name is taken, `.invalidArgument` for an empty name, `.tooLarge` for a name
    /// longer than the page size's key limit.
    @discardableResult
    public func createTree(
        named name: String, kind: UInt8 = 0, flags: UInt16 = 0, in sink: some PageSink
    ) throws(StorageError) -> PageNumber {
        let key = try Catalog.key(for: name, pageSize: sink.pageSize)
        guard try tree.get(key, in: sink) == nil else {
            throw StorageError(.treeExists, "a tree named \"\(name)\" already exists")
        }
        let root = try BTree.create(in: sink)
        try tree.put(key: key, value: Catalog.encode(Entry(root: root, kind: kind, flags: flags)), in: sink)
        return root
    }

    /// Frees every page of the tree called `name` and forgets it. Throws `.noSuchTree`.
    public func dropTree(named name: String, in sink: some PageSink) throws(StorageError) {
        let key = try Catalog.key(for: name, pageSize: sink.pageSize)
        guard let entry = try entry(named: name, in: sink) else {
            throw StorageError(.noSuchTree, "no tree named \"\(name)\"")
        }
        try BTree(root: entry.root).drop(in: sink)
        try tree.delete(key: key, in: sink)
    }

    /// The names of all trees, in byte order.
    public func names(in source: some PageSource) throws(StorageError) -> [String] {
        try entries(in: source).map(\.name)
    }

    /// Every tree's name and entry, in name byte order.
    public func entries(in source: some PageSource) throws(StorageError) -> [(name: String, entry: Entry)] {
        var result: [(name: String, entry: Entry)] = []
        let root = tree.root
        try tree.forEach(in: source) { key, value throws(StorageError) in
            guard key.count > 0, let name = String(validating: key, as: UTF8.self) else {
                throw .corrupt("catalog entry name is empty or not UTF-8", page: root)
            }
            result.append((name, try Catalog.decode(value, name: name, page: root)))
            return true
        }
        return result
    }

    // MARK: Encoding

    static func key(for name: String, pageSize: Int) throws(StorageError) -> [UInt8] {
        let key = Array(name.utf8)
        guard !key.isEmpty else { throw StorageError(.invalidArgument, "a tree name must not be empty") }
        let limit = BTreeLimits.maxKeySize(pageSize: pageSize)
        guard key.count <= limit else {
            throw StorageError(.tooLarge, "tree name of \(key.count) bytes is longer than the maximum \(limit)")
        }
        return key
    }

    static func encode(_ entry: Entry) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: entrySize)
        bytes[0] = entryVersion
        bytes[1] = entry.kind
        bytes[2] = UInt8(truncatingIfNeeded: entry.flags)
        bytes[3] = UInt8(truncatingIfNeeded: entry.flags >> 8)
        for i in 0..<4 { bytes[4 + i] = UInt8(truncatingIfNeeded: entry.root.rawValue >> (8 * UInt32(i))) }
        return bytes
    }

    static func decode(_ value: UnsafeRawBufferPointer, name: String, page: PageNumber) throws(StorageError) -> Entry {
        guard value.count >= 8 else {
            throw .corrupt("catalog entry \"\(name)\" is \(value.count) bytes, expected \(entrySize)", page: page)
        }
        guard value[0] == entryVersion else {
            throw StorageError(
                .unsupportedVersion, "catalog entry \"\(name)\" has version \(value[0]); this build reads version 1",
                page: page)
        }
        let root = UInt32(littleEndian: value.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        guard root != 0 else { throw .corrupt("catalog entry \"\(name)\" has root page 0", page: page) }
        let flags = UInt16(littleEndian: value.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        return Entry(root: PageNumber(root), kind: value[1], flags: flags)
    }
}
