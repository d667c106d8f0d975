// Named trees through the catalog.

import Synchronization

extension ReadTransaction {
    var readPages: ReadPages {
        reader!  // safe: a ReadTransaction that is not a WriteTransaction is built over ReadPages
    }

    /// The catalog as of this transaction (its root page is in page 0 and never moves).
    var catalog: Catalog {
        get throws(StorageError) {
            if let w = self as? WriteTransaction { return Catalog(root: w.pages.meta.catalogRoot) }
            return Catalog(root: try MetaPage.read(from: try source.page(.meta)).catalogRoot)
        }
    }

    /// The tree called `name`, or nil when there is none.
    public func tree(_ name: String) throws(StorageError) -> Tree? {
        checkOpen()
        if let roots, let known = roots[name] {
            return known.map { Tree(name: name, root: $0, transaction: self) }
        }
        let root = try catalogRoot(of: name)
        roots?[name] = root
        return root.map { Tree(name: name, root: $0, transaction: self) }
    }

    /// The root of the tree called `name` as the catalog of this transaction has it.
    private func catalogRoot(of name: String) throws(StorageError) -> PageNumber? {
        let catalog = try catalog
        if catalog.tree.root.rawValue == 0 { return nil }  // a new store opened read-only: no catalog yet
        if let w = self as? WriteTransaction { return try catalog.root(of: name, in: w.pages) }
        return try catalog.root(of: name, in: readPages)
    }

    /// The names of every tree, in order.
    public func treeNames() throws(StorageError) -> [String] {
        checkOpen()
        let catalog = try catalog
        if catalog.tree.root.rawValue == 0 { return [] }
        if let w = self as? WriteTransaction { return try catalog.names(in: w.pages) }
        return try catalog.names(in: readPages)
    }
}

extension WriteTransaction {
    /// Creates a tree; throws `.treeExists` when the name is taken.
    public func createTree(_ name: String) throws(StorageError) -> Tree {
        checkOpen()
        let root = try catalog.createTree(named: name, in: pages)
        return Tree(name: name, root: root, transaction: self)
    }

    /// The tree called `name`, created when missing.
    public func openTree(_ name: String) throws(StorageError) -> Tree {
        if let t = try tree(name) { return t }
        return try createTree(name)
    }

    /// Deletes a tree and frees all of its pages; throws `.noSuchTree` when there is none.
    public func dropTree(_ name: String) throws(StorageError) {
        checkOpen()
        try catalog.dropTree(named: name, in: pages)
    }

    /// Creates the catalog's root page (a new store's first transaction).
    func createCatalog() throws(StorageError) {
        let root = try BTree.create(in: pages)
        pages.meta.catalogRoot = root
    }
}

/// The roots of the trees one `Snapshot` has looked up, by name (nil: no such tree). A snapshot's
/// reads all see one commit, so its catalog — every tree's root — never changes under it: each
/// name is looked up in the catalog once per snapshot instead of once per read (a fetch opens a
/// read per chunk, and each names its index, object and link trees). Bounded: past `limit`
/// names, further ones are looked up every time.
///
/// The first `listed` names are kept in a list searched in order, each compared by its UTF-8
/// length first: a fetch's few names (an index, an object tree, a link tree) are found without
/// hashing the name (a `String` hash and a dictionary probe, ~440 instructions a look-up, against
/// a comparison or two). Names past those go to the dictionary.
final class TreeRoots: Sendable {
    static let limit = 1024
    /// How many names the list keeps before the dictionary takes the rest.
    static let listed = 8
    private let table = Mutex(Table())

    struct Table {
        var list: [(count: Int, name: String, root: PageNumber?)] = []
        var rest: [String: PageNumber?] = [:]

        var count: Int { list.count + rest.count }

        func find(_ name: String, count: Int) -> PageNumber?? {
            for entry in list where entry.count == count && entry.name == name { return .some(entry.root) }
            return rest.isEmpty ? nil : rest[name]
        }
    }

    /// The root found for `name` (`.some(nil)`: known absent), nil when not looked up yet.
    subscript(name: String) -> PageNumber?? {
        get {
            let count = name.utf8.count
            return table.withLock { $0.find(name, count: count) }
        }
        set {
            guard let root = newValue else { return }
            let count = name.utf8.count
            table.withLock { t in
                if let i = t.list.firstIndex(where: { $0.count == count && $0.name == name }) {
                    t.list[i].root = root
                } else if t.list.count < Self.listed {
                    t.list.append((count, name, root))
                } else if t.count < Self.limit || t.rest[name] != nil {
                    t.rest[name] = root
                }
            }
        }
    }

    /// Whether a read found no tree called `name` (false when it was found, or not looked up yet).
    func knownAbsent(_ name: String) -> Bool {
        if case .some(.none) = self[name] { return true }
        return false
    }

    /// Forgets every name (a closed snapshot's: its reads throw, so nothing may answer for them).
    func removeAll() {
        table.withLock { $0 = Table() }
    }

    /// How many names are kept (tests).
    var kept: Int { table.withLock { $0.count } }
}
