// Reading a backup file (layout and validity rules: BackupArchive.swift). `BackupReader.walk`
// checks every rule as it reads — header, each block's checksum before any byte of it is used,
// LZ4 through LZ4_decompress_safe only, the order of kinds, entries parsing to the payload's end
// with keys strictly rising, the end block's counts, nothing after it — and hands each record to
// a visitor: `BackupArchive.check` (nothing written) or the restore (Store+Restore.swift).

/// Receives a backup's records in file order, each already checked.
protocol BackupVisitor {
    mutating func store(name: String, pageSize: Int) throws(StorageError)
    mutating func tree(name: String) throws(StorageError)
    /// Entries of the current tree, in key order.
    mutating func entries(_ entries: [([UInt8], [UInt8])]) throws(StorageError)
    /// The end block checked out; nothing follows it.
    mutating func end() throws(StorageError)
}

struct BackupReader {
    let path: String
    private let file: any StorageFile
    private let size: UInt64
    private let salt: UInt32
    let created: UInt64
    private var offset = UInt64(BackupFormat.headerSize)
    private var number: UInt64 = 0

    /// Opens `path` and checks its header.
    init(path: String, fileSystem: any FileSystem) throws(StorageError) {
        self.path = path
        let file = try fileSystem.open(path, options: .readOnly)
        self.file = file
        do throws(StorageError) {
            (size, salt, created) = try Self.readHeader(file, path: path)
        } catch {
            try? file.close()
            throw error
        }
    }

    /// Checks the header; returns the file's size, salt and creation time.
    private static func readHeader(_ file: any StorageFile, path: String) throws(StorageError) -> (UInt64, UInt32, UInt64) {
        let size = try file.size()
        guard size >= UInt64(BackupFormat.headerSize) else {
            throw StorageError(.notAStore, "\(path): not a Keel backup: \(size) bytes, shorter than the 32-byte header", path: path)
        }
        var header = [UInt8](repeating: 0, count: BackupFormat.headerSize)
        try header.withMutableBytes { (b) throws(StorageError) in try file.readFully(into: b, at: 0) }
        guard Array(header[0..<8]) == BackupFormat.magic else {
            throw StorageError(.notAStore, "\(path): not a Keel backup (no KEELBACK magic)", path: path)
        }
        let (version, crc, stored, salt, created) = header.withUnsafeBytes { h in
            (h.loadLE(at: 8, as: UInt32.self), CRC32C.checksum(UnsafeRawBufferPointer(rebasing: h[0..<28])),
             h.loadLE(at: 28, as: UInt32.self), h.loadLE(at: 24, as: UInt32.self), h.loadLE(at: 16, as: UInt64.self))
        }
        guard version == BackupFormat.version else {
            throw StorageError(.unsupportedVersion, "\(path): backup format version \(version); this build reads version \(BackupFormat.version)", path: path)
        }
        guard crc == stored else { throw StorageError(.corrupt, "\(path): the backup's header fails its checksum", path: path) }
        return (size, salt, created)
    }

    func close() { try? file.close() }

    /// Bytes of the file read so far, and its size.
    var position: (done: UInt64, total: UInt64) { (offset, size) }

