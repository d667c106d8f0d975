// Ordered scans over a key range, on top of BTreeCursor.

extension BTree {
    /// A cursor over this tree in `source`, standing on nothing until it seeks.
    public func cursor<Source: PageSource>(in source: Source) -> BTreeCursor<Source> {
        BTreeCursor(tree: self, source: source)
    }

    /// Calls `body` with each entry whose key lies between `lower` and `upper` (nil: unbounded),
    /// in ascending key order or, with `reverse`, descending. `body` returns false to stop early.
    /// The buffers are valid only inside `body`. On a write transaction `body` may change the
    /// tree (for example delete the entry it was given): the scan carries on from the next key.
    public func forEach<Source: PageSource>(
        from lower: KeyBound? = nil, to upper: KeyBound? = nil, reverse: Bool = false, in source: Source,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(StorageError) -> Bool
    ) throws(StorageError) {
        var cursor = BTreeCursor(tree: self, source: source)
        if reverse {
            try cursor.positionAtOrBelow(upper)
        } else {
            try cursor.positionAtOrAbove(lower)
        }
        while cursor.isValid {
            let goOn = try cursor.withEntry { key, value throws(StorageError) -> Bool? in
                if reverse {
                    if let lower, !lower.admitsAsLower(key) { return nil }
                } else {
                    if let upper, !upper.admitsAsUpper(key) { return nil }
                }
                return try body(key, value)
            }
            guard goOn == true else { return }
            if reverse {
                try cursor.previous()
            } else {
                try cursor.next()
            }
        }
    }
}

extension BTreeCursor {
    /// Stands on the first entry inside `lower` (the first entry when nil).
    mutating func positionAtOrAbove(_ lower: KeyBound?) throws(StorageError) {
        guard let lower else {
            try seekFirst()
            return
        }
        try seek(to: lower.key)
        if isValid, !lower.isInclusive, try withKey({ k in lower.key.withUnsafeBytes { Node.compare(k, $0) == 0 } }) {
            try next()
        }
    }

    /// Stands on the last entry inside `upper` (the last entry when nil).
    mutating func positionAtOrBelow(_ upper: KeyBound?) throws(StorageError) {
        guard let upper else {
            try seekLast()
            return
        }
        try seek(to: upper.key)
        if !isValid {
            try seekLast()
        } else if try !withKey({ k in upper.admitsAsUpper(k) }) {
            try previous()
        }
    }
}
