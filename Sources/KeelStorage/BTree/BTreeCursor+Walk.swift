// Walking entries in key order without a cursor step per entry: for long scans (a filtered scan
// of a million rows), the cells of each leaf are read in place in one loop, the leaf held once
// per leaf rather than copied, checked and released around every entry as `next()` and the
// accessors do. The cursor moves to the next leaf as `next()` would (through its frames).
//
// In a write transaction `body` may change the tree, so the walk there is the plain
// `withEntry`/`next()` loop, which re-seeks after a change (BTreeCursor.swift).

extension BTreeCursor {
    /// Calls `body` with each entry from the current one on, in ascending key order (the buffers
    /// valid only inside `body`), until `body` returns false — the cursor then stands on the entry
    /// `body` refused — or the entries run out (the cursor is then invalid). Nothing happens on an
    /// invalid cursor.
    public mutating func walk(
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(StorageError) -> Bool
    ) throws(StorageError) {
        if tracksChanges {
            while isValid {
                guard try withEntry(body) else { return }
                try next()
            }
            return
        }
        while isValid, let leaf {
            var i = index
            var entry = self.entry
            let count = leaf.count
            while true {
                guard try Self.withEntry(entry, of: leaf, in: source, body) else {
                    index = i
                    self.entry = entry
                    return
                }
                i += 1
                guard i < count else { break }
                entry = try leaf.leafEntry(at: i)
            }
            index = count - 1
            try nextLeaf()
        }
    }
}

// Counting without looking at every key: from the cursor's position, each leaf's entries below
// the bound are counted by a binary search in that leaf (O(log n) per leaf, not per entry), the
// leaves reached as `next()` reaches them. In a write transaction it counts entry by entry.

extension BTreeCursor {
    /// Counts the entries from the current one on whose keys are below `upper` (nil: to the
    /// end), stopping at `limit`: the result is min(that count, `limit`). Afterwards the cursor
    /// stands on the first entry not counted (the first key ≥ `upper`, or the entry after the
    /// `limit`-th counted), invalid when there is none. 0 on an invalid cursor.
    public mutating func countEntries(below upper: UnsafeRawBufferPointer?, limit: Int) throws(StorageError) -> Int {
        var n = 0
        if tracksChanges {
            while isValid, n < limit {
                if let upper, try withKey({ Node.compare($0, upper) >= 0 }) { return n }
                n += 1
                try next()
            }
            return n
        }
        while isValid, n < limit, let leaf {
            // Entries index..<end of this leaf are below the bound.
            var end = leaf.count
            if let upper { end = try leaf.leafSearch(upper, from: index).index }
            let take = min(end - index, limit - n)
            n += take
            if index + take < leaf.count {
                if take > 0 { try land(at: index + take) }
                return n
            }
            index = leaf.count - 1
            try nextLeaf()
        }
        return n
    }
}