    /// The next block, checked and decompressed; nil at the end of the file.
    mutating func next() throws(StorageError) -> (kind: BackupFormat.Kind, payload: [UInt8])? {
        guard offset < size else { return nil }
        let at = offset
        func corrupt(_ message: String) -> StorageError {
            StorageError(.corrupt, "\(path): block \(number) at byte \(at): \(message)", path: path)
        }
        guard size - offset >= UInt64(BackupFormat.blockHeaderSize) else { throw corrupt("the file ends inside the block header") }
        var header = [UInt8](repeating: 0, count: BackupFormat.blockHeaderSize)
        try header.withMutableBytes { (b) throws(StorageError) in try file.readFully(into: b, at: offset) }
        let (crc, length, storedLength) = header.withUnsafeBytes { h in
            (h.loadLE(at: 0, as: UInt32.self), Int(h.loadLE(at: 8, as: UInt32.self)), Int(h.loadLE(at: 12, as: UInt32.self)))
        }
        guard storedLength <= BackupFormat.maximumPayload, length <= BackupFormat.maximumPayload else {
            throw corrupt("a payload of \(max(length, storedLength)) bytes is beyond the format's limit")
        }
        guard UInt64(storedLength) <= size - offset - UInt64(BackupFormat.blockHeaderSize) else {
            throw corrupt("the file ends inside the block (\(storedLength) bytes announced)")
        }
        var stored = [UInt8](repeating: 0, count: storedLength)
        try stored.withMutableBytes { (b) throws(StorageError) in
            try file.readFully(into: b, at: offset + UInt64(BackupFormat.blockHeaderSize))
        }
        let computed = header.withUnsafeBytes { h in
            stored.withUnsafeBytes { BackupFormat.checksum(salt: salt, number: number, header: h, stored: $0) }
        }
        guard computed == crc else { throw corrupt("checksum mismatch") }
        guard let kind = BackupFormat.Kind(rawValue: header[4]) else { throw corrupt("unknown block kind \(header[4])") }
        guard header[5] & ~BackupFormat.compressedFlag == 0, header[6] == 0, header[7] == 0 else {
            throw corrupt("reserved header bits are set")
        }
        var payload = stored
        if header[5] & BackupFormat.compressedFlag != 0 {
            payload = [UInt8](repeating: 0, count: length)
            do throws(StorageError) {
                try stored.withBytes { (s) throws(StorageError) in
                    try payload.withMutableBytes { (d) throws(StorageError) in try LZ4.decompress(s, into: d) }
                }
            } catch {
                throw corrupt(error.message)
            }
        } else if length != storedLength {
            throw corrupt("an uncompressed block's lengths differ (\(length), \(storedLength))")
        }
        offset += UInt64(BackupFormat.blockHeaderSize + storedLength)
        number += 1
        return (kind, payload)
    }

