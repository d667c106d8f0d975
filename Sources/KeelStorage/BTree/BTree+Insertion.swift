// Insert and replace. A put descends once (one `page()` per level), binary-searches the leaf in
// page memory and, when the cell fits, writes it straight into the writable leaf: no allocation.
// Only a split (BTree+Split.swift) or an overflow value allocates.

extension BTree {
    /// Stores `value` under `key`, replacing any value there. Throws `.tooLarge` for a key longer
    /// than `BTreeLimits.maxKeySize` or a value over 1 GiB.
    public func put(
        key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, in sink: some PageSink
    ) throws(StorageError) {
        try checkSizes(key: key, value: value, pageSize: sink.pageSize)
        var path = TreePath()
        let leaf = try descend(to: key, in: sink, path: &path)
        try put(key: key, value: value, leaf: leaf, path: path, in: sink)
    }

    func checkSizes(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, pageSize: Int) throws(StorageError) {
        let maxKey = BTreeLimits.maxKeySize(pageSize: pageSize)
        guard key.count <= maxKey else {
            throw StorageError(.tooLarge, "key of \(key.count) bytes is longer than the maximum \(maxKey)")
        }
        guard value.count <= BTreeLimits.maxValueSize else {
            throw StorageError(.tooLarge, "value of \(value.count) bytes is larger than the maximum 1 GiB")
        }
    }

    /// The put once the leaf that holds (or would hold) `key` is found, with the path to it.
    /// `previousKey`: the key the previous put of the caller inserted (a hint keeps it). When the
    /// new key lands right after it — a run of ascending keys — and the leaf is full, the split
    /// cuts right after the new cell, so the run goes on at the end of a page (at the leaf's end
    /// that keeps the leaf full, as at the tree's right edge). Returns whether the key was new.
    @discardableResult
    func put<Sink: PageSink>(
        key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, leaf: Node, path: TreePath, in sink: Sink,
        previousKey: UnsafeRawBufferPointer? = nil
    ) throws(StorageError) -> Bool {
        let pageSize = sink.pageSize
        let (index, found) = try leaf.leafSearch(key)
        var run = false
        if !found, index > 0, let previousKey {
            let (start, length) = try leaf.leafKey(at: index - 1)
            run = Node.compare(previousKey, leaf.base + start, length) == 0
        }
        var oldSize: Int?
        if found {
            let entry = try leaf.leafEntry(at: index)
            oldSize = entry.cellSize
            if entry.isOverflow {
                let reference = try OverflowReference.read(leaf.base + entry.valueStart, page: leaf.number)
                try OverflowChain.free(reference, in: sink, owner: leaf.number)
            }
        }
        let inlineSize = PendingCell.leafSize(keyLength: key.count, valueLength: value.count)
        if inlineSize <= BTreeLimits.maxCellSize(pageSize: pageSize) {
            try store(.leaf(key: key, value: value), at: index, replacing: oldSize, in: leaf.number, path, sink, run: run)
        } else {
            let reference = try OverflowChain.write(value, in: sink)
            try store(.leafOverflow(key: key, reference: reference), at: index, replacing: oldSize, in: leaf.number, path, sink)
        }
        return !found
    }

    public func put(key: [UInt8], value: [UInt8], in sink: some PageSink) throws(StorageError) {
        try key.withBytes { k throws(StorageError) in
            try value.withBytes { v throws(StorageError) in try put(key: k, value: v, in: sink) }
        }
    }

    /// Writes a leaf cell at `index` of leaf `number`, over the cell of `oldSize` bytes there
    /// when replacing (in place when the new cell is no larger).
    private func store<Sink: PageSink>(
        _ cell: PendingCell, at index: Int, replacing oldSize: Int?, in number: PageNumber,
        _ path: TreePath, _ sink: Sink, run: Bool = false
    ) throws(StorageError) {
        let leaf = try Node(sink.writablePage(number), number)
        if let oldSize {
            if cell.size <= oldSize {
                try leaf.overwrite(at: index, with: cell, oldSize: oldSize)
                return
            }
            try leaf.remove(at: index)
        }
        try insert(cell, at: index, into: leaf, level: path.depth, path: path, sink: sink, run: run)
    }

    /// Inserts `cell` at slot `index` of the writable `node` at `level`, splitting it (and its
    /// ancestors, up to the root) when it is full. `run`: `cell` continues a run of ascending
    /// inserts: cut right after it (no sharing with a neighbour).
    func insert<Sink: PageSink>(
        _ cell: PendingCell, at index: Int, into node: Node, level: Int, path: TreePath, sink: Sink,
        run: Bool = false
    ) throws(StorageError) {
        if try node.insert(cell, at: index) { return }
        let bias: CellRun.Bias =
            run ? .after(index)
            : level <= path.rightEdge && index == node.count ? .right
            : level <= path.leftEdge && index == 0 ? .left : .balanced
        if bias == .balanced, try shareOnInsert(cell, at: index, into: node, level: level, path: path, sink: sink) {
            return
        }
        guard var (separator, right) = try split(node, inserting: cell, at: index, bias: bias, in: sink) else {
            return
        }
        // Hang the new right sibling in the parent: the left half keeps its page number.
        var child = node.number
        var level = level
        while level > 0 {
            let parentNumber = path.page(level - 1)
            let position = path.position(level - 1)
            let parent = try Node(sink.writablePage(parentNumber), parentNumber)
            try parent.setChild(at: position, to: right)
            let done = try separator.withBytes { key throws(StorageError) in
                try parent.insert(.branch(child: child, key: key), at: position)
            }
            if done { return }
            let bias: CellRun.Bias =
                level - 1 <= path.rightEdge && position == parent.count ? .right
                : level - 1 <= path.leftEdge && position == 0 ? .left : .balanced
            let next = try separator.withBytes { key throws(StorageError) in
                try split(parent, inserting: .branch(child: child, key: key), at: position, bias: bias, in: sink)
            }
            guard let next else { return }
            (separator, right) = next
            child = parentNumber
            level -= 1
        }
    }
}
