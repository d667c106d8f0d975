// Named trees through the catalog.

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
        let catalog = try catalog
        if catalog.tree.root.rawValue == 0 { return nil }  // a new store opened read-only: no catalog yet
        let root: PageNumber?
        if let w = self as? WriteTransaction { root = try catalog.root(of: name, in: w.pages) }
        else { root = try catalog.root(of: name, in: readPages) }
        guard let root else { return nil }
        return Tree(name: name, root: root, transaction: self)
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
