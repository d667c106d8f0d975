// Looking up many keys in ascending order with their leaves' cache misses overlapped: the
// cursor finds the leaves of a few keys first (moving forward from where it stands, as
// `seekForward` does), asks the CPU to prefetch each leaf, and only then searches them. A leaf
// search on memory not in the CPU's caches is a chain of dependent misses (header, slots, the
// keys probed); for independent keys those chains can run at the same time.
//
// Read transactions only (a write transaction's tree may change under the cursor: there each
// key is a plain `seekForward`).

import CKeelSupport

extension BTreeCursor {
    /// How many keys' leaves are found before the first is searched.
    static var batchWindow: Int { 8 }

    /// For each of `count` keys (`key(i)`; ascending order, each ≥ the one before, is the fast
    /// case), calls `body(i, value)` in order of `i` when the tree holds exactly that key (the
    /// value in page memory, or an overflow value in a temporary buffer, valid only inside
    /// `body`). Afterwards the cursor stands nowhere (invalid).
    public mutating func lookUpEach(
        _ count: Int, key: (Int) -> UnsafeRawBufferPointer,
        _ body: (_ index: Int, _ value: UnsafeRawBufferPointer) throws(StorageError) -> Void
    ) throws(StorageError) {
        if tracksChanges {
            for i in 0..<count {
                let k = key(i)
                guard try seekForward(to: k) else { continue }
                try withEntry { found, value throws(StorageError) in
                    if Node.compare(found, k) == 0 { try body(i, value) }
                }
            }
            invalidate()
            return
        }
        invalidate()
        var leaves: [Node] = []
        leaves.reserveCapacity(Self.batchWindow)
        var start = 0
        while start < count {
            let end = min(start + Self.batchWindow, count)
            leaves.removeAll(keepingCapacity: true)
            for i in start..<end {
                // A key below the one before (a caller's mistake) starts from the root again, so
                // any order gives the same answers (ascending order gives them fastest).
                if i > 0, Node.compare(key(i), key(i - 1)) < 0 { invalidate() }
                let leaf = try leafForward(to: key(i))
                // Keys of one leaf follow each other: its page is prefetched once.
                if leaves.last?.number != leaf.number { keel_prefetch(leaf.base, leaf.pageSize) }
                leaves.append(leaf)
            }
            for i in start..<end {
                // The leaf read in place in `leaves` (which keeps its page alive), not copied.
                let k = key(i)
                let (position, exact) = try leaves[i - start].leafSearch(k)
                guard exact else { continue }
                let entry = try leaves[i - start].leafEntry(at: position)
                try Self.withEntry(entry, of: leaves[i - start], in: source) { _, value throws(StorageError) in try body(i, value) }
            }
            start = end
        }
        invalidate()
    }

    /// The leaf that holds `key` (where a seek would search), found from the leaf the cursor's
    /// path leads to when `key` is at or after the keys before that leaf (ascending lookups;
    /// `moveForwardToLeaf`), else from the root.
    mutating func leafForward(to key: UnsafeRawBufferPointer) throws(StorageError) -> Node {
        if leaf != nil {
            _ = try moveForwardToLeaf(holding: key)
        } else {
            try descend(to: key)
        }
        guard let leaf else { preconditionFailure("a descent ends in a leaf") }
        return leaf
    }
}
