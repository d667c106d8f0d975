// Put and delete hints: a write that lands in the same leaf as the previous one skips the descent.
//
// A hint remembers the leaf the last put or delete of its tree worked on, the path down to it,
// and the leaf's key range as its ancestors' separators fence it (N3: child i of a branch holds
// keys k with key(i−1) ≤ k < key(i); the tightest fences are the deepest ones on the path). A
// key inside the fences belongs to that leaf as long as no separator and no page of the path
// changed since; the sink's `shapeCount` moves on every such change (a write to any page that
// is not a leaf, every allocation and every free), so the hint is used only when the count is
// the one it was taken at. A write that changes the shape itself (a split, a merge, a refill, an
// overflow value) leaves the hint invalid, and the next write descends again.
//
// A key outside the leaf's fences does not start from the root either while the hint is current:
// the hint holds the branch pages of its path (unchanged, by the same shape count), finds the
// deepest one whose chosen child's range (its separators either side) still holds the key, keeps
// the path above it and descends from there. The leaf found is the one a descent from the root
// finds (every level above chose the same child). Keys a leaf or two apart, as a cascade's
// thousands of scattered row and index deletes in key order are, then cost a search of the leaf's
// parent and one page lookup instead of one per level (BTreeHintTests.resumedDescents).
//
// Object keys of one batch arrive in ascending order, and so do the link and index keys a save
// puts after sorting them: all but the first write per leaf skip the descent. A run of inserts at
// consecutive slots (ascending keys into the middle of a tree, such as a department's new link
// entries before the next department's) splits a full leaf right after the new cell: the run goes
// on at the end of the left page, which then fills completely, instead of pages split in halves
// or cells pushed into the neighbour at every split.

/// Where the last hinted write of one tree landed. Keep one per tree and pass it to every
/// `put(key:value:in:hint:)` / `delete(key:in:hint:)` of that tree in one write transaction.
public struct BTreeHint {
    var root = PageNumber(0)
    var leaf = PageNumber(0)
    var path = TreePath()
    var lower: [UInt8] = []
    var upper: [UInt8] = []
    var hasLower = false
    var hasUpper = false
    var shape: UInt64 = 0
    var isValid = false
    /// The key the last put inserted (when `hasKey`): a key that lands right after it continues
    /// a run of ascending keys.
    var key: [UInt8] = []
    var hasKey = false
    /// The branch pages on `path` (level 0: the root), held while the hint is current: a key
    /// outside the leaf's fences resumes the descent from the deepest of them that holds it. A
    /// current hint's branches are unchanged pages (any write to a branch moves the shape count).
    var branches: [Node] = []

    public init() {}

    /// Whether `key` falls in the remembered leaf of `root`, with the tree's shape unchanged.
    @inline(__always)
    func covers(_ key: UnsafeRawBufferPointer, root: PageNumber, shape: UInt64) -> Bool {
        guard isValid, shape == self.shape, root == self.root else { return false }
        if hasLower, lower.withUnsafeBytes({ Node.compare(key, $0) }) < 0 { return false }
        if hasUpper, upper.withUnsafeBytes({ Node.compare(key, $0) }) >= 0 { return false }
        return true
    }

    /// How many levels of the path, from the root, chose a child whose key range holds `key`
    /// (N3: child p of a branch holds key(p−1) ≤ k < key(p)). The branch at that level holds
    /// `key`; a descent from it finds the same leaf as one from the root. Only for a current
    /// hint whose leaf does not cover `key` (so the answer is below the path's depth).
    func resumeLevel(for key: UnsafeRawBufferPointer) throws(StorageError) -> Int {
        var level = 0
        while level < path.depth - 1 {
            let node = branches[level]
            let position = path.position(level)
            if position > 0 {
                let (start, length) = try node.branchKey(at: position - 1)
                if Node.compare(key, node.base + start, length) < 0 { break }
            }
            if position < node.count {
                let (start, length) = try node.branchKey(at: position)
                if Node.compare(key, node.base + start, length) >= 0 { break }
            }
            level += 1
        }
        return level
    }

    /// Sets the leaf's fences from the branches on `path`: the tightest are the deepest.
    mutating func takeFences(_ path: TreePath) throws(StorageError) {
        hasLower = false
        hasUpper = false
        var level = path.depth - 1
        while level >= 0, !(hasLower && hasUpper) {
            let node = branches[level]
            let position = path.position(level)
            if !hasLower, position > 0 {
                let (start, length) = try node.branchKey(at: position - 1)
                lower.removeAll(keepingCapacity: true)
                lower.append(contentsOf: UnsafeRawBufferPointer(start: node.base + start, count: length))
                hasLower = true
            }
            if !hasUpper, position < node.count {
                let (start, length) = try node.branchKey(at: position)
                upper.removeAll(keepingCapacity: true)
                upper.append(contentsOf: UnsafeRawBufferPointer(start: node.base + start, count: length))
                hasUpper = true
            }
            level -= 1
        }
    }
}

