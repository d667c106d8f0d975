// Operations on a whole tree: counting its entries and dropping it.

extension BTree {
    /// The number of entries (walks every leaf; O(pages)).
    public func count(in source: some PageSource) throws(StorageError) -> Int {
        try countEntries(root, depth: 0, in: source)
    }

    private func countEntries<Source: PageSource>(_ number: PageNumber, depth: Int, in source: Source)
        throws(StorageError) -> Int
    {
        guard depth <= BTreeLimits.maxDepth else {
            throw .corrupt("tree is deeper than \(BTreeLimits.maxDepth) levels (a cycle?)", page: number)
        }
        let node = try Node(source.page(number), number)
        if node.isLeaf { return node.count }
        var total = 0
        for position in 0...node.count { total += try countEntries(node.child(at: position), depth: depth + 1, in: source) }
        return total
    }

    /// Frees every page of the tree: its nodes, the overflow chains of its values, and the root.
    /// The tree must not be used afterwards.
    public func drop(in sink: some PageSink) throws(StorageError) {
        try dropSubtree(root, depth: 0, in: sink)
    }

    private func dropSubtree<Sink: PageSink>(_ number: PageNumber, depth: Int, in sink: Sink) throws(StorageError) {
        guard depth <= BTreeLimits.maxDepth else {
            throw .corrupt("tree is deeper than \(BTreeLimits.maxDepth) levels (a cycle?)", page: number)
        }
        let node = try Node(sink.page(number), number)
        if node.isLeaf {
            for index in 0..<node.count {
                let entry = try node.leafEntry(at: index)
                guard entry.isOverflow else { continue }
                let reference = try OverflowReference.read(node.base + entry.valueStart, page: number)
                try OverflowChain.free(reference, in: sink, owner: number)
            }
        } else {
            for position in 0...node.count { try dropSubtree(node.child(at: position), depth: depth + 1, in: sink) }
        }
        try sink.freePage(number)
    }
}