    /// Reads the whole file, checking every rule, and hands each record to `visitor`. Returns
    /// the summary of the end block.
    mutating func walk(_ visitor: inout some BackupVisitor, progress: ProgressHandler) throws(StorageError) -> BackupSummary {
        var summary = BackupSummary(stores: [], trees: 0, entries: 0, blocks: 0, bytes: size, payloadBytes: 0, info: [], created: created)
        var inTree = false
        var lastKey: [UInt8]? = nil
        var reported: UInt64 = 0
        let task = "reading \(path)"
        while true {
            let at = offset
            let blockNumber = number
            guard let (kind, payload) = try next() else {
                throw StorageError(.corrupt, "\(path): the backup ends at byte \(at) without its end block (cut short?)", path: path)
            }
            func corrupt(_ message: String) -> StorageError {
                StorageError(.corrupt, "\(path): block \(blockNumber) at byte \(at): \(message)", path: path)
            }
            switch kind {
            case .info:
                guard blockNumber == 0 else { throw corrupt("an info block may only come first") }
                summary.info = payload
            case .store:
                guard payload.count > 4, let name = String(validating: payload[4...], as: UTF8.self) else {
                    throw corrupt("a store block holds a page size and a name")
                }
                let pageSize = payload.withUnsafeBytes { Int($0.loadLE(at: 0, as: UInt32.self)) }
                guard pageSize >= 4096, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
                    throw corrupt("page size \(pageSize) is not a power of two from 4096 to 65536")
                }
                guard !summary.stores.contains(where: { $0.name == name }) else { throw corrupt("store \(name) appears twice") }
                summary.stores.append((name, pageSize))
                inTree = false
                try visitor.store(name: name, pageSize: pageSize)
            case .tree:
                guard !summary.stores.isEmpty else { throw corrupt("a tree block before any store block") }
                guard let name = String(validating: payload, as: UTF8.self) else { throw corrupt("a tree name is not UTF-8") }
                summary.trees += 1
                inTree = true
                lastKey = nil
                try visitor.tree(name: name)
            case .entries:
                guard inTree else { throw corrupt("an entries block outside a tree") }
                let parsed = try Self.parseEntries(payload, after: &lastKey, corrupt)
                summary.entries += UInt64(parsed.count)
                for (k, v) in parsed { summary.payloadBytes += UInt64(k.count + v.count) }
                try visitor.entries(parsed)
            case .end:
                guard payload.count == 24 else { throw corrupt("an end block holds 24 bytes, not \(payload.count)") }
                let (stores, trees, entries, blocks) = payload.withUnsafeBytes { p in
                    (Int(p.loadLE(at: 0, as: UInt32.self)), Int(p.loadLE(at: 4, as: UInt32.self)),
                     p.loadLE(at: 8, as: UInt64.self), p.loadLE(at: 16, as: UInt64.self))
                }
                guard stores == summary.stores.count, trees == summary.trees, entries == summary.entries, blocks == blockNumber else {
                    throw corrupt(
                        "the end block counts \(stores) stores, \(trees) trees, \(entries) entries and \(blocks) blocks; the file holds \(summary.stores.count), \(summary.trees), \(summary.entries) and \(blockNumber)")
                }
                guard offset == size else { throw corrupt("\(size - offset) bytes follow the end block") }
                summary.blocks = blockNumber
                try visitor.end()
                progress(WorkProgress(task: task, done: size, total: size))
                return summary
            }
            if offset - reported >= 4 << 20 {
                reported = offset
                progress(WorkProgress(task: task, done: offset, total: size))
            }
        }
    }

    /// The entries of one block; keys must rise strictly from `lastKey` on.
    private static func parseEntries(
        _ payload: [UInt8], after lastKey: inout [UInt8]?, _ corrupt: (String) -> StorageError
    ) throws(StorageError) -> [([UInt8], [UInt8])] {
        var out: [([UInt8], [UInt8])] = []
        var position = 0
        while position < payload.count {
            let entry: ([UInt8], [UInt8])? = payload.withUnsafeBytes { p -> ([UInt8], [UInt8])? in
                guard let base = p.baseAddress,
                    let keyLength = Varint.read(base, &position, limit: p.count).map(Int.init), keyLength <= p.count - position
                else { return nil }
                let key = Array(p[position..<position + keyLength])
                position += keyLength
                guard let valueLength = Varint.read(base, &position, limit: p.count).map(Int.init), valueLength <= p.count - position else {
                    return nil
                }
                let value = Array(p[position..<position + valueLength])
                position += valueLength
                return (key, value)
            }
            guard let entry else { throw corrupt("entry \(out.count) runs past the block's end") }
            if let last = lastKey, !last.lexicographicallyPrecedes(entry.0) {
                throw corrupt("entry \(out.count): keys do not rise")
            }
            lastKey = entry.0
            out.append(entry)
        }
        guard !out.isEmpty else { throw corrupt("an entries block holds no entry") }
        return out
    }
}

/// Checking a backup without restoring it.
public enum BackupArchive {
    /// Reads `path` whole and checks every rule of the format (BackupArchive.swift); returns what
    /// it holds, or throws `CORRUPT` (`NOT_A_STORE`, `UNSUPPORTED_VERSION`) naming the first fault.
    public static func check(
        path: String, fileSystem: any FileSystem = PosixFileSystem(), progress: ProgressHandler = { _ in }
    ) throws(StorageError) -> BackupSummary {
        struct Nothing: BackupVisitor {
            mutating func store(name: String, pageSize: Int) {}
            mutating func tree(name: String) {}
            mutating func entries(_ entries: [([UInt8], [UInt8])]) {}
            mutating func end() {}
        }
        var reader = try BackupReader(path: path, fileSystem: fileSystem)
        defer { reader.close() }
        var visitor = Nothing()
        return try reader.walk(&visitor, progress: progress)
    }
}