extension BTree {
    /// `put(key:value:in:)` that first tries the leaf of the previous hinted write.
    public func put(
        key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in sink: some PageSink, hint: inout BTreeHint
    ) throws(StorageError) {
        try checkSizes(key: key, value: value, pageSize: sink.pageSize)
        let shape = sink.shapeCount
        let (leaf, path) = try hintedLeaf(for: key, in: sink, hint: &hint, shape: shape)
        let previous = hint.key
        let inserted = try previous.withBytes { (p) throws(StorageError) -> Bool in
            try put(key: key, value: value, leaf: leaf, path: path, in: sink, previousKey: hint.hasKey ? p : nil)
        }
        keep(&hint, leaf: leaf.number, path: path, shape: shape, in: sink)
        hint.hasKey = inserted
        if inserted {
            hint.key.removeAll(keepingCapacity: true)
            hint.key.append(contentsOf: key)
        }
    }

    /// `delete(key:in:)` that first tries the leaf of the previous hinted write.
    @discardableResult
    public func delete(key: UnsafeRawBufferPointer, in sink: some PageSink, hint: inout BTreeHint) throws(StorageError) -> Bool {
        let shape = sink.shapeCount
        let (leaf, path) = try hintedLeaf(for: key, in: sink, hint: &hint, shape: shape)
        let found = try delete(key: key, leaf: leaf, path: path, in: sink)
        keep(&hint, leaf: leaf.number, path: path, shape: shape, in: sink)
        hint.hasKey = false
        return found
    }

    /// `locate(_:in:)` that first tries the hinted leaf, and leaves the hint on the leaf it read.
    /// `shape`: the sink's `shapeCount` in a write transaction, any constant in a read snapshot
    /// (nothing changes its tree).
    func locate(
        _ key: UnsafeRawBufferPointer, in source: some PageSource, hint: inout BTreeHint, shape: UInt64
    ) throws(StorageError) -> ValueLocation {
        let (leaf, path) = try hintedLeaf(for: key, in: source, hint: &hint, shape: shape)
        hint.root = root
        hint.leaf = leaf.number
        hint.path = path
        hint.shape = shape
        hint.isValid = true
        let (index, found) = try leaf.leafSearch(key)
        guard found else { return .absent }
        let entry = try leaf.leafEntry(at: index)
        if entry.isOverflow {
            return .overflow(try OverflowReference.read(leaf.base + entry.valueStart, page: leaf.number), leaf: leaf.number)
        }
        guard let buffer = leaf.buffer else { preconditionFailure("a tree leaf is always a page buffer") }
        return .inline(UnsafeRawBufferPointer(start: leaf.base + entry.valueStart, count: entry.valueLength), buffer)
    }

    /// The hinted leaf when it covers `key`; else a descent that refills the hint's fences. When
    /// the hint is current, the descent starts at the deepest branch on its path that still holds
    /// `key` (`BTreeHint.resumeLevel`), already in hand: keys that arrive in order land a leaf or
    /// two apart, and then cost a search of the leaf's parent and one page lookup, not a descent
    /// from the root.
    func hintedLeaf<Source: PageSource>(
        for key: UnsafeRawBufferPointer, in sink: Source, hint: inout BTreeHint, shape: UInt64
    ) throws(StorageError) -> (Node, TreePath) {
        var resume: Int?
        if hint.isValid, shape == hint.shape, root == hint.root {
            if hint.covers(key, root: root, shape: shape) {
                let node = try Node(sink.page(hint.leaf), hint.leaf)
                if node.isLeaf { return (node, hint.path) }
            } else {
                let level = try hint.resumeLevel(for: key)
                if level < hint.branches.count { resume = level }
            }
        }
        hint.isValid = false
        var path: TreePath
        var node: Node
        if let level = resume {
            node = hint.branches[level]
            path = hint.path
            path.truncate(to: level)
            hint.branches.removeSubrange(level...)
        } else {
            path = TreePath()
            hint.branches.removeAll(keepingCapacity: true)
            node = try Node(sink.page(root), root)
        }
        while !node.isLeaf {
            let position = try node.childPosition(for: key)
            try path.push(node.number, position: position, count: node.count)
            hint.branches.append(node)
            let child = try node.child(at: position)
            node = try Node(sink.page(child), child)
        }
        try hint.takeFences(path)
        return (node, path)
    }

    /// Keeps the hint when the write left the shape as it was (no split, merge, refill or
    /// overflow chain), else drops it.
    @inline(__always)
    private func keep(_ hint: inout BTreeHint, leaf: PageNumber, path: TreePath, shape: UInt64, in sink: some PageSink) {
        guard sink.shapeCount == shape else {
            hint.isValid = false
            return
        }
        hint.root = root
        hint.leaf = leaf
        hint.path = path
        hint.shape = shape
        hint.isValid = true
    }
}
