// Editing a node page in place (layout: Node.swift). Only ever called on a buffer obtained from
// `PageSink.writablePage` or `allocatePage`. Every edit keeps invariant N2 (cell accounting), and
// checks the header fields it relies on, so a malformed page throws `.corrupt` rather than
// letting an edit write outside the page.

extension Node {
    @inline(__always) func setU16(_ value: UInt16, at offset: Int) {
        base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt16.self)
    }
    @inline(__always) func setU32(_ value: UInt32, at offset: Int) {
        base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
    }
    @inline(__always) func setCount(_ value: Int) { setU16(UInt16(value), at: 6) }
    @inline(__always) func setContentStart(_ value: Int) { setU32(UInt32(value), at: Node.contentStartOffset) }
    @inline(__always) func setFragmented(_ value: Int) { setU32(UInt32(value), at: Node.fragmentedOffset) }
    func setRightmost(_ child: PageNumber) { setU32(child.rawValue, at: Node.rightmostOffset) }

    /// Makes the page an empty node of the given kind. Leaves bytes 0..4 and 8..16 (the pager's)
    /// alone and zeroes the rest, so stale bytes never linger (and page images compress well).
    func format(leaf: Bool, rightmost: PageNumber = PageNumber(0)) {
        base.storeBytes(of: (leaf ? PageType.leaf : PageType.branch).rawValue, toByteOffset: 4, as: UInt8.self)
        base.storeBytes(of: 0, toByteOffset: 5, as: UInt8.self)
        setCount(0)
        (base + Node.headerSize).initializeMemory(as: UInt8.self, repeating: 0, count: pageSize - Node.headerSize)
        setRightmost(leaf ? PageNumber(0) : rightmost)
        setContentStart(pageSize)
        setFragmented(0)
        setU32(0, at: 28)
    }

    /// Makes room for a cell of `size` bytes at slot `index` (later slots move up by one) and
    /// returns its offset, defragmenting when the free bytes exist but are scattered. Returns nil,
    /// changing nothing, when the page cannot hold it. The caller writes the cell body.
    @inline(__always)
    func reserve(at index: Int, size: Int) throws(StorageError) -> Int? {
        let n = count
        guard index >= 0 && index <= n else { throw .corrupt("slot \(index) is past the \(n) cells", page: number) }
        let need = size + Node.slotSize
        if contentStart - slotEnd < need {
            guard freeBytes >= need else { return nil }
            try defragment()
            guard contentStart - slotEnd >= need else {
                throw .corrupt("free space accounting is wrong (fragmented \(fragmented))", page: number)
            }
        }
        let offset = contentStart - size
        let slotAt = Node.headerSize + Node.slotSize * index
        if index < n {
            (base + slotAt + Node.slotSize).copyMemory(from: base + slotAt, byteCount: Node.slotSize * (n - index))
        }
        setU16(UInt16(offset), at: slotAt)
        setCount(n + 1)
        setContentStart(offset)
        return offset
    }

    /// Writes a cell at slot `index`; false when it does not fit.
    @inline(__always)
    func insert(_ cell: PendingCell, at index: Int) throws(StorageError) -> Bool {
        guard let offset = try reserve(at: index, size: cell.size) else { return false }
        cell.write(to: base + offset)
        return true
    }

    /// Appends a cell after the last slot; the caller has made sure it fits (used to lay out a
    /// freshly formatted page).
    func append(_ cell: PendingCell) {
        let size = cell.size
        let offset = contentStart - size
        precondition(offset >= slotEnd + Node.slotSize, "cell does not fit a freshly laid out page")
        let n = count
        setU16(UInt16(offset), at: Node.headerSize + Node.slotSize * n)
        setCount(n + 1)
        setContentStart(offset)
        cell.write(to: base + offset)
    }

    /// Removes cell `index` (later slots move down by one). Its bytes become fragmented space,
    /// or are given back to the free gap when the cell sits at the content start.
    func remove(at index: Int) throws(StorageError) {
        let n = count
        let start = try slot(index)
        let size = try cellSize(at: index)
        let slotAt = Node.headerSize + Node.slotSize * index
        if index < n - 1 {
            (base + slotAt).copyMemory(from: base + slotAt + Node.slotSize, byteCount: Node.slotSize * (n - 1 - index))
        }
        setU16(0, at: Node.headerSize + Node.slotSize * (n - 1))
        setCount(n - 1)
        if start == contentStart {
            setContentStart(start + size)
        } else {
            guard fragmented + size <= pageSize - contentStart else {
                throw .corrupt("cell \(index) overlaps another cell", page: number)
            }
            setFragmented(fragmented + size)
        }
        (base + start).initializeMemory(as: UInt8.self, repeating: 0, count: size)
    }

    /// Overwrites cell `index` with a cell no larger than it; the bytes left over become fragmented.
    func overwrite(at index: Int, with cell: PendingCell, oldSize: Int) throws(StorageError) {
        let start = try slot(index)
        let size = cell.size
        precondition(size <= oldSize)
        cell.write(to: base + start)
        if size < oldSize {
            guard fragmented + oldSize - size <= pageSize - contentStart else {
                throw .corrupt("cell \(index) overlaps another cell", page: number)
            }
            (base + start + size).initializeMemory(as: UInt8.self, repeating: 0, count: oldSize - size)
            setFragmented(fragmented + oldSize - size)
        }
    }

    /// Sets child `position` (a cell's child, or the rightmost child when `position == count`).
    func setChild(at position: Int, to child: PageNumber) throws(StorageError) {
        guard position <= count else { throw .corrupt("child \(position) does not exist", page: number) }
        if position == count {
            setRightmost(child)
            return
        }
        let start = try slot(position)
        guard start + 4 <= pageSize else { throw .corrupt("branch cell \(position) runs past the page end", page: number) }
        setU32(child.rawValue, at: start)
    }

    /// Moves every cell to the end of the page, in slot order, so all free space is one gap.
    /// Throws `.corrupt` when the cells cannot all be parsed or do not fit (they overlapped).
    func defragment() throws(StorageError) {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 8)
        defer { scratch.deallocate() }
        guard let copy = scratch.baseAddress else { return }
        copy.copyMemory(from: base, byteCount: pageSize)
        let old = Node(unchecked: buffer, number)
        let n = count
        var sizes: [Int] = []
        sizes.reserveCapacity(n)
        for i in 0..<n { sizes.append(try old.cellSize(at: i)) }
        var top = pageSize
        let floor = slotEnd
        for i in 0..<n {
            let from = Int(u16(at: Node.headerSize + Node.slotSize * i))
            top -= sizes[i]
            guard top >= floor else { throw .corrupt("cells overlap: they do not fit the page", page: number) }
            (base + top).copyMemory(from: copy + from, byteCount: sizes[i])
            setU16(UInt16(top), at: Node.headerSize + Node.slotSize * i)
        }
        (base + floor).initializeMemory(as: UInt8.self, repeating: 0, count: top - floor)
        setContentStart(top)
        setFragmented(0)
    }

    /// Replaces this page's whole content (bytes 4..8 and 16..pageSize) with another node's, for
    /// moving a child into the root. The pager's bytes (0..4, 8..16) stay.
    func copyContent(from other: Node) {
        (base + 4).copyMemory(from: other.base + 4, byteCount: 4)
        (base + 16).copyMemory(from: other.base + 16, byteCount: pageSize - 16)
    }
}
