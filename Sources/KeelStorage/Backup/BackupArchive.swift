// The backup file: a consistent copy of one or more stores (one snapshot each), as their trees'
// entries in key order, LZ4-compressed in blocks, every block checksummed. What `keelctl backup`
// and keeld's BACKUP write and `keelctl restore` reads (Docs/FileFormat.md, "Backup file").
// Writing: BackupWriter.swift; reading and restoring: BackupReader.swift, Store+Restore.swift.
//
// All integers little-endian. A file is a header, then blocks numbered from 0, the last one the
// end block; nothing follows it.
//
// Header (32 bytes)
// | offset | size | field                                                                  |
// |--------|------|------------------------------------------------------------------------|
// | 0      | 8    | magic `KEELBACK`                                                       |
// | 8      | 4    | format version, 1                                                      |
// | 12     | 4    | flags, 0                                                               |
// | 16     | 8    | creation time, seconds since 1970                                      |
// | 24     | 4    | salt: random per file, mixed into every block checksum                 |
// | 28     | 4    | CRC32C of bytes [0, 28)                                                |
//
// Block (16-byte header, then the stored payload)
// | offset | size | field                                                                  |
// |--------|------|------------------------------------------------------------------------|
// | 0      | 4    | CRC32C of: salt (u32), block number (u64), bytes [4, 16), stored payload |
// | 4      | 1    | kind: 1 info, 2 store, 3 tree, 4 entries, 5 end                        |
// | 5      | 1    | flags: bit 0 = the stored payload is one LZ4 block; other bits 0       |
// | 6      | 2    | 0                                                                      |
// | 8      | 4    | payload length P (after decompression), ≤ 1 GiB + 16                   |
// | 12     | 4    | stored length S (= P when not compressed)                              |
// | 16     | S    | stored payload                                                         |
//
// Payloads
// - info (at most one, first): UTF-8 JSON the writer's caller chose (the object layer: model
//   name and hash, last save, stores).
// - store: u32 page size, then the store's name in UTF-8 (the object layer: its configuration).
//   Starts a store; the tree and entries blocks up to the next store or end block are its own.
// - tree: the tree's name in UTF-8. Starts a tree of the current store (it exists even when no
//   entries follow).
// - entries: one or more entries of the current tree, each: varint key length K, K key bytes,
//   varint value length V, V value bytes (varint: unsigned LEB128, at most 5 bytes). Keys rise
//   strictly through a tree, across blocks. A block holds up to `blockTarget` payload bytes,
//   more only for a single entry larger than that.
// - end: u32 stores, u32 trees, u64 entries, u64 number of blocks before this one.
//
// Validity: the header's magic, version and checksum; every block's checksum (the salt and the
// block number in it make a block from another file, or moved within this one, fail); kinds in
// the order info? (store (tree entries*)*)* end; an LZ4 payload decompresses to exactly P bytes
// (LZ4_decompress_safe); entries parse to exactly the payload's end, keys strictly rising; the
// end block's counts match; the file ends with it. A reader refuses anything else with `CORRUPT`
// naming the block and its offset, before trusting any byte of it.
//
// fsync order (writer): the file is written as `NAME.partial` (by the caller), fsynced, renamed to
// NAME, and the folder fsynced — so NAME exists only complete (I9). A restore writes each store
// as `<name>.keel.restoring`, closes it (its final checkpoint fsyncs it), and renames them all to
// `<name>.keel` only once the end block checked out, then fsyncs the folder.

enum BackupFormat {
    static let magic: [UInt8] = Array("KEELBACK".utf8)
    static let version: UInt32 = 1
    static let headerSize = 32
    static let blockHeaderSize = 16
    /// Entries are gathered into blocks of about this many payload bytes.
    static let blockTarget = 1 << 20
    /// The largest payload a reader accepts: one entry with a value of the engine's maximum.
    static let maximumPayload = (1 << 30) + 16

    enum Kind: UInt8 {
        case info = 1, store = 2, tree = 3, entries = 4, end = 5
    }

    static let compressedFlag: UInt8 = 1

    /// The checksum of a block: its number and the file's salt, its header after the checksum
    /// field, and its stored payload.
    static func checksum(salt: UInt32, number: UInt64, header: UnsafeRawBufferPointer, stored: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32C.checksum(integer: salt, continuing: 0)
        crc = CRC32C.checksum(integer: number, continuing: crc)
        crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: header[4..<blockHeaderSize]), continuing: crc)
        return CRC32C.checksum(stored, continuing: crc)
    }
}

/// What a backup holds, from its end block (and its info block).
public struct BackupSummary: Sendable, Equatable {
    /// The stores, in file order, with their page sizes.
    public var stores: [(name: String, pageSize: Int)]
    public var trees: Int
    public var entries: UInt64
    public var blocks: UInt64
    /// The backup file's size.
    public var bytes: UInt64
    /// The entries' bytes before compression (keys and values).
    public var payloadBytes: UInt64
    /// The info block's bytes (UTF-8 JSON), empty when there is none.
    public var info: [UInt8]
    /// Creation time, seconds since 1970.
    public var created: UInt64

    public static func == (a: BackupSummary, b: BackupSummary) -> Bool {
        a.stores.map(\.name) == b.stores.map(\.name) && a.stores.map(\.pageSize) == b.stores.map(\.pageSize)
            && a.trees == b.trees && a.entries == b.entries && a.blocks == b.blocks && a.bytes == b.bytes
            && a.payloadBytes == b.payloadBytes && a.info == b.info && a.created == b.created
    }
}

// MARK: Little-endian helpers shared by the writer and the reader

extension Array where Element == UInt8 {
    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    /// The cell format's varint (Cell.swift), for values below 2³².
    mutating func appendVarint(_ value: Int) {
        var scratch: UInt64 = 0
        Swift.withUnsafeMutableBytes(of: &scratch) { p in
            let n = Varint.write(UInt32(value), to: p.baseAddress!)  // safe: 8 bytes ≥ the 5 a varint takes
            append(contentsOf: p[..<n])
        }
    }
}

extension UnsafeRawBufferPointer {
    func loadLE<T: FixedWidthInteger>(at offset: Int, as: T.Type) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
