// One page in memory, and the header every page starts with.
//
// Common page header (16 bytes, little-endian), at the start of every page except free pages:
//
// | offset | size | field                                                                  |
// |--------|------|------------------------------------------------------------------------|
// | 0      | 4    | checksum: CRC32C over (page number as u32 LE) ++ bytes [4, pageSize)   |
// | 4      | 1    | page type (PageType)                                                   |
// | 5      | 1    | flags, type-specific                                                   |
// | 6      | 2    | type-specific (B+tree: cell count)                                     |
// | 8      | 8    | transaction ID that last wrote the page                                |
//
// Validity: a page read from disk (page file or log) is trusted only if its checksum matches,
// which also proves it sits at the right page number (Docs/Invariants.md, I3). Checksums are
// computed when the page is written out (a commit's pages by the log as it appends them, just
// before each frame), never by the code that edits the page.

import CKeelSupport

/// What a page holds.
public enum PageType: UInt8, Sendable, CustomStringConvertible {
    /// Never written, or free without being a free-list trunk.
    case empty = 0
    /// Page 0: the file header.
    case meta = 1
    case branch = 2
    case leaf = 3
    /// A piece of a value too large to keep in its leaf.
    case overflow = 4
    /// A page of the free list: the numbers of free pages.
    case freeTrunk = 5
    public var description: String {
        switch self {
        case .empty: "empty"
        case .meta: "meta"
        case .branch: "branch"
        case .leaf: "leaf"
        case .overflow: "overflow"
        case .freeTrunk: "free-list trunk"
        }
    }
}

/// A page-sized, page-aligned block of memory.
///
/// Ownership rule (Docs/Concurrency.md): a buffer in the shared page cache is immutable; the
/// writer edits only buffers it owns in its transaction's dirty set (copied on first write).
/// That rule is what makes the `@unchecked Sendable` below safe: a buffer shared between threads
/// is never written again.
public final class PageBuffer: @unchecked Sendable {
    public static let headerSize = 16

    public let pointer: UnsafeMutableRawPointer
    public let size: Int

    public init(size: Int) {
        precondition(size >= 512 && size & (size - 1) == 0, "page size must be a power of two")
        pointer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: Self.alignment)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        self.size = size
    }

    /// A buffer whose bytes the caller overwrites completely before anyone reads them (a page
    /// read from the file: a short read throws, so no uninitialised byte escapes).
    init(uninitializedSize size: Int) {
        precondition(size >= 512 && size & (size - 1) == 0, "page size must be a power of two")
        pointer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: Self.alignment)
        self.size = size
    }

    /// Cache-line alignment: every field access is in range of one page, and no I/O path needs
    /// more (no O_DIRECT). A 4096-byte alignment made each miss a costly aligned allocation.
    static let alignment = 64

    /// A copy of another buffer's bytes.
    public init(copying other: PageBuffer) {
        pointer = UnsafeMutableRawPointer.allocate(byteCount: other.size, alignment: Self.alignment)
        pointer.copyMemory(from: other.pointer, byteCount: other.size)
        size = other.size
    }

    deinit { pointer.deallocate() }

    @inlinable public var bytes: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(start: pointer, count: size) }
    @inlinable public var readOnlyBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: pointer, count: size) }

    // MARK: Little-endian field access

    @inlinable public func load<T: FixedWidthInteger>(_: T.Type = T.self, at offset: Int) -> T {
        assert(offset >= 0 && offset + MemoryLayout<T>.size <= size)
        return T(littleEndian: pointer.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    @inlinable public func store<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        assert(offset >= 0 && offset + MemoryLayout<T>.size <= size)
        pointer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }

    public func zero() { pointer.initializeMemory(as: UInt8.self, repeating: 0, count: size) }

    // MARK: Common header

    public var storedChecksum: UInt32 {
        get { load(UInt32.self, at: 0) }
        set { store(newValue, at: 0) }
    }
    /// The page type; `nil` when the byte is not a known type (corruption).
    public var pageType: PageType? {
        get { PageType(rawValue: pointer.load(fromByteOffset: 4, as: UInt8.self)) }
        set { pointer.storeBytes(of: (newValue ?? .empty).rawValue, toByteOffset: 4, as: UInt8.self) }
    }
    public var flags: UInt8 {
        get { pointer.load(fromByteOffset: 5, as: UInt8.self) }
        set { pointer.storeBytes(of: newValue, toByteOffset: 5, as: UInt8.self) }
    }
    public var transactionID: TransactionID {
        get { TransactionID(load(UInt64.self, at: 8)) }
        set { store(newValue.rawValue, at: 8) }
    }

    /// The checksum this page should carry at page number `number`.
    public func computeChecksum(for number: PageNumber) -> UInt32 {
        var crc = CRC32C.checksum(integer: number.rawValue, continuing: 0)
        crc = keel_crc32c(crc, pointer + 4, size - 4)
        return crc
    }

    /// Stamps the checksum for page number `number` (done by the pager just before writing out).
    public func seal(as number: PageNumber) { storedChecksum = computeChecksum(for: number) }

    /// Whether the stored checksum matches page number `number`.
    public func isValid(as number: PageNumber) -> Bool { storedChecksum == computeChecksum(for: number) }
}
