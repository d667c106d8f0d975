// A B+tree node page (leaf or branch): a slotted page (Docs/FileFormat.md, "B+tree pages").
//
// | offset   | size | field                                                                     |
// |----------|------|---------------------------------------------------------------------------|
// | 0        | 16   | common page header (PageBuffer.swift): type 2 = branch, 3 = leaf;         |
// |          |      | flags (byte 5) = 0; bytes 6..8 = cell count N (u16)                       |
// | 16       | 4    | branch: rightmost child page number (≠ 0); leaf: 0                        |
// | 20       | 4    | cell content start C: lowest byte offset used by cell bodies (pageSize    |
// |          |      | when there are none)                                                      |
// | 24       | 4    | fragmented bytes F: bytes in [C, pageSize) that belong to no cell         |
// | 28       | 4    | reserved, 0                                                               |
// | 32       | 2·N  | slot array: u16 byte offset of cell i, cells in ascending key order       |
// | 32+2N    | …    | free space, up to C                                                       |
// | C        | …    | cell bodies (Cell.swift), in any physical order, with F bytes of gaps     |
//
// Validity (checked whenever a page is opened; a violation throws `.corrupt` naming the page):
// 32 + 2N ≤ C ≤ pageSize and F ≤ pageSize − C. Each cell is checked when it is used: its slot
// offset s satisfies C ≤ s, and the cell it starts ends at or before pageSize.
//
// Invariants (kept by every edit, checked by BTree+Verify.swift):
// - N1 keys strictly increase with the slot index;
// - N2 cells do not overlap, and the sum of cell sizes + F = pageSize − C;
// - N3 in a branch, child i holds keys k with key(i−1) ≤ k < key(i); the rightmost child holds
//   keys ≥ key(N−1);
// - N4 every page except the root holds at least one cell (a branch therefore two children);
//   after a delete a page under a quarter full is merged with a sibling or refilled from it;
// - N5 all leaves are at the same depth; the root's page number never changes.
// Bytes 0..4 (checksum) and 8..16 (transaction ID) belong to the pager: never written here.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A view of a node page. Holds the buffer (keeping it alive) and reads fields straight from it.
struct Node {
    static let headerSize = 32
    static let slotSize = 2
    static let rightmostOffset = 16
    static let contentStartOffset = 20
    static let fragmentedOffset = 24

    /// The page the view reads, kept alive by the view (nil for a view of scratch memory).
    let buffer: PageBuffer?
    let number: PageNumber
    let base: UnsafeMutableRawPointer
    let pageSize: Int

    /// Opens a page as a node, checking its type and header (the validity rule above).
    @inline(__always)
    init(_ buffer: PageBuffer, _ number: PageNumber) throws(StorageError) {
        self.init(unchecked: buffer, number)
        let type = base.load(fromByteOffset: 4, as: UInt8.self)
        guard type == PageType.leaf.rawValue || type == PageType.branch.rawValue else {
            throw .corrupt("expected a B+tree page, found page type \(type)", page: number)
        }
        let start = contentStart
        guard Node.headerSize + Node.slotSize * count <= start, start <= pageSize,
            fragmented <= pageSize - start
        else {
            throw .corrupt(
                "bad node header (cells \(count), content start \(start), fragmented \(fragmented))", page: number)
        }
    }

    /// A view without checks, for a page this code has just formatted.
    @inline(__always)
    init(unchecked buffer: PageBuffer, _ number: PageNumber) {
        self.buffer = buffer
        self.number = number
        self.base = buffer.pointer
        self.pageSize = buffer.size
    }

    /// A view of a page already opened (checked) as a node, without a reference of its own: the
    /// caller keeps `buffer` alive while the view is used (`BTreeCursor.lookUpEach`'s leaves,
    /// held by its list of buffers).
    @inline(__always)
    init(viewing buffer: PageBuffer, _ number: PageNumber) {
        self.init(copyAt: buffer.pointer, pageSize: buffer.size, number)
    }

    /// A view of a copy of a page in scratch memory the caller keeps alive (or of any page
    /// memory the caller keeps alive: `init(viewing:)`).
    @inline(__always)
    init(copyAt base: UnsafeMutableRawPointer, pageSize: Int, _ number: PageNumber) {
        self.buffer = nil
        self.number = number
        self.base = base
        self.pageSize = pageSize
    }

