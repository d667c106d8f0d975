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
