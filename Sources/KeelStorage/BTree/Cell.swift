// B+tree cells: the records the slots of a node page point at (Docs/FileFormat.md, "B+tree pages").
//
// Leaf cell (one entry):
//
// | size   | field                                                                               |
// |--------|-------------------------------------------------------------------------------------|
// | varint | key length K, 0 ≤ K ≤ maxKeySize                                                    |
// | varint | value tag T: T = L << 1 for an inline value of L bytes; T = 1 for an overflow value |
// | K      | key bytes                                                                           |
// | L      | value bytes (inline value), or when T = 1 the 13-byte overflow reference:           |
// |   4    |   value length V (uncompressed), V ≤ 1 GiB                                          |
// |   4    |   stored length S: bytes held by the chain (the LZ4 block length when compressed)    |
// |   4    |   first overflow page                                                              |
// |   1    |   flags: bit 0 = the stored bytes are one LZ4 block; bits 1–7 are 0                 |
//
// Branch cell (one separator and the child left of it):
//
// | size   | field                                                                               |
// |--------|-------------------------------------------------------------------------------------|
// | 4      | child page number (≠ 0): holds every key k with previous separator ≤ k < this key  |
// | varint | key length K, 0 ≤ K ≤ maxKeySize                                                    |
// | K      | separator key bytes                                                                 |
//
// varint: unsigned LEB128 (7 bits per byte, low groups first, high bit = more follows), at most
// 5 bytes, value < 2^32.
//
// Validity: a cell lies wholly inside [cell content start, page size) of its page; every length
// is checked against the page end before a byte of the cell is used. No cell is larger than
// `BTreeLimits.maxCellSize` (so at least four cells always fit a page and a split always works).
// An inline value whose cell would exceed that size is stored in an overflow chain instead.

/// Unsigned LEB128 integers of at most 32 bits.
enum Varint {
    @inline(__always) static func size(_ value: UInt32) -> Int {
        value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x20_0000 ? 3 : value < 0x1000_0000 ? 4 : 5
    }

