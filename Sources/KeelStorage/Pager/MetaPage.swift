// Page 0 of the page file: the store's header. It travels through the log like any other page,
// so a checkpoint torn while writing it is repaired by replaying the log.
//
// | offset | size | field                                                        |
// |--------|------|--------------------------------------------------------------|
// | 0      | 16   | common page header (checksum, type = meta, txn ID)           |
// | 16     | 8    | magic "KEELSTOR"                                             |
// | 24     | 4    | format version (1)                                           |
// | 28     | 4    | page size in bytes (power of two, 4096 ... 65536)            |
// | 32     | 4    | page count: pages in use or free, including page 0           |
// | 36     | 4    | first free-list trunk page (0: the free list is empty)       |
// | 40     | 4    | free page count (trunk pages included)                       |
// | 44     | 4    | catalog root page (0 until the first transaction creates it) |
// | 48     | 8    | creation time, seconds since 1970 (informational)            |
// | 56     | 8    | store identity: random ≠ 0, fixed at creation; 0 — not known |
// | 64     | ...  | zero                                                         |
//
// Validity: magic, version and page size are in the first 512-byte sector, which every version
// of page 0 shares, so a torn page 0 still names its page size; the checksum then decides whether
// page 0 itself can be trusted (I3). Open refuses anything else without writing (I15).
//
// Store identity: ties the page file to its log, whose header carries the same value (I17,
// LogFormat.swift). Drawn at random when the store is created; compaction gives the new page file
// the old one's. A page 0 written before this field holds 0 there (not known): the first
// checkpoint of such a store commits a page 0 with a fresh identity through the log like any other
// change, then copies it into the page file before the log reset writes it into the header. Once
// set it never changes, so the sector-0 copy in a torn page 0 still names it (`identify`).

/// The fields of page 0.
struct MetaPage: Equatable {
    static let magic: [UInt8] = Array("KEELSTOR".utf8)
    static let formatVersion: UInt32 = 1
    static let minimumPageSize = 4096
    static let maximumPageSize = 65536

    var pageSize: UInt32
    var pageCount: UInt32
    var freeListHead: PageNumber
    var freePageCount: UInt32
    var catalogRoot: PageNumber
    var createdAt: UInt64
    /// Ties the page file to its log (the table above); 0 when not known.
    var storeIdentity: UInt64 = 0

    /// A fresh store identity: random, never 0.
    static func newStoreIdentity() -> UInt64 { UInt64.random(in: 1...UInt64.max) }

    func write(into page: PageBuffer) {
        page.pageType = .meta
        for (i, byte) in MetaPage.magic.enumerated() { page.pointer.storeBytes(of: byte, toByteOffset: 16 + i, as: UInt8.self) }
        page.store(MetaPage.formatVersion, at: 24)
        page.store(pageSize, at: 28)
        page.store(pageCount, at: 32)
        page.store(freeListHead.rawValue, at: 36)
        page.store(freePageCount, at: 40)
        page.store(catalogRoot.rawValue, at: 44)
        page.store(createdAt, at: 48)
        page.store(storeIdentity, at: 56)
    }

    /// Reads the fields of a checksum-verified page 0.
    static func read(from page: PageBuffer) throws(StorageError) -> MetaPage {
        guard page.pageType == .meta else { throw .corrupt("page 0 is not a meta page", page: .meta) }
        let meta = MetaPage(
            pageSize: page.load(at: 28), pageCount: page.load(at: 32),
            freeListHead: PageNumber(page.load(UInt32.self, at: 36)), freePageCount: page.load(at: 40),
            catalogRoot: PageNumber(page.load(UInt32.self, at: 44)), createdAt: page.load(at: 48),
            storeIdentity: page.load(at: 56))
        // catalogRoot 0: a new store whose first transaction has not yet created the catalog.
        guard Int(meta.pageSize) == page.size, meta.pageCount >= 1, meta.catalogRoot.rawValue < meta.pageCount, meta.freeListHead.rawValue < meta.pageCount,
            meta.freePageCount < meta.pageCount
        else { throw .corrupt("page 0 holds impossible values", page: .meta) }
        return meta
    }

    /// What the first bytes of a file say about it, before the page size is known.
    enum Identification {
        /// A Keel store of this page size; `identity`: the store identity its first sector holds
        /// (checksum not verified: sector 0 of every version of page 0 names the same one, or 0).
        case store(pageSize: Int, identity: UInt64)
        case notAStore(String)
        case unsupportedVersion(UInt32)
    }

    static func identify(_ prefix: UnsafeRawBufferPointer) -> Identification {
        guard prefix.count >= 32 else { return .notAStore("the file is too short to be a Keel store (\(prefix.count) bytes)") }
        guard prefix[16..<24].elementsEqual(magic) else { return .notAStore("the file is not a Keel store (no KEELSTOR magic)") }
        let version = prefix.loadUnaligned(fromByteOffset: 24, as: UInt32.self).littleEndian
        guard version == formatVersion else { return .unsupportedVersion(version) }
        let size = Int(prefix.loadUnaligned(fromByteOffset: 28, as: UInt32.self).littleEndian)
        guard isValidPageSize(size) else { return .notAStore("the header names an impossible page size \(size)") }
        // A file too short to hold it is refused as truncated by the open.
        let identity = prefix.count >= 64 ? prefix.loadUnaligned(fromByteOffset: 56, as: UInt64.self).littleEndian : 0
        return .store(pageSize: size, identity: identity)
    }

    static func isValidPageSize(_ size: Int) -> Bool {
        size >= minimumPageSize && size <= maximumPageSize && size & (size - 1) == 0
    }
}
