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

/// A page-sized block of memory, 16-byte aligned, held in one object with its size.
///
/// The bytes are the tail allocation of a `ManagedBuffer` object: one allocation per page, and
/// the page header sits right after the object's refcount and size, so a retain's cache miss
/// brings the page header in the same or the adjacent line. The elements are `SIMD16<UInt8>`, so
/// the tail starts 16-byte aligned (the element type's alignment, which `ManagedBuffer`
/// honours); no access needs more: every field is read with `loadUnaligned` or byte-wise, and no
/// I/O path uses O_DIRECT. `PageBuffer` is a struct holding that one reference (`ManagedBuffer`'s
/// conformance to `Sendable` is unavailable, so a subclass cannot be `Sendable`): copying it
/// shares the buffer, `===` compares identity. Create one with `zeroed(size:)`,
/// `uninitialized(size:)` or `copy(of:)`.
///
/// Ownership rule (Docs/Concurrency.md): a buffer in the shared page cache is immutable; the
/// writer edits only buffers it owns in its transaction's dirty set (copied on first write).
/// That rule is what makes the `@unchecked Sendable` below safe: a buffer shared between threads
/// is never written again.
public struct PageBuffer: @unchecked Sendable {
    public static let headerSize = 16

    /// The object: header = the page size, elements = the page's bytes.
    @usableFromInline final class Storage: ManagedBuffer<Int, SIMD16<UInt8>> {}

    /// The one reference (a `var` only so the page table can ask `isKnownUniquelyReferenced`).
    @usableFromInline var storage: Storage

    private init(storage: Storage) { self.storage = storage }

    /// The page's bytes: the object's tail, valid as long as a copy of this value lives.
    @inlinable public var pointer: UnsafeMutableRawPointer {
        storage.withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) }
    }
    /// The page size in bytes (the `ManagedBuffer` header), read through its pointer: the
    /// `header` property is a class's stored `var`, so each read of it paid a runtime exclusivity
    /// check (`swift_beginAccess`, ~150 instructions with its access-set bookkeeping) — every
    /// `Node` made from a page reads it. The header is written once, when the object is made,
    /// and never again, so no access can conflict.
    @inlinable public var size: Int { storage.withUnsafeMutablePointerToHeader { $0.pointee } }

    /// A zeroed buffer.
    public static func zeroed(size: Int) -> PageBuffer {
        let buffer = uninitialized(size: size)
        buffer.pointer.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        return buffer
    }

    /// A buffer whose bytes the caller overwrites completely before anyone reads them (a page
    /// read from the file: a short read throws, so no uninitialised byte escapes). The elements
    /// are trivial, so the object frees its tail with itself, with nothing to deinitialise.
    static func uninitialized(size: Int) -> PageBuffer {
        precondition(size >= 512 && size & (size - 1) == 0, "page size must be a power of two")
        let object = Storage.create(minimumCapacity: size / MemoryLayout<SIMD16<UInt8>>.stride) { _ in size }
        return PageBuffer(storage: unsafeDowncast(object, to: Storage.self))
    }

    /// A copy of another buffer's bytes.
    public static func copy(of other: PageBuffer) -> PageBuffer {
        let buffer = uninitialized(size: other.size)
        buffer.pointer.copyMemory(from: other.pointer, byteCount: other.size)
        return buffer
    }

    /// Whether nobody else holds this buffer (the page table's eviction check, I16).
    mutating func isKnownUniquelyReferenced() -> Bool { Swift.isKnownUniquelyReferenced(&storage) }

    /// Asks for the object's first cache line, where its reference count is, for writing.
    func prefetch() { prefetchObject(storage) }

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
        nonmutating set { store(newValue, at: 0) }
    }
    /// The page type; `nil` when the byte is not a known type (corruption).
    public var pageType: PageType? {
        get { PageType(rawValue: pointer.load(fromByteOffset: 4, as: UInt8.self)) }
        nonmutating set { pointer.storeBytes(of: (newValue ?? .empty).rawValue, toByteOffset: 4, as: UInt8.self) }
    }
    public var flags: UInt8 {
        get { pointer.load(fromByteOffset: 5, as: UInt8.self) }
        nonmutating set { pointer.storeBytes(of: newValue, toByteOffset: 5, as: UInt8.self) }
    }
    public var transactionID: TransactionID {
        get { TransactionID(load(UInt64.self, at: 8)) }
        nonmutating set { store(newValue.rawValue, at: 8) }
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

/// Whether two values hold the same buffer (not the same bytes).
public func === (lhs: PageBuffer?, rhs: PageBuffer?) -> Bool { lhs?.storage === rhs?.storage }
/// Whether two values hold different buffers.
public func !== (lhs: PageBuffer?, rhs: PageBuffer?) -> Bool { !(lhs === rhs) }