    /// Writes `value` at `p`; returns the number of bytes written.
    @inline(__always) @discardableResult
    static func write(_ value: UInt32, to p: UnsafeMutableRawPointer) -> Int {
        var v = value
        var n = 0
        while v >= 0x80 {
            p.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: n, as: UInt8.self)
            v >>= 7
            n += 1
        }
        p.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: n, as: UInt8.self)
        return n + 1
    }

    /// Reads a varint at `offset`, advancing it; nil when it runs past `limit` or is over-long.
    @inline(__always)
    static func read(_ p: UnsafeRawPointer, _ offset: inout Int, limit: Int) -> UInt32? {
        guard offset < limit else { return nil }
        let first = p.load(fromByteOffset: offset, as: UInt8.self)
        offset += 1
        if first < 0x80 { return UInt32(first) }
        var value = UInt32(first & 0x7F)
        var shift: UInt32 = 7
        while true {
            guard offset < limit, shift <= 28 else { return nil }
            let byte = p.load(fromByteOffset: offset, as: UInt8.self)
            offset += 1
            if shift == 28 && byte > 0x0F { return nil }
            value |= UInt32(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }
}

/// Where a value that lives outside its leaf is kept (the 13-byte reference of a leaf cell).
struct OverflowReference: Equatable {
    static let size = 13
    /// The value's length as the caller sees it.
    var valueLength: UInt32
    /// The bytes the chain holds: `valueLength`, or the LZ4 block's length when compressed.
    var storedLength: UInt32
    var firstPage: PageNumber
    var isCompressed: Bool

    func write(to p: UnsafeMutableRawPointer) {
        p.storeBytes(of: valueLength.littleEndian, toByteOffset: 0, as: UInt32.self)
        p.storeBytes(of: storedLength.littleEndian, toByteOffset: 4, as: UInt32.self)
        p.storeBytes(of: firstPage.rawValue.littleEndian, toByteOffset: 8, as: UInt32.self)
        p.storeBytes(of: isCompressed ? 1 : 0, toByteOffset: 12, as: UInt8.self)
    }

    /// Reads a reference the caller has bounds-checked (13 bytes at `p`).
    static func read(_ p: UnsafeRawPointer, page: PageNumber) throws(StorageError) -> OverflowReference {
        let valueLength = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        let stored = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        let first = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        let flags = p.load(fromByteOffset: 12, as: UInt8.self)
        guard flags & ~1 == 0, first != 0, stored > 0, valueLength <= BTreeLimits.maxValueSize,
            flags == 1 ? stored < valueLength : stored == valueLength
        else {
            throw .corrupt(
                "bad overflow reference (length \(valueLength), stored \(stored), first page \(first), flags \(flags))",
                page: page)
        }
        return OverflowReference(
            valueLength: valueLength, storedLength: stored, firstPage: PageNumber(first), isCompressed: flags == 1)
    }
}

/// The position of one leaf entry inside its page, every offset checked against the page end.
struct LeafEntry {
    var cellStart: Int
    var keyStart: Int
    var keyLength: Int
    /// Start of the inline value, or of the overflow reference.
    var valueStart: Int
    /// Length of the inline value, or `OverflowReference.size`.
    var valueLength: Int
    var isOverflow: Bool
    var cellEnd: Int { valueStart + valueLength }
    var cellSize: Int { cellEnd - cellStart }
}

/// The position of one branch cell inside its page.
struct BranchEntry {
    var cellStart: Int
    var child: PageNumber
    var keyStart: Int
    var keyLength: Int
    var cellEnd: Int { keyStart + keyLength }
    var cellSize: Int { cellEnd - cellStart }
}

/// A cell about to be written into a page; knows its encoded size and how to write itself.
/// Its pointers must stay valid for as long as the value is used.
enum PendingCell {
    case leaf(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
    case leafOverflow(key: UnsafeRawBufferPointer, reference: OverflowReference)
    case branch(child: PageNumber, key: UnsafeRawBufferPointer)
    /// An already encoded cell, copied byte for byte.
    case raw(UnsafeRawBufferPointer)

    static func leafSize(keyLength: Int, valueLength: Int) -> Int {
        Varint.size(UInt32(keyLength)) + Varint.size(UInt32(valueLength) << 1) + keyLength + valueLength
    }
    static func overflowLeafSize(keyLength: Int) -> Int {
        Varint.size(UInt32(keyLength)) + 1 + keyLength + OverflowReference.size
    }
    static func branchSize(keyLength: Int) -> Int { 4 + Varint.size(UInt32(keyLength)) + keyLength }

    var size: Int {
        switch self {
        case .leaf(let key, let value): PendingCell.leafSize(keyLength: key.count, valueLength: value.count)
        case .leafOverflow(let key, _): PendingCell.overflowLeafSize(keyLength: key.count)
        case .branch(_, let key): PendingCell.branchSize(keyLength: key.count)
        case .raw(let bytes): bytes.count
        }
    }

    func write(to p: UnsafeMutableRawPointer) {
        switch self {
        case .leaf(let key, let value):
            var n = Varint.write(UInt32(key.count), to: p)
            n += Varint.write(UInt32(value.count) << 1, to: p + n)
            PendingCell.copy(key, to: p + n)
            PendingCell.copy(value, to: p + n + key.count)
        case .leafOverflow(let key, let reference):
            var n = Varint.write(UInt32(key.count), to: p)
            n += Varint.write(1, to: p + n)
            PendingCell.copy(key, to: p + n)
            reference.write(to: p + n + key.count)
        case .branch(let child, let key):
            p.storeBytes(of: child.rawValue.littleEndian, as: UInt32.self)
            let n = 4 + Varint.write(UInt32(key.count), to: p + 4)
            PendingCell.copy(key, to: p + n)
        case .raw(let bytes):
            PendingCell.copy(bytes, to: p)
        }
    }

    @inline(__always) private static func copy(_ bytes: UnsafeRawBufferPointer, to p: UnsafeMutableRawPointer) {
        if let base = bytes.baseAddress, bytes.count > 0 { p.copyMemory(from: base, byteCount: bytes.count) }
    }
}
