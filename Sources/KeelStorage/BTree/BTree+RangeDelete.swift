// Range delete: every key in [lower, upper) removed leaf by leaf, in one pass.
//
// Per leaf: one descent to the leaf where the range's current start belongs (which also yields
// the leaf's upper fence, the separator above it on the path), the leaf's keys in range removed
// together (their overflow chains freed), then one rebalance of that leaf (N4), as a single
// delete would do after its one cell. The range then goes on from the fence: every key below it
// that was in range is gone, and every key at or above it is found by the next descent wherever
// the rebalance moved it (a merge or a share only moves cells between neighbours; the fences of
// the pages it touched change, the key order does not). The start grows at every step (a fence
// lies above every key of its leaf, the old start included), so the loop ends; it stops at the
// first key at or above `upper`, or after the last leaf.
//
// Against deleting the keys one by one (a descent, or a hinted leaf check, a cell removal and a
// rebalance check per key), a leaf of n keys in range costs one descent and one rebalance.

extension BTree {
    /// Removes every key `k` with `lower ≤ k < upper` (`upper` nil: no upper end) and its value;
    /// returns how many were removed. Any hint of the tree is stale afterwards (drop it).
    @discardableResult
    public func deleteRange(
        from lower: UnsafeRawBufferPointer, below upper: UnsafeRawBufferPointer?, in sink: some PageSink
    ) throws(StorageError) -> Int {
        if let upper, Node.compare(lower, upper) >= 0 { return 0 }
        var start = [UInt8](lower)
        var removed = 0
        var scratch = BTreeHint()
        while true {
            let (leaf, path) = try start.withBytes { (s) throws(StorageError) in
                try hintedLeaf(for: s, in: sink, hint: &scratch, shape: sink.shapeCount)
            }
            let count = leaf.count
            let first = try start.withBytes { (s) throws(StorageError) in try leaf.leafSearch(s).index }
            var end = first
            while end < count {
                if let upper, Node.compare(try leaf.key(at: end), upper) >= 0 { break }
                end += 1
            }
            if end > first {
                for index in first..<end {
                    let entry = try leaf.leafEntry(at: index)
                    if entry.isOverflow {
                        let reference = try OverflowReference.read(leaf.base + entry.valueStart, page: leaf.number)
                        try OverflowChain.free(reference, in: sink, owner: leaf.number)
                    }
                }
                let node = try Node(sink.writablePage(leaf.number), leaf.number)
                for index in (first..<end).reversed() { try node.remove(at: index) }
                removed += end - first
                try rebalance(node, level: path.depth, path: path, sink: sink)
            }
            // A key at or above `upper` was met in this leaf, or this is the last leaf.
            guard end == count, scratch.hasUpper else { return removed }
            if let upper, scratch.upper.withUnsafeBytes({ Node.compare($0, upper) }) >= 0 { return removed }
            start = scratch.upper
        }
    }

    /// `deleteRange(from:below:in:)` with byte arrays.
    @discardableResult
    public func deleteRange(from lower: [UInt8], below upper: [UInt8]?, in sink: some PageSink) throws(StorageError) -> Int {
        try lower.withBytes { (l) throws(StorageError) -> Int in
            guard let upper else { return try deleteRange(from: l, below: nil, in: sink) }
            return try upper.withBytes { (u) throws(StorageError) in try deleteRange(from: l, below: u, in: sink) }
        }
    }
}
