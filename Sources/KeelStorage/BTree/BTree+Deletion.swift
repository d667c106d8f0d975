// Delete, and the rebalancing that keeps invariant N4: a page left under a quarter full is merged
// with a sibling when the two fit one page (the right page is freed and the separator between
// them leaves the parent, which may in turn fall under a quarter and merge), and otherwise the
// two share their cells evenly (the parent's separator is replaced, which may split the parent).
// A root branch left with a single child takes that child's content and the child is freed, so
// the root keeps its page number (T1) and deleting most keys gives most pages back.

extension BTree {
    /// Removes `key` and its value (and the value's overflow pages); false when it was absent.
    @discardableResult
    public func delete(key: UnsafeRawBufferPointer, in sink: some PageSink) throws(StorageError) -> Bool {
        var path = TreePath()
        let leaf = try descend(to: key, in: sink, path: &path)
        return try delete(key: key, leaf: leaf, path: path, in: sink)
    }

    /// The delete once the leaf that would hold `key` is found, with the path to it.
    func delete<Sink: PageSink>(key: UnsafeRawBufferPointer, leaf: Node, path: TreePath, in sink: Sink) throws(StorageError) -> Bool {
        let (index, found) = try leaf.leafSearch(key)
        guard found else { return false }
        let entry = try leaf.leafEntry(at: index)
        if entry.isOverflow {
            let reference = try OverflowReference.read(leaf.base + entry.valueStart, page: leaf.number)
            try OverflowChain.free(reference, in: sink, owner: leaf.number)
        }
        let node = try Node(sink.writablePage(leaf.number), leaf.number)
        try node.remove(at: index)
        try rebalance(node, level: path.depth, path: path, sink: sink)
        return true
    }

    @discardableResult
    public func delete(key: [UInt8], in sink: some PageSink) throws(StorageError) -> Bool {
        try key.withBytes { k throws(StorageError) in try delete(key: k, in: sink) }
    }

    /// Restores N4 from the writable `node` at `level` upwards after it lost a cell.
    func rebalance<Sink: PageSink>(
        _ node: Node, level: Int, path: TreePath, sink: Sink
    ) throws(StorageError) {
        var node = node
        var level = level
        while level > 0 {
            guard node.isUnderfull else { return }
            let parentNumber = path.page(level - 1)
            let position = path.position(level - 1)
            let parent = try Node(sink.writablePage(parentNumber), parentNumber)
            guard parent.count > 0 else { throw .corrupt("non-root branch has a single child", page: parentNumber) }
            // Pair the node with a sibling it can merge with (the left one first), or else with
            // its left sibling (the right one for a first child) to share cells.
            let separatorIndex: Int
            if position > 0, try fitsMerged(node, with: parent.child(at: position - 1), parent, position - 1, sink) {
                separatorIndex = position - 1
            } else if position < parent.count,
                try fitsMerged(node, with: parent.child(at: position + 1), parent, position, sink)
            {
                separatorIndex = position
            } else {
                separatorIndex = position > 0 ? position - 1 : 0
            }
            let leftNumber = separatorIndex == position ? node.number : try parent.child(at: separatorIndex)
            let rightNumber = separatorIndex == position ? try parent.child(at: position + 1) : node.number
            guard try mergeOrShare(
                leftNumber, rightNumber, separatorIndex: separatorIndex, parent: parent, level: level,
                path: path, sink: sink)
            else { return }
            node = parent
            level -= 1
        }
        try collapseRoot(node, sink: sink)
    }

    /// Whether `node` and its sibling `other` (separated by parent cell `separatorIndex`) fit one page.
    private func fitsMerged<Sink: PageSink>(
        _ node: Node, with other: PageNumber, _ parent: Node, _ separatorIndex: Int, _ sink: Sink
    ) throws(StorageError) -> Bool {
        let sibling = try Node(sink.page(other), other)
        var total = node.usedBytes + sibling.usedBytes
        if !node.isLeaf { total += try parent.branchEntry(at: separatorIndex).cellSize + Node.slotSize }
        return total <= node.pageSize - Node.headerSize
    }

    /// Merges two adjacent siblings into the left one when they fit one page (true), otherwise
    /// shares their cells evenly between them (false).
    private func mergeOrShare<Sink: PageSink>(
        _ leftNumber: PageNumber, _ rightNumber: PageNumber, separatorIndex: Int, parent: Node, level: Int,
        path: TreePath, sink: Sink
    ) throws(StorageError) -> Bool {
        let left = try Node(sink.writablePage(leftNumber), leftNumber)
        let right = try Node(sink.writablePage(rightNumber), rightNumber)
        guard left.isLeaf == right.isLeaf else {
            throw .corrupt("siblings \(leftNumber) and \(rightNumber) are of different kinds", page: parent.number)
        }
        let pageSize = left.pageSize
        let isLeaf = left.isLeaf
        let separatorBytes = try parent.branchEntry(at: separatorIndex)
        let separatorCell = PendingCell.branch(
            child: left.rightmost,
            key: UnsafeRawBufferPointer(start: parent.base + separatorBytes.keyStart, count: separatorBytes.keyLength))
        let separatorSize = separatorCell.size
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: 2 * pageSize + separatorSize, alignment: 8)
        defer { scratch.deallocate() }
        scratch.copyMemory(from: left.base, byteCount: pageSize)
        (scratch + pageSize).copyMemory(from: right.base, byteCount: pageSize)
        var run = CellRun(base: scratch, isLeaf: isLeaf, capacity: left.count + right.count + 1)
        try run.appendCells(of: left, copiedTo: 0)
        if !isLeaf {
            // A branch merge brings the parent's separator down, over the left's rightmost child.
            separatorCell.write(to: scratch + 2 * pageSize)
            run.append((2 * pageSize)..<(2 * pageSize + separatorSize))
        }
        try run.appendCells(of: right, copiedTo: pageSize)
        let finalRightmost = right.rightmost

        if run.fitsOnePage(pageSize: pageSize) {
            run.layOut(0..<run.count, into: left, rightmost: finalRightmost)
            try sink.freePage(rightNumber)
            try parent.setChild(at: separatorIndex + 1, to: leftNumber)
            try parent.remove(at: separatorIndex)
            return true
        }

        let m = try run.splitPoint(pageSize: pageSize, bias: .balanced, page: leftNumber)
        let separator: [UInt8]
        if isLeaf {
            separator = run.leafSeparator(before: m)
            run.layOut(0..<m, into: left)
            run.layOut(m..<run.count, into: right)
        } else {
            separator = [UInt8](run.key(m))
            run.layOut(0..<m, into: left, rightmost: run.child(m))
            run.layOut((m + 1)..<run.count, into: right, rightmost: finalRightmost)
        }
        try parent.remove(at: separatorIndex)
        try separator.withBytes { key throws(StorageError) in
            try insert(.branch(child: leftNumber, key: key), at: separatorIndex, into: parent, level: level - 1,
                       path: path, sink: sink)
        }
        return false
    }

    /// While the root is a branch with a single child, moves that child's content into the root
    /// and frees the child (T1: the root keeps its page number).
    private func collapseRoot<Sink: PageSink>(_ root: Node, sink: Sink) throws(StorageError) {
        for _ in 0..<BTreeLimits.maxDepth {
            guard !root.isLeaf, root.count == 0 else { return }
            let childNumber = try root.child(at: 0)
            let child = try Node(sink.page(childNumber), childNumber)
            root.copyContent(from: child)
            try sink.freePage(childNumber)
        }
    }
}
