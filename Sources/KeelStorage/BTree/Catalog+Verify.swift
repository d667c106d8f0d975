// Verifying the catalog and every tree it names, sharing one set of visited pages so a page
// reachable from two trees (or reached twice in one) is reported (invariants T2, C1).

extension Catalog {
    /// Checks the catalog's own tree, each entry, and each named tree; returns every fault found.
    /// `visit` is called once for each page reached (catalog pages, tree pages, overflow pages).
    public func verify(
        in source: some PageSource, visit: (PageNumber, PageType) -> Void = { _, _ in }
    ) -> [VerifyFault] {
        var visited = Set<PageNumber>()
        var faults = tree.verify(in: source, treeName: nil, visited: &visited, visit: visit)
        let entries: [(name: String, entry: Entry)]
        do {
            entries = try self.entries(in: source)
        } catch {
            faults.append(VerifyFault(page: error.page ?? tree.root, message: "catalog: \(error.message)"))
            return faults
        }
        for (name, entry) in entries {
            faults += BTree(root: entry.root).verify(in: source, treeName: name, visited: &visited, visit: visit)
        }
        return faults
    }
}
