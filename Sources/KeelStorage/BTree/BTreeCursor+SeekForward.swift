// Seeking forward from where the cursor stands: many lookups in ascending key order (the rows an
// index chunk names, sorted; the link entries of many objects) with one cursor, each starting
// from the previous position instead of from the root.
//
// The cursor's frames hold the path from the root with the child taken at each branch. By N3,
// child p of a branch holds keys k with key(p−1) ≤ k < key(p) (the rightmost child: no upper
// fence in that branch). A target ≥ the current key stays inside the subtree under frame f when
// f's child has an upper fence and the target is below it; the deepest such frame is where the
// path and the target part. The cursor keeps the path above it, re-descends from the node below
// it (searching that node from the target on), and when that node is the current leaf, searches
// the leaf alone. So a target in the current leaf costs one separator comparison and a leaf
// search, a target in a neighbouring leaf a descent of one or two levels, and no lookup ever
// costs more than a seek from the root.
//
// A target below the current key, an invalid cursor, or a tree changed since the cursor moved
// (write transactions) get a plain `seek(to:)`: the result is always exactly `seek(to:)`'s.

extension BTreeCursor {
    /// Moves to the first entry with a key ≥ `key`, like `seek(to:)`, starting from the current
    /// position when `key` is at or after it (else from the root). False (and invalid) when
    /// there is no such entry.
    @discardableResult
    public mutating func seekForward(to key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        guard isValid, let leaf, !tracksChanges || source.changeCount == seenChangeCount,
            Node.compare(key, leaf.base + entry.keyStart, entry.keyLength) >= 0
        else { return try seek(to: key) }
        // Inside the current leaf: at or after the current entry.
        if try moveForwardToLeaf(holding: key) { return try landInLeaf(key, from: index) }
        return try landInLeaf(key, from: 0)
    }

    /// Makes the cursor's path lead to the leaf that holds `key`, a key at or after those before
    /// the current leaf: keeps the path above the deepest frame whose child fences `key` in from
    /// above and descends again below it. True when that is the current leaf (nothing moved);
    /// otherwise the cursor stands on no entry of its new leaf yet.
    mutating func moveForwardToLeaf(holding key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        let probe = SearchKey(key)
        let level = try fencingLevel(for: probe)
        if level == frames.count - 1 { return true }
        // Below frame `level` (the root when -1): its child, a branch on the path, holds `key`;
        // its node is moved out of the path, the frames below it dropped.
        frames.removeSubrange((level + 2)...)
        let branch = frames.removeLast().node
        self.leaf = nil
        isValid = false
        try descend(from: branch) { (node) throws(StorageError) in try node.childPosition(for: probe) }
        return false
    }

    /// The deepest frame whose child fences `key` in from above (a separator above `key` at the
    /// frame's position, N3), -1 when none does (the root's subtree holds it).
    @inline(__always)
    func fencingLevel(for key: UnsafeRawBufferPointer) throws(StorageError) -> Int {
        try fencingLevel(for: SearchKey(key))
    }

    /// `fencingLevel` for a key already in its search form.
    @inline(__always)
    func fencingLevel(for key: SearchKey) throws(StorageError) -> Int {
        var level = frames.count - 1
        while level >= 0 {
            // The frame read in place (a copy would take and drop a reference to its page).
            let position = frames[level].position
            let cells = frames[level].node.count
            if position < cells {
                let (start, length) = try frames[level].node.searchedBranchKey(
                    at: position, cells: cells, cellStart: frames[level].node.contentStart)
                if key.compare(frames[level].node.base + start, length) < 0 { break }
            }
            level -= 1
        }
        return level
    }

    @discardableResult
    public mutating func seekForward(to key: [UInt8]) throws(StorageError) -> Bool {
        try key.withBytes { k throws(StorageError) in try seekForward(to: k) }
    }

    /// Stands on the first entry ≥ `key` of the current leaf from `start` on, or the first entry
    /// of the next leaf.
    mutating func landInLeaf(_ key: UnsafeRawBufferPointer, from start: Int) throws(StorageError) -> Bool {
        guard let leaf else { return false }
        let (found, _) = try leaf.leafSearch(key, from: start)
        if found < leaf.count {
            try land(at: found)
        } else {
            try nextLeaf()
        }
        return isValid
    }
}