    // MARK: Header fields

    @inline(__always) var isLeaf: Bool { base.load(fromByteOffset: 4, as: UInt8.self) == PageType.leaf.rawValue }
    @inline(__always) var count: Int { Int(u16(at: 6)) }
    @inline(__always) var contentStart: Int { Int(u32(at: Node.contentStartOffset)) }
    @inline(__always) var fragmented: Int { Int(u32(at: Node.fragmentedOffset)) }
    @inline(__always) var rightmost: PageNumber { PageNumber(u32(at: Node.rightmostOffset)) }
    @inline(__always) var slotEnd: Int { Node.headerSize + Node.slotSize * count }
    /// Bytes for cells and their slots once the page is defragmented.
    var freeBytes: Int { contentStart - slotEnd + fragmented }
    /// Bytes cells and slots use.
    var usedBytes: Int { pageSize - Node.headerSize - freeBytes }
    /// Below a quarter of the usable space: a candidate for merging (invariant N4).
    var isUnderfull: Bool { usedBytes < (pageSize - Node.headerSize) / 4 }

    @inline(__always) func u16(at offset: Int) -> UInt16 {
        UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always) func u32(at offset: Int) -> UInt32 {
        UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// The offset of cell `index`, checked to lie in the cell area.
    @inline(__always) func slot(_ index: Int) throws(StorageError) -> Int {
        // Indices come from searches of this page, or from a path recorded on the way down,
        // which a damaged tree (a page reachable twice) can make stale: checked, not asserted.
        guard index >= 0 && index < count else {
            throw .corrupt("cell \(index) does not exist (\(count) cells)", page: number)
        }
        let offset = Int(u16(at: Node.headerSize + Node.slotSize * index))
        guard offset >= contentStart, offset < pageSize else {
            throw .corrupt("cell \(index) offset \(offset) outside the cell area", page: number)
        }
        return offset
    }

    // MARK: Cells

    /// Where the key of leaf cell `index` is.
    @inline(__always) func leafKey(at index: Int) throws(StorageError) -> (start: Int, length: Int) {
        var p = try slot(index)
        guard let keyLength = Varint.read(base, &p, limit: pageSize), Varint.read(base, &p, limit: pageSize) != nil,
            Int(keyLength) <= pageSize - p
        else { throw .corrupt("leaf cell \(index) key runs past the page end", page: number) }
        return (p, Int(keyLength))
    }

    /// Every part of leaf cell `index`, checked.
    func leafEntry(at index: Int) throws(StorageError) -> LeafEntry {
        let start = try slot(index)
        var p = start
        guard let keyLength = Varint.read(base, &p, limit: pageSize), let tag = Varint.read(base, &p, limit: pageSize)
        else { throw .corrupt("leaf cell \(index) header runs past the page end", page: number) }
        let isOverflow = tag & 1 == 1
        guard !isOverflow || tag == 1 else { throw .corrupt("leaf cell \(index) has value tag \(tag)", page: number) }
        let valueLength = isOverflow ? OverflowReference.size : Int(tag >> 1)
        guard Int(keyLength) + valueLength <= pageSize - p else {
            throw .corrupt("leaf cell \(index) runs past the page end", page: number)
        }
        return LeafEntry(
            cellStart: start, keyStart: p, keyLength: Int(keyLength), valueStart: p + Int(keyLength),
            valueLength: valueLength, isOverflow: isOverflow)
    }

    /// Every part of branch cell `index`, checked.
    func branchEntry(at index: Int) throws(StorageError) -> BranchEntry {
        let start = try slot(index)
        guard start + 4 <= pageSize else { throw .corrupt("branch cell \(index) runs past the page end", page: number) }
        var p = start + 4
        guard let keyLength = Varint.read(base, &p, limit: pageSize), Int(keyLength) <= pageSize - p else {
            throw .corrupt("branch cell \(index) runs past the page end", page: number)
        }
        let child = u32(at: start)
        guard child != 0 else { throw .corrupt("branch cell \(index) points at page 0", page: number) }
        return BranchEntry(cellStart: start, child: PageNumber(child), keyStart: p, keyLength: Int(keyLength))
    }

    /// Where the key of branch cell `index` is (the search needs no child pointer).
    @inline(__always) func branchKey(at index: Int) throws(StorageError) -> (start: Int, length: Int) {
        var p = try slot(index) + 4
        guard let keyLength = Varint.read(base, &p, limit: pageSize), Int(keyLength) <= pageSize - p else {
            throw .corrupt("branch cell \(index) runs past the page end", page: number)
        }
        return (p, Int(keyLength))
    }

    /// The key of cell `index` of either kind.
    func key(at index: Int) throws(StorageError) -> UnsafeRawBufferPointer {
        if isLeaf {
            let (start, length) = try leafKey(at: index)
            return UnsafeRawBufferPointer(start: base + start, count: length)
        }
        let entry = try branchEntry(at: index)
        return UnsafeRawBufferPointer(start: base + entry.keyStart, count: entry.keyLength)
    }

    /// The encoded size of cell `index`.
    func cellSize(at index: Int) throws(StorageError) -> Int {
        isLeaf ? try leafEntry(at: index).cellSize : try branchEntry(at: index).cellSize
    }

    /// The bytes of cell `index`.
    func cellBytes(at index: Int) throws(StorageError) -> UnsafeRawBufferPointer {
        let start = try slot(index)
        return UnsafeRawBufferPointer(start: base + start, count: try cellSize(at: index))
    }

    /// Child `position` of a branch: cell `position`'s child, or the rightmost child when
    /// `position == count`.
    @inline(__always) func child(at position: Int) throws(StorageError) -> PageNumber {
        guard position <= count else { throw .corrupt("child \(position) does not exist", page: number) }
        if position == count {
            let child = rightmost
            guard child.rawValue != 0 else { throw .corrupt("branch has no rightmost child", page: number) }
            return child
        }
        let start = try slot(position)
        guard start + 4 <= pageSize else { throw .corrupt("branch cell \(position) runs past the page end", page: number) }
        let child = u32(at: start)
        guard child != 0 else { throw .corrupt("branch cell \(position) points at page 0", page: number) }
        return PageNumber(child)
    }

    // MARK: Search (no allocation: keys are compared in page memory)

    /// In a leaf: the first index from `start` on whose key is ≥ `key`, and whether it is equal
    /// (the caller knows the keys before `start` are below `key`).
    @inline(__always)
    func leafSearch(_ key: UnsafeRawBufferPointer, from start: Int = 0) throws(StorageError) -> (index: Int, found: Bool) {
        try leafSearch(SearchKey(key), from: start)
    }

    /// `leafSearch` for a key already in its search form (made once for a whole descent).
    @inline(__always)
    func leafSearch(_ probe: SearchKey, from start: Int = 0) throws(StorageError) -> (index: Int, found: Bool) {
        let cells = count
        let cellStart = contentStart
        var low = start
        var high = cells
        while low < high {
            let mid = (low &+ high) >> 1
            let (start, length) = try searchedLeafKey(at: mid, cells: cells, cellStart: cellStart)
            let c = probe.compare(base + start, length)
            if c > 0 {
                low = mid + 1
            } else if c < 0 {
                high = mid
            } else {
                return (mid, true)
            }
        }
        return (low, false)
    }

    /// In a branch: the position of the child that holds `key` (the first separator > key, or
    /// `count` for the rightmost child). `start`: a position the answer is known to be at or
    /// after (the separators before it are ≤ `key`), where the search begins.
    @inline(__always)
    func childPosition(for key: UnsafeRawBufferPointer, from start: Int = 0) throws(StorageError) -> Int {
        try childPosition(for: SearchKey(key), from: start)
    }

    /// `childPosition` for a key already in its search form (made once for a whole descent).
    @inline(__always)
    func childPosition(for probe: SearchKey, from start: Int = 0) throws(StorageError) -> Int {
        let cells = count
        let cellStart = contentStart
        var low = start
        var high = cells
        while low < high {
            let mid = (low &+ high) >> 1
            let (start, length) = try searchedBranchKey(at: mid, cells: cells, cellStart: cellStart)
            if probe.compare(base + start, length) >= 0 {
                low = mid + 1
            } else {
                high = mid
            }
        }
        return low
    }

    /// `leafKey(at:)` for a search step: the usual cell — its slot in the cell area, a one-byte
    /// key length and a value tag of one or two bytes, the key inside the page — read with the
    /// checks folded into a few compares (`cells`, `cellStart`: the header's count and content
    /// start, read once per search); any other cell goes to `leafKey(at:)`, which gives the same
    /// answer or the same error.
    @inline(__always)
    func searchedLeafKey(at index: Int, cells: Int, cellStart: Int) throws(StorageError) -> (start: Int, length: Int) {
        if UInt(bitPattern: index) < UInt(bitPattern: cells) {
            let offset = Int(u16(at: Node.headerSize &+ Node.slotSize &* index))
            // Three bytes readable: the key length and a tag of up to two bytes.
            if offset >= cellStart, offset &+ 3 <= pageSize {
                let length = Int(base.load(fromByteOffset: offset, as: UInt8.self))
                var p = offset &+ 2
                if base.load(fromByteOffset: offset &+ 1, as: UInt8.self) >= 0x80 {
                    p = base.load(fromByteOffset: offset &+ 2, as: UInt8.self) < 0x80 ? offset &+ 3 : pageSize &+ 1
                }
                if length < 0x80, length <= pageSize &- p { return (p, length) }
            }
        }
        return try leafKey(at: index)
    }

    /// `branchKey(at:)` for a search step: the usual cell — its slot in the cell area, a one-byte
    /// key length, the key inside the page — read with the checks folded into a few compares;
    /// any other cell goes to `branchKey(at:)`, which gives the same answer or the same error.
    @inline(__always)
    func searchedBranchKey(at index: Int, cells: Int, cellStart: Int) throws(StorageError) -> (start: Int, length: Int) {
        if UInt(bitPattern: index) < UInt(bitPattern: cells) {
            let offset = Int(u16(at: Node.headerSize &+ Node.slotSize &* index))
            // The child page number and the key length's byte inside the page.
            let p = offset &+ 5
            if offset >= cellStart, p <= pageSize {
                let length = Int(base.load(fromByteOffset: offset &+ 4, as: UInt8.self))
                if length < 0x80, length <= pageSize &- p { return (p, length) }
            }
        }
        return try branchKey(at: index)
    }

    /// Orders byte strings as unsigned bytes (memcmp), a proper prefix first. Short keys are
    /// compared inline eight bytes at a time (big-endian words order like bytes); long ones by memcmp.
    @inline(__always)
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawPointer, _ bLength: Int) -> Int {
        let n = min(a.count, bLength)
        guard n > 0, let aBase = a.baseAddress else { return a.count - bLength }
        if n > 32 {
            let c = memcmp(aBase, b, n)
            return c != 0 ? Int(c) : a.count - bLength
        }
        var i = 0
        while i + 8 <= n {
            let x = UInt64(bigEndian: aBase.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            let y = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            if x != y { return x < y ? -1 : 1 }
            i += 8
        }
        while i < n {
            let x = aBase.load(fromByteOffset: i, as: UInt8.self)
            let y = b.load(fromByteOffset: i, as: UInt8.self)
            if x != y { return x < y ? -1 : 1 }
            i += 1
        }
        return a.count - bLength
    }

    @inline(__always)
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        guard let bBase = b.baseAddress else { return a.count == 0 ? 0 : 1 }
        return compare(a, bBase, b.count)
    }
}

