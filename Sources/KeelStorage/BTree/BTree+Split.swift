// Splitting a full node while inserting a cell. A non-root node keeps the left half in its own
// page and gives the right half to a new page; the root instead moves both halves to new pages
// and becomes a branch over them, so its page number never changes (invariant T1).
//
// Leaf separators are cut short: the shortest prefix of the first right key that is greater than
// the last left key (suffix truncation), which keeps branches wide. At the tree's right edge the
// cut keeps the left page full (sequential inserts fill pages completely); at the left edge,
// symmetrically, the right page.

extension BTree {
    /// Splits the writable, full `node` while inserting `cell` at slot `index`. Returns the
    /// separator and the new right page for the parent, or nil when `node` was the root (which is
    /// then a branch over two new pages).
    func split<Sink: PageSink>(
        _ node: Node, inserting cell: PendingCell, at index: Int, bias: CellRun.Bias, in sink: Sink
    ) throws(StorageError) -> (separator: [UInt8], right: PageNumber)? {
        let pageSize = node.pageSize
        let cellSize = cell.size
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: pageSize + cellSize, alignment: 8)
        defer { scratch.deallocate() }
        scratch.copyMemory(from: node.base, byteCount: pageSize)
        cell.write(to: scratch + pageSize)

        let count = node.count
        var run = CellRun(base: scratch, isLeaf: node.isLeaf, capacity: count + 1)
        for i in 0..<count {
            if i == index { run.append(pageSize..<(pageSize + cellSize)) }
            let start = try node.slot(i)
            run.append(start..<(start + (try node.cellSize(at: i))))
        }
        if index == count { run.append(pageSize..<(pageSize + cellSize)) }

        let m = try run.splitPoint(pageSize: pageSize, bias: bias, page: node.number)
        let separator: [UInt8]
        let leftRange = 0..<m
        let rightRange: Range<Int>
        var leftRightmost = PageNumber(0)
        var rightRightmost = PageNumber(0)
        if run.isLeaf {
            separator = run.leafSeparator(before: m)
            rightRange = m..<run.count
        } else {
            separator = [UInt8](run.key(m))
            leftRightmost = run.child(m)
            rightRightmost = node.rightmost
            rightRange = (m + 1)..<run.count
        }

        guard separator.count <= BTreeLimits.maxKeySize(pageSize: pageSize) else {
            throw .corrupt("a key of \(separator.count) bytes exceeds the key size limit", page: node.number)
        }

        if node.number == root {
            let (leftNumber, leftPage) = try sink.allocatePage()
            let (rightNumber, rightPage) = try sink.allocatePage()
            run.layOut(leftRange, into: Node(unchecked: leftPage, leftNumber), rightmost: leftRightmost)
            run.layOut(rightRange, into: Node(unchecked: rightPage, rightNumber), rightmost: rightRightmost)
            node.format(leaf: false, rightmost: rightNumber)
            separator.withUnsafeBytes { node.append(.branch(child: leftNumber, key: $0)) }
            return nil
        }
        let (rightNumber, rightPage) = try sink.allocatePage()
        run.layOut(rightRange, into: Node(unchecked: rightPage, rightNumber), rightmost: rightRightmost)
        run.layOut(leftRange, into: node, rightmost: leftRightmost)
        return (separator, rightNumber)
    }
}
