/// An ordered run of encoded cells gathered from one or two node pages (and perhaps one new
/// cell) into scratch memory, to be laid out again: over two pages when a page splits or two
/// siblings share their cells, or into one when siblings merge. Not on the hot path (it
/// allocates); the cells were parsed with bounds checks before they were gathered.
struct CellRun {
    enum Bias: Equatable {
        /// Halves of about equal size.
        case balanced
        /// Keep as much as possible on the left: appending at the tree's right edge.
        case right
        /// Keep as much as possible on the right: prepending at the tree's left edge.
        case left
        /// Cut right after cell `i` (the cell a run of ascending inserts just placed), so the run
        /// goes on at the end of the left page; balanced when that cut does not fit.
        case after(Int)
    }

    let base: UnsafeMutableRawPointer
    let isLeaf: Bool
    private(set) var cells: [Range<Int>] = []

    init(base: UnsafeMutableRawPointer, isLeaf: Bool, capacity: Int) {
        self.base = base
        self.isLeaf = isLeaf
        cells.reserveCapacity(capacity)
    }

    var count: Int { cells.count }

    mutating func append(_ range: Range<Int>) { cells.append(range) }

    /// Appends every cell of `node`, whose page bytes were copied to `base + offset`.
    mutating func appendCells(of node: Node, copiedTo offset: Int) throws(StorageError) {
        for i in 0..<node.count {
            let start = try node.slot(i)
            cells.append((offset + start)..<(offset + start + (try node.cellSize(at: i))))
        }
    }

    func bytes(_ i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + cells[i].lowerBound, count: cells[i].count)
    }

    /// The key of cell `i`.
    func key(_ i: Int) -> UnsafeRawBufferPointer {
        let range = cells[i]
        var p = range.lowerBound + (isLeaf ? 0 : 4)
        let length = Int(Varint.read(base, &p, limit: range.upperBound) ?? 0)
        if isLeaf { _ = Varint.read(base, &p, limit: range.upperBound) }
        return UnsafeRawBufferPointer(start: base + p, count: max(0, min(length, range.upperBound - p)))
    }

    /// The child of branch cell `i`.
    func child(_ i: Int) -> PageNumber {
        PageNumber(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: cells[i].lowerBound, as: UInt32.self)))
    }

    /// The bytes the cells in `range` take in a page, slots included.
    func footprint(_ range: Range<Int>) -> Int {
        var total = 0
        for i in range { total += cells[i].count + Node.slotSize }
        return total
    }

    /// Where to cut the run in two: a leaf keeps cells ..<m on the left and m... on the right;
    /// a branch keeps ..<m on the left, sends cell m up and keeps m+1... on the right. Both sides
    /// fit a page and (for a branch) hold at least one cell. Throws `.corrupt` when no cut works
    /// (only possible with cells larger than a page may hold).
    func splitPoint(pageSize: Int, bias: Bias, page: PageNumber) throws(StorageError) -> Int {
        let usable = pageSize - Node.headerSize
        var prefix = [0]
        prefix.reserveCapacity(cells.count + 1)
        for range in cells { prefix.append(prefix[prefix.count - 1] + range.count + Node.slotSize) }
        let total = prefix[cells.count]
        var best: Int?
        var bestImbalance = Int.max
        let candidates = isLeaf ? 1..<max(1, cells.count) : 1..<max(1, cells.count - 1)
        var bias = bias
        if case .after(let i) = bias {
            // The new cell last: as at the right edge. Else the cut after it, when both halves fit.
            let m = i + 1
            if m >= cells.count { bias = .right } else {
                bias = .balanced
                if candidates.contains(m), prefix[m] <= usable, total - prefix[isLeaf ? m : m + 1] <= usable { return m }
            }
        }
        for m in candidates {
            let left = prefix[m]
            let right = total - prefix[isLeaf ? m : m + 1]
            guard left <= usable, right <= usable else { continue }
            switch bias {
            case .right: best = m
            case .left: if best == nil { best = m }
            case .balanced, .after:
                let imbalance = abs(left - right)
                if imbalance < bestImbalance {
                    best = m
                    bestImbalance = imbalance
                }
            }
        }
        guard let best else {
            throw .corrupt("cells of \(total) bytes cannot be split over two pages", page: page)
        }
        return best
    }

    /// Whether the whole run fits one page.
    func fitsOnePage(pageSize: Int) -> Bool { footprint(0..<cells.count) <= pageSize - Node.headerSize }

    /// Formats `node` and writes the cells in `range` into it.
    func layOut(_ range: Range<Int>, into node: Node, rightmost: PageNumber = PageNumber(0)) {
        node.format(leaf: isLeaf, rightmost: rightmost)
        for i in range { node.append(.raw(bytes(i))) }
    }

    /// The shortest separator for a leaf cut before cell `m`: the shortest prefix of key(m) that
    /// is greater than key(m − 1). Every key left of the cut is below it, every key right is ≥ it.
    func leafSeparator(before m: Int) -> [UInt8] {
        let left = key(m - 1)
        let right = key(m)
        var common = 0
        let limit = min(left.count, right.count)
        while common < limit && left[common] == right[common] { common += 1 }
        return [UInt8](right.prefix(min(common + 1, right.count)))
    }
}