/// The engine's key order — unsigned bytes, a proper prefix first (`Node.compare`) — for code
/// above the B+tree that compares keys itself (KeelModel's index range bounds, its key sorts), so
/// that nothing there orders keys differently from the tree. Negative, zero or positive.
package enum KeyOrder {
    package static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        Node.compare(a, b)
    }
}

/// A key being searched for, in the form a search compares it in, made once per search (or per
/// descent) instead of read again for every comparison: a key of one to sixteen bytes (an object
/// key has ten, an index probe often as many or fewer) as its first eight bytes in one big-endian
/// word and the bytes after them in another, each left-aligned with zeros after. `compare` orders
/// exactly as `Node.compare` (unsigned bytes, a proper prefix first), against a key of at least
/// eight bytes (nine when this one has more than eight) by words: the other key's first eight
/// bytes, masked to this key's length when it is shorter, decide when they differ; when they are
/// equal and this key has at most eight bytes, it is that key or a proper prefix of it (the
/// lengths decide). Else, against a key of nine to sixteen bytes, the second words (the other
/// key's read as the word ending at its last byte, shifted up past the bytes before 8: zeros after
/// its end, as this key's), then the lengths — equal words with different lengths mean one key is
/// the other with zeros after, so the shorter is a proper prefix and comes first; against a key
/// of more than sixteen bytes, its bytes 8..<16 masked to this key's length: equal, this key is a
/// proper prefix of it. Any other pair of lengths is `Node.compare`'s.
struct SearchKey {
    let bytes: UnsafeRawBufferPointer
    /// The first eight bytes (fewer: all, zeros after) as a big-endian word.
    let head: UInt64
    /// The bits of an eight-byte word that `head` holds bytes of the key in.
    let headMask: UInt64
    /// Bytes 8 onwards as a big-endian word, left-aligned with zeros after (0 unless the key
    /// has nine to sixteen bytes).
    let tail: UInt64
    /// The bits of `tail` that hold bytes of the key.
    let tailMask: UInt64
    /// 9 when this key has nine to sixteen bytes (other keys of nine bytes or more compare by
    /// words), else `Int.max`.
    let pairFrom: Int
    /// 8 when this key has one to eight bytes (other keys of eight bytes or more compare by its
    /// one word), else `Int.max`.
    let shortFrom: Int

