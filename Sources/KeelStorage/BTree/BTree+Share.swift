// Sharing before splitting. When a leaf is full and a sibling under the same parent has room,
// the two pages share their cells (with the new one) evenly instead of splitting into two
// half-empty pages — the redistribution SQLite's balance and B*-trees do. Random inserts then
// leave leaves about 80% full instead of ln 2 ≈ 69%, so the same data takes fewer pages and the
// page cache holds more of it. Sequential inserts (the tree's edges) still split with their
// bias, which already fills pages completely.

extension BTree {
    /// A sibling must have at least this share of a page free for sharing to be worth a write of
    /// a second page (less, and the next insert would find both full again).
    static let shareThresholdDivisor = 16

    /// Tries to insert `cell` at `index` of the full leaf `node` (at `level` of `path`) by sharing
    /// cells with a sibling. Returns false, having changed nothing, when no sibling has room.
    func shareOnInsert<Sink: PageSink>(
        _ cell: PendingCell, at index: Int, into node: Node, level: Int, path: TreePath, sink: Sink
    ) throws(StorageError) -> Bool {
        guard node.isLeaf, level > 0 else { return false }
        let parentNumber = path.page(level - 1)
        let position = path.position(level - 1)
        let parent = try Node(sink.page(parentNumber), parentNumber)
        let pageSize = node.pageSize
        let needed = cell.size + Node.slotSize + pageSize / Self.shareThresholdDivisor
        // The right sibling first, then the left one.
        var choice: (nodeIsLeft: Bool, separatorIndex: Int, sibling: PageNumber, peek: Node)?
        for nodeIsLeft in [true, false] {
            let siblingPosition = nodeIsLeft ? position + 1 : position - 1
            guard siblingPosition >= 0, siblingPosition <= parent.count else { continue }
            let number = try parent.child(at: siblingPosition)
            let candidate = try Node(sink.page(number), number)
            guard candidate.isLeaf else {
                throw .corrupt("leaf \(node.number) has a branch sibling \(number)", page: parentNumber)
            }
            if candidate.freeBytes >= needed {
                choice = (nodeIsLeft, nodeIsLeft ? position : position - 1, number, candidate)
                break
            }
        }
        guard let (nodeIsLeft, separatorIndex, siblingNumber, peek) = choice else { return false }
        // Gather from the read-only sibling; it is copied for writing only once the cut is known.
        let (left, right) = nodeIsLeft ? (node, peek) : (peek, node)
        let cellSize = cell.size
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: 2 * pageSize + cellSize, alignment: 8)
        defer { scratch.deallocate() }
        scratch.copyMemory(from: left.base, byteCount: pageSize)
        (scratch + pageSize).copyMemory(from: right.base, byteCount: pageSize)
        cell.write(to: scratch + 2 * pageSize)
        let newCell = (2 * pageSize)..<(2 * pageSize + cellSize)
        var run = CellRun(base: scratch, isLeaf: true, capacity: left.count + right.count + 1)
        for (offset, page) in [(0, left), (pageSize, right)] {
            let insertsHere = (page.number == node.number)
            for i in 0..<page.count {
                if insertsHere && i == index { run.append(newCell) }
                let start = try page.slot(i)
                run.append((offset + start)..<(offset + start + (try page.cellSize(at: i))))
            }
            if insertsHere && index == page.count { run.append(newCell) }
        }
        // Large cells may leave no cut that fits both pages: then split as usual.
        guard let m = try? run.splitPoint(pageSize: pageSize, bias: .balanced, page: node.number) else { return false }
        let separator = run.leafSeparator(before: m)
        let sibling = try Node(sink.writablePage(siblingNumber), siblingNumber)
        run.layOut(0..<m, into: nodeIsLeft ? node : sibling)
        run.layOut(m..<run.count, into: nodeIsLeft ? sibling : node)
        // The separator between the two changes: replace the parent's cell (which may split it).
        let writableParent = try Node(sink.writablePage(parentNumber), parentNumber)
        try writableParent.remove(at: separatorIndex)
        try separator.withBytes { key throws(StorageError) in
            try insert(.branch(child: nodeIsLeft ? node.number : siblingNumber, key: key), at: separatorIndex, into: writableParent,
                       level: level - 1, path: path, sink: sink)
        }
        return true
    }
}
