// Operations on a whole tree: counting its entries, tallying its bytes, and dropping it.

/// What a tree holds, from a walk of its nodes (overflow pages are not read: their references
/// carry both lengths).
public struct TreeTally: Sendable, Equatable {
    public var entries = 0
    public var keyBytes: UInt64 = 0
    /// Values as callers see them.
    public var valueBytes: UInt64 = 0
    /// Values as stored: inline bytes plus the bytes of overflow chains (LZ4 blocks when compressed).
    public var storedValueBytes: UInt64 = 0
    /// What the entries take in leaf pages — each cell (key, inline value or overflow reference,
    /// their length varints) and its 2-byte slot — plus the stored bytes of overflow chains:
    /// the bytes a store with no free space in any page would need for them.
    public var cellBytes: UInt64 = 0
    /// The part of `cellBytes` in leaf pages (cells and slots, overflow chains left out).
    public var leafCellBytes: UInt64 = 0
    public var leafPages = 0
    public var branchPages = 0
    public var overflowValues = 0
    public var compressedValues = 0

    public init() {}

    public static func + (a: TreeTally, b: TreeTally) -> TreeTally {
        var t = a
        t.entries += b.entries
        t.keyBytes += b.keyBytes
        t.valueBytes += b.valueBytes
        t.storedValueBytes += b.storedValueBytes
        t.cellBytes += b.cellBytes
        t.leafCellBytes += b.leafCellBytes
        t.leafPages += b.leafPages
        t.branchPages += b.branchPages
        t.overflowValues += b.overflowValues
        t.compressedValues += b.compressedValues
        return t
    }

    /// How full the leaves are: `leafCellBytes` over the bytes the leaves have for cells and
    /// slots (page size less the node header, per leaf); 0 for no leaves.
    public func leafFill(pageSize: Int) -> Double {
        let usable = leafPages * (pageSize - Node.headerSize)
        return usable == 0 ? 0 : Double(leafCellBytes) / Double(usable)
    }
}

extension BTree {
    /// The number of entries (walks every node; O(pages)).
    public func count(in source: some PageSource) throws(StorageError) -> Int {
        var total = 0
        try forEachNode(root, depth: 0, in: source) { node throws(StorageError) in if node.isLeaf { total += node.count } }
        return total
    }

    /// Entries, key and value bytes (as seen and as stored), and pages (walks every node).
    public func tally(in source: some PageSource) throws(StorageError) -> TreeTally {
        var t = TreeTally()
        try forEachNode(root, depth: 0, in: source) { node throws(StorageError) in
            guard node.isLeaf else {
                t.branchPages += 1
                return
            }
            t.leafPages += 1
            t.entries += node.count
            for index in 0..<node.count {
                let entry = try node.leafEntry(at: index)
                t.keyBytes += UInt64(entry.keyLength)
                t.cellBytes += UInt64(entry.cellSize + Node.slotSize)
                t.leafCellBytes += UInt64(entry.cellSize + Node.slotSize)
                if entry.isOverflow {
                    let reference = try OverflowReference.read(node.base + entry.valueStart, page: node.number)
                    t.valueBytes += UInt64(reference.valueLength)
                    t.storedValueBytes += UInt64(reference.storedLength)
                    t.cellBytes += UInt64(reference.storedLength)
                    t.overflowValues += 1
                    if reference.isCompressed { t.compressedValues += 1 }
                } else {
                    t.valueBytes += UInt64(entry.valueLength)
                    t.storedValueBytes += UInt64(entry.valueLength)
                }
            }
        }
        return t
    }

    private func forEachNode<Source: PageSource>(
        _ number: PageNumber, depth: Int, in source: Source, _ body: (Node) throws(StorageError) -> Void
    ) throws(StorageError) {
        guard depth <= BTreeLimits.maxDepth else {
            throw .corrupt("tree is deeper than \(BTreeLimits.maxDepth) levels (a cycle?)", page: number)
        }
        let node = try Node(source.page(number), number)
        try body(node)
        if node.isLeaf { return }
        for position in 0...node.count { try forEachNode(node.child(at: position), depth: depth + 1, in: source, body) }
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