    @inline(__always)
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        let n = bytes.count
        if let base = bytes.baseAddress, n > 0, n <= 16 {
            if n >= 8 {
                head = UInt64(bigEndian: base.loadUnaligned(as: UInt64.self))
                headMask = ~0
            } else {
                var word: UInt64 = 0
                withUnsafeMutableBytes(of: &word) { $0.baseAddress!.copyMemory(from: base, byteCount: n) }
                head = UInt64(bigEndian: word)
                headMask = ~0 &<< UInt64((8 &- n) &* 8)
            }
            if n > 8 {
                pairFrom = 9
                shortFrom = .max
                tail = SearchKey.tail(base, n)
                tailMask = ~0 &<< UInt64((16 &- n) &* 8)
            } else {
                pairFrom = .max
                shortFrom = 8
                tail = 0
                tailMask = 0
            }
        } else {
            pairFrom = .max
            shortFrom = .max
            head = 0
            headMask = 0
            tail = 0
            tailMask = 0
        }
    }

    /// Bytes 8..<`length` (9 ≤ `length` ≤ 16) of the key at `p` as a big-endian word,
    /// left-aligned: the word ending at the last byte, shifted up past the bytes before 8.
    @inline(__always)
    static func tail(_ p: UnsafeRawPointer, _ length: Int) -> UInt64 {
        UInt64(bigEndian: p.loadUnaligned(fromByteOffset: length &- 8, as: UInt64.self)) &<< UInt64((16 &- length) &* 8)
    }

    /// Negative, zero or positive as the key is below, equal to or above the `length` bytes at `b`.
    @inline(__always)
    func compare(_ b: UnsafeRawPointer, _ length: Int) -> Int {
        if length >= pairFrom {
            let y = UInt64(bigEndian: b.loadUnaligned(as: UInt64.self))
            if head != y { return head < y ? -1 : 1 }
            if length <= 16 {
                let t = SearchKey.tail(b, length)
                if tail != t { return tail < t ? -1 : 1 }
                return bytes.count &- length
            }
            let t = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) & tailMask
            if tail != t { return tail < t ? -1 : 1 }
            return -1
        }
        if length >= shortFrom {
            let y = UInt64(bigEndian: b.loadUnaligned(as: UInt64.self)) & headMask
            if head != y { return head < y ? -1 : 1 }
            return bytes.count &- length
        }
        return Node.compare(bytes, b, length)
    }
}
