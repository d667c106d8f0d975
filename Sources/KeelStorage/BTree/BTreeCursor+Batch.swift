// Looking up many keys in ascending order with their leaves' cache misses overlapped: the
// cursor finds the leaves of a few keys first (moving forward from where it stands, as
// `seekForward` does, through the branches only: each leaf's page number), reads those leaves
// together (`PageSource.pages`: a read snapshot asks the CPU for every cached leaf's first line
// before it retains any, so those cold lines overlap too), asks the CPU to prefetch each leaf,
// and only then searches them. A leaf search on memory not in the CPU's caches is a chain of
// dependent misses (the buffer's reference count, header, slots, the keys probed); for
// independent keys those chains can run at the same time.
//
// Read transactions only (a write transaction's tree may change under the cursor: there each
// key is a plain `seekForward`).

import CKeelSupport

extension BTreeCursor {
    /// How many keys' leaves are found before the first is searched: a query's page of rows (the
    /// range row's ten, an equality's ~15) in one window — one `pages` call, one lock. At most 64
    /// (a window's leaf starts are the bits of one word).
    static var batchWindow: Int { 16 }

    /// For each of `count` keys (`key(i)`, bytes that stay valid for the whole call; ascending
    /// order, each ≥ the one before, is the fast case), calls `body(i, value)` in order of `i` when the tree holds exactly that key (the
    /// value in page memory, or an overflow value in a temporary buffer, valid only inside
    /// `body`). Afterwards the cursor stands nowhere (invalid).
    public mutating func lookUpEach(
        _ count: Int, key: (Int) -> UnsafeRawBufferPointer,
        _ body: (_ index: Int, _ value: UnsafeRawBufferPointer) throws(StorageError) -> Void
    ) throws(StorageError) {
        assert(Self.batchWindow <= 64, "a window's leaf starts are the bits of one word")
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
        // Branch levels above every leaf (N5: all leaves at one depth), known after the first
        // descent.
        var depth: Int? = nil
        // Per batch: its leaves' page numbers (keys of one leaf follow each other: one number),
        // and their buffers (which keep the leaves alive while they are searched). Which leaf
        // each key's is: bit k of `firsts` is set when key `start + k` is the first of its leaf
        // (a number appended), so key i's leaf is the number of such bits up to i, less one —
        // a word, not a list allocated and freed per call.
        var numbers: [PageNumber] = []
        var buffers: [PageBuffer] = []
        numbers.reserveCapacity(Self.batchWindow)
        buffers.reserveCapacity(Self.batchWindow)
        // The key before (the order check), kept rather than asked for again.
        var previous = UnsafeRawBufferPointer(start: nil, count: 0)
        var start = 0
        while start < count {
            let end = min(start + Self.batchWindow, count)
            numbers.removeAll(keepingCapacity: true)
            var firsts: UInt64 = 0
            for i in start..<end {
                // A key below the one before (a caller's mistake) starts from the root again, so
                // any order gives the same answers (ascending order gives them fastest).
                let k = key(i)
                if i > 0, Node.compare(k, previous) < 0 { invalidate() }
                previous = k
                let number = try leafNumberForward(to: k, depth: &depth)
                if numbers.last != number {
                    numbers.append(number)
                    firsts |= 1 &<< UInt64(i - start)
                }
            }
            // The leaves found together (their buffers' cold lines overlap), then each page
            // prefetched before any is searched.
            buffers.removeAll(keepingCapacity: true)
            try source.pages(numbers, into: &buffers)
            for (k, number) in numbers.enumerated() {
                let leaf = try Node(buffers[k], number)
                guard leaf.isLeaf else { throw .corrupt("a branch where the tree's leaves are (leaves at different depths)", page: number) }
                keel_prefetch(leaf.base, leaf.pageSize)
            }
            // A window's keys come leaf by leaf (the first key's leaf is the first): each leaf is
            // viewed once for all of its keys, checked above and kept alive by `buffers` (the
            // view takes no reference of its own).
            var j = 0
            var leaf = Node(viewing: buffers[0], numbers[0])
            for i in start..<end {
                let k = key(i)
                if i > start, firsts & (1 &<< UInt64(i - start)) != 0 {
                    j += 1
                    leaf = Node(viewing: buffers[j], numbers[j])
                }
                let (position, exact) = try leaf.leafSearch(k)
                guard exact else { continue }
                let entry = try leaf.leafEntry(at: position)
                try Self.withEntry(entry, of: leaf, in: source) { _, value throws(StorageError) in try body(i, value) }
            }
            // The views hold no reference: the buffers live at least until every key is searched.
            withExtendedLifetime(buffers) {}
            start = end
        }
        invalidate()
    }

    /// The page number of the leaf that holds `key` (where a seek would search), the cursor's
    /// frames left leading to it but the leaf itself not read (`lookUpEach` reads a batch's
    /// leaves together). From the frames when `key` is at or after the keys before the leaf they
    /// lead to (as `moveForwardToLeaf`), else from the root. `depth`: the branch levels above the
    /// leaves, learnt by the first call (a whole descent, which reads its leaf).
    mutating func leafNumberForward(to key: UnsafeRawBufferPointer, depth: inout Int?) throws(StorageError) -> PageNumber {
        guard let levels = depth else {
            try descend(to: key)
            guard let leaf else { preconditionFailure("a descent ends in a leaf") }
            depth = frames.count
            self.leaf = nil
            return leaf.number
        }
        if levels == 0 { return tree.root }
        // The key in its search form once for the whole descent.
        let probe = SearchKey(key)
        guard frames.count == levels else {
            return try descendBranches(from: try Node(source.page(tree.root), tree.root), to: probe, levels: levels)
        }
        let level = try fencingLevel(for: probe)
        if level == levels - 1 { return try frames[level].node.child(at: frames[level].position) }
        // Below frame `level` (the root when -1): its child, a branch on the path, holds `key`;
        // its node is moved out of the path, the frames below it dropped. That node's search
        // starts at the child the key before took: that key led there, so the separators before
        // that child are ≤ it, and `key` is not below it (a key below the one before starts
        // from the root, `lookUpEach`), so they are ≤ `key` too.
        while frames.count > level + 2 { frames.removeLast() }
        let frame = frames.removeLast()
        return try descendBranches(from: frame.node, at: frame.position, to: probe, levels: levels)
    }

    /// Descends from the branch `node` towards `key`, pushing a frame per branch, until `levels`
    /// frames stand above the leaves; returns the leaf's page number (the leaf not read).
    /// `start`: where `node`'s search begins (a child position the key's is known to be at or
    /// after); the branches below are searched whole.
    private mutating func descendBranches(from node: Node, at start: Int = 0, to key: SearchKey, levels: Int) throws(StorageError) -> PageNumber {
        var node = node
        var start = start
        while true {
            guard !node.isLeaf else { throw .corrupt("a leaf above the tree's leaf level (leaves at different depths)", page: node.number) }
            let chosen = try node.childPosition(for: key, from: start)
            start = 0
            let number = try node.child(at: chosen)
            // Moved into its frame, not copied: no reference taken and dropped per level.
            frames.append(Frame(node: consume node, position: chosen))
            if frames.count >= levels { return number }
            node = try Node(source.page(number), number)
        }
    }
}
