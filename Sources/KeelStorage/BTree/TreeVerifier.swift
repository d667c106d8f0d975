// The walk behind `BTree.verify` (BTree+Verify.swift): every rule of Node.swift, Cell.swift and
// OverflowChain.swift, checked page by page, each violation recorded as a VerifyFault and the
// walk carried on wherever it still can.

struct TreeVerifier<Source: PageSource> {
    let source: Source
    let tree: String?
    let root: PageNumber
    let maxKeySize: Int
    let maxCellSize: Int
    var faults: [VerifyFault] = []
    var leafDepth: Int?

    init(source: Source, tree: String?, root: PageNumber) {
        self.source = source
        self.tree = tree
        self.root = root
        self.maxKeySize = BTreeLimits.maxKeySize(pageSize: source.pageSize)
        self.maxCellSize = BTreeLimits.maxCellSize(pageSize: source.pageSize)
    }

    mutating func fault(_ page: PageNumber?, _ message: String) {
        faults.append(VerifyFault(page: page, tree: tree, message: message))
    }

    mutating func fault(_ error: StorageError, _ page: PageNumber) {
        fault(error.page ?? page, error.message)
    }

    /// Checks the subtree at `number`, whose keys must all be ≥ `lower` and < `upper`.
    mutating func checkNode(
        _ number: PageNumber, depth: Int, lower: [UInt8]?, upper: [UInt8]?,
        visited: inout Set<PageNumber>, visit: (PageNumber, PageType) -> Void
    ) {
        guard depth <= BTreeLimits.maxDepth else {
            return fault(number, "tree is deeper than \(BTreeLimits.maxDepth) levels")
        }
        guard number.rawValue != 0 else { return fault(nil, "a child pointer is page 0") }
        guard visited.insert(number).inserted else { return fault(number, "page is reached twice") }
        let page: PageBuffer
        do { page = try source.page(number) } catch { return fault(error, number) }
        let rawType = page.pointer.load(fromByteOffset: 4, as: UInt8.self)
        let type = PageType(rawValue: rawType)
        visit(number, type ?? .empty)
        guard type == .leaf || type == .branch else {
            return fault(number, "expected a B+tree page, found page type \(rawType)")
        }
        let node: Node
        do { node = try Node(page, number) } catch { return fault(error, number) }
        if page.flags != 0 { fault(number, "node flags are \(page.flags), expected 0") }
        if node.u32(at: 28) != 0 { fault(number, "reserved header bytes are not zero") }
        if node.isLeaf && node.rightmost.rawValue != 0 { fault(number, "leaf has a rightmost child") }
        let isRoot = number == root
        if node.count == 0 && !isRoot {
            fault(number, node.isLeaf ? "non-root leaf is empty" : "non-root branch has a single child")
        } else if node.count == 0 && !node.isLeaf {
            fault(number, "root branch has a single child (should have been collapsed)")
        }

        // Cells: bounds, sizes, order, separator bounds, overlap and space accounting.
        var spans: [(start: Int, end: Int)] = []
        var keys: [[UInt8]?] = []
        var children: [PageNumber?] = []
        var previous: [UInt8]?
        for i in 0..<node.count {
            let key: [UInt8]
            let size: Int
            do {
                if node.isLeaf {
                    let entry = try node.leafEntry(at: i)
                    spans.append((entry.cellStart, entry.cellEnd))
                    key = [UInt8](UnsafeRawBufferPointer(start: node.base + entry.keyStart, count: entry.keyLength))
                    size = entry.cellSize
                    if entry.isOverflow {
                        checkOverflow(node, entry: entry, cell: i, visited: &visited, visit: visit)
                    }
                } else {
                    let entry = try node.branchEntry(at: i)
                    spans.append((entry.cellStart, entry.cellEnd))
                    key = [UInt8](UnsafeRawBufferPointer(start: node.base + entry.keyStart, count: entry.keyLength))
                    size = entry.cellSize
                    children.append(entry.child)
                }
            } catch {
                fault(error, number)
                keys.append(nil)
                if !node.isLeaf { children.append(nil) }
                continue
            }
            keys.append(key)
            if key.count > maxKeySize { fault(number, "cell \(i): key of \(key.count) bytes exceeds \(maxKeySize)") }
            if size > maxCellSize { fault(number, "cell \(i): \(size) bytes exceeds the cell limit \(maxCellSize)") }
            if let previous, previous.lexicographicallyPrecedes(key) == false {
                fault(number, "cell \(i): keys out of order")
            }
            if let lower, key.lexicographicallyPrecedes(lower) {
                fault(number, "cell \(i): key below its parent's separator")
            }
            if let upper, !key.lexicographicallyPrecedes(upper) {
                fault(number, "cell \(i): key not below its parent's next separator")
            }
            previous = key
        }
        checkSpace(node, spans: spans)

        if node.isLeaf {
            if let leafDepth, leafDepth != depth {
                fault(number, "leaf at depth \(depth) where other leaves are at depth \(leafDepth)")
            } else if leafDepth == nil {
                leafDepth = depth
            }
            return
        }
        if node.rightmost.rawValue == 0 { fault(number, "branch has no rightmost child") }
        for position in 0...node.count {
            let child = position == node.count ? node.rightmost : children[position]
            guard let child, child.rawValue != 0 else { continue }
            // A cell whose key could not be read leaves its neighbours' bounds open on that side.
            let childLower = position == 0 ? lower : keys[position - 1]
            let childUpper = position == node.count ? upper : keys[position]
            checkNode(child, depth: depth + 1, lower: childLower, upper: childUpper, visited: &visited, visit: visit)
        }
    }

    /// Cells must not overlap, and cells + fragmented bytes must fill [content start, page end).
    private mutating func checkSpace(_ node: Node, spans: [(start: Int, end: Int)]) {
        let sorted = spans.sorted { $0.start < $1.start }
        var end = node.contentStart
        var used = 0
        for span in sorted {
            if span.start < end { fault(node.number, "cells overlap at offset \(span.start)") }
            end = max(end, span.end)
            used += span.end - span.start
        }
        if spans.count == node.count, used + node.fragmented != node.pageSize - node.contentStart {
            fault(
                node.number,
                "space accounting: cells \(used) + fragmented \(node.fragmented) ≠ \(node.pageSize - node.contentStart)")
        }
    }

    /// Checks the overflow chain of leaf cell `cell`: the reference, every page, and (when
    /// compressed) that the block decompresses to the value length.
    private mutating func checkOverflow(
        _ node: Node, entry: LeafEntry, cell: Int, visited: inout Set<PageNumber>,
        visit: (PageNumber, PageType) -> Void
    ) {
        do {
            let reference = try OverflowReference.read(node.base + entry.valueStart, page: node.number)
            let inlineSize = PendingCell.leafSize(keyLength: entry.keyLength, valueLength: Int(reference.valueLength))
            if inlineSize <= maxCellSize {
                fault(node.number, "cell \(cell): a value of \(reference.valueLength) bytes is in overflow but fits inline")
            }
            var twice: PageNumber?
            try OverflowChain.walk(reference, in: source, owner: node.number) { number, _ in
                if !visited.insert(number).inserted, twice == nil { twice = number }
                visit(number, .overflow)
            }
            if let twice { fault(twice, "overflow page is reached twice") }
            if reference.isCompressed {
                try OverflowChain.withValue(reference, in: source, owner: node.number) { _ in }
            }
        } catch {
            fault(error, node.number)
        }
    }
}
