// How a cursor moves: descents that push frames, stepping within a leaf, climbing to the next
// or previous leaf, and re-seeking after the tree changed (BTreeCursor.swift).

extension BTreeCursor {
    /// Descends from the root to the leaf that holds (or would hold) `key`.
    mutating func descend(to key: UnsafeRawBufferPointer) throws(StorageError) {
        invalidate()
        seenChangeCount = source.changeCount
        // The key in its search form once for the whole descent.
        let probe = SearchKey(key)
        try descend(from: tree.root) { (node) throws(StorageError) in try node.childPosition(for: probe) }
    }

    /// Descends from `number` along first (or last) children, pushing frames, to a leaf.
    private mutating func descendEdge(from number: PageNumber, first: Bool) throws(StorageError) {
        try descend(from: number) { node in first ? 0 : node.count }
    }

    /// Descends from `number` to a leaf, pushing a frame per branch, taking in each branch the
    /// child `position(branch)` names.
    private mutating func descend(
        from number: PageNumber, _ position: (Node) throws(StorageError) -> Int
    ) throws(StorageError) {
        try descend(from: try Node(source.page(number), number), position)
    }

    /// The same from a node already read (a branch on the cursor's path, for `seekForward`).
    mutating func descend(from node: Node, _ position: (Node) throws(StorageError) -> Int) throws(StorageError) {
        var node = node
        while !node.isLeaf {
            guard frames.count < BTreeLimits.maxDepth else {
                throw .corrupt("tree is deeper than \(BTreeLimits.maxDepth) levels (a cycle?)", page: node.number)
            }
            let chosen = try position(node)
            let number = try node.child(at: chosen)
            // Moved into its frame, not copied: no reference taken and dropped per level.
            frames.append(Frame(node: consume node, position: chosen))
            node = try Node(source.page(number), number)
        }
        leaf = consume node
    }

    /// Positions on the first or last entry of the tree.
    mutating func startEdgeWalk(first: Bool) throws(StorageError) {
        invalidate()
        seenChangeCount = source.changeCount
        try descendEdge(from: tree.root, first: first)
        guard let leaf else { return }
        if leaf.count > 0 {
            try land(at: first ? 0 : leaf.count - 1)
        } else if first {
            try nextLeaf()
        } else {
            try previousLeaf()
        }
    }

    /// Stands on entry `index` of the current leaf, checking the cell.
    mutating func land(at index: Int) throws(StorageError) {
        guard let leaf else { preconditionFailure("cursor has no leaf") }
        self.index = index
        entry = try leaf.leafEntry(at: index)
        isValid = true
        if tracksChanges {
            savedKey.removeAll(keepingCapacity: true)
            savedKey.append(contentsOf: UnsafeRawBufferPointer(start: leaf.base + entry.keyStart, count: entry.keyLength))
        }
    }

    mutating func moveForward() throws(StorageError) {
        guard let leaf else { return }
        if index + 1 < leaf.count {
            try land(at: index + 1)
        } else {
            try nextLeaf()
        }
    }

    mutating func moveBackward() throws(StorageError) {
        guard leaf != nil else { return }
        if index > 0 {
            try land(at: index - 1)
        } else {
            try previousLeaf()
        }
    }

    /// Moves to the first entry of the next leaf; invalid when there is none.
    mutating func nextLeaf() throws(StorageError) {
        isValid = false
        while let top = frames.last {
            if top.position < top.node.count {
                frames[frames.count - 1].position = top.position + 1
                try descendEdge(from: top.node.child(at: top.position + 1), first: true)
                if let leaf {
                    // N4: only the root may be an empty leaf; the tree merges every other away.
                    guard leaf.count > 0 else { throw .corrupt("empty non-root leaf (N4)", page: leaf.number) }
                    try land(at: 0)
                    return
                }
            } else {
                frames.removeLast()
            }
        }
        leaf = nil
    }

    /// Moves to the last entry of the previous leaf; invalid when there is none.
    mutating func previousLeaf() throws(StorageError) {
        isValid = false
        while let top = frames.last {
            if top.position > 0 {
                frames[frames.count - 1].position = top.position - 1
                try descendEdge(from: top.node.child(at: top.position - 1), first: false)
                if let leaf {
                    // N4: only the root may be an empty leaf; the tree merges every other away.
                    guard leaf.count > 0 else { throw .corrupt("empty non-root leaf (N4)", page: leaf.number) }
                    try land(at: leaf.count - 1)
                    return
                }
            } else {
                frames.removeLast()
            }
        }
        leaf = nil
    }

    /// When the source changed since the cursor last moved, re-seeks to the first entry ≥ the
    /// saved key and returns whether that entry has the saved key; nil when nothing changed.
    mutating func resyncIfChanged() throws(StorageError) -> Bool? {
        guard tracksChanges, source.changeCount != seenChangeCount else { return nil }
        let key = savedKey
        try key.withBytes { k throws(StorageError) in _ = try seek(to: k) }
        guard isValid, let leaf else { return false }
        let entry = self.entry
        return key.withUnsafeBytes { Node.compare($0, leaf.base + entry.keyStart, entry.keyLength) == 0 }
    }
}
