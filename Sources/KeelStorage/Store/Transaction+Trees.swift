// Named trees through the catalog.

import Synchronization

extension ReadTransaction {
    var readPages: ReadPages {
        source as! ReadPages  // safe: a ReadTransaction that is not a WriteTransaction is built over ReadPages
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
final class TreeRoots: Sendable {
    static let limit = 1024
    private let table = Mutex<[String: PageNumber?]>([:])

    /// The root found for `name` (`.some(nil)`: known absent), nil when not looked up yet.
    subscript(name: String) -> PageNumber?? {
        get { table.withLock { $0[name] } }
        set {
            guard let root = newValue else { return }
            table.withLock { t in
                if t.count < Self.limit || t[name] != nil { t[name] = root }
            }
        }
    }
}
