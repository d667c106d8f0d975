// Writing a backup file (layout: BackupArchive.swift): the header and an info block at creation,
// a store block and its trees' entries per `add(store:snapshot:)`, read in key order from a
// pinned snapshot (saves go on meanwhile: the copy never touches the writer), and the end block
// and an fsync at `finish()`. Entries are gathered into blocks of about 1 MiB, each compressed
// with LZ4 when that saves at least an eighth, and checksummed. The file is created exclusively
// and never overwritten; the caller writes it under a temporary name and renames it once
// `finish()` returned (ObjectStore+Maintenance.swift).

/// Writes one backup file. Confined to the thread that made it.
public final class BackupWriter {
    public let path: String
    private let file: any StorageFile
    private let fileSystem: any FileSystem
    private let salt: UInt32
    private let created: UInt64
    /// Bytes written to the file so far (the next block's offset once `output` is flushed).
    private var offset: UInt64 = 0
    /// Blocks written so far: the next block's number.
    private var blocks: UInt64 = 0
    /// Encoded blocks not yet written to the file.
    private var output: [UInt8] = []
    /// Entries gathered for the next entries block.
    private var entries: [UInt8] = []
    private var compressed: [UInt8] = []
    private var summary: BackupSummary
    private var finished = false

    /// Creates the file at `path` (which must not exist) and writes its header and `info`.
    public init(creating path: String, fileSystem: any FileSystem, info: [UInt8]) throws(StorageError) {
        self.path = path
        self.fileSystem = fileSystem
        self.file = try fileSystem.open(path, options: FileOpenOptions(create: true, exclusive: true))
        self.salt = UInt32.random(in: 1...UInt32.max)
        self.created = UInt64(max(0, currentUnixTime()))
        self.summary = BackupSummary(stores: [], trees: 0, entries: 0, blocks: 0, bytes: 0, payloadBytes: 0, info: info, created: created)
        var header: [UInt8] = BackupFormat.magic
        header.appendLE(BackupFormat.version)
        header.appendLE(UInt32(0))
        header.appendLE(created)
        header.appendLE(salt)
        header.appendLE(header.withUnsafeBytes { CRC32C.checksum($0) })
        output = header
        do throws(StorageError) {
            if !info.isEmpty { try block(.info, info) }
        } catch {
            abandon()
            throw error
        }
    }

    /// Appends every tree of the store `snapshot` pins, as the store `name`. Reports the bytes of
    /// entries written against `estimate` (the store's live page bytes, say), and all of them as
    /// done at the end.
    public func add(
        store name: String, snapshot: Snapshot, estimate: UInt64 = 0, progress: ProgressHandler = { _ in }
    ) throws(StorageError) {
        precondition(!finished, "add(store:) after finish()")
        let pageSize = snapshot.pager.pageSize
        var payload: [UInt8] = []
        payload.appendLE(UInt32(pageSize))
        payload.append(contentsOf: Array(name.utf8))
        try block(.store, payload)
        summary.stores.append((name, pageSize))
        let task = "backing up \(name)"
        var written: UInt64 = 0
        var reported: UInt64 = 0
        do {
            try snapshot.read { (txn) throws -> Void in
                let catalog = try txn.catalog
                guard catalog.tree.root.rawValue != 0 else { return }
                let source = txn.readPages
                for tree in try catalog.names(in: source) {
                    guard let root = try catalog.root(of: tree, in: source) else { continue }
                    try block(.tree, Array(tree.utf8))
                    summary.trees += 1
                    var cursor = BTreeCursor(tree: BTree(root: root), source: source)
                    var more = try cursor.seekFirst()
                    while more {
                        written += try cursor.withEntry { (key, value) throws(StorageError) -> UInt64 in try append(key, value) }
                        if written - reported >= 4 << 20 {
                            reported = written
                            progress(WorkProgress(task: task, done: written, total: estimate))
                        }
                        more = try cursor.next()
                    }
                    try flushEntries()
                }
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.io, "reading the snapshot of \(name) failed", cause: error)
        }
        progress(WorkProgress(task: task, done: written, total: written))
    }

    /// Writes the end block, syncs and closes the file. Returns what the backup holds.
    public func finish() throws(StorageError) -> BackupSummary {
        precondition(!finished, "finish() twice")
        var payload: [UInt8] = []
        payload.appendLE(UInt32(summary.stores.count))
        payload.appendLE(UInt32(summary.trees))
        payload.appendLE(summary.entries)
        payload.appendLE(blocks)
        summary.blocks = blocks
        try block(.end, payload)
        try writeOutput()
        try file.sync()
        try file.close()
        finished = true
        summary.bytes = offset
        return summary
    }

    /// Closes and removes the file (after a failure).
    public func abandon() {
        guard !finished else { return }
        finished = true
        try? file.close()
        try? fileSystem.remove(path)
    }

    // MARK: Blocks

    private func append(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(StorageError) -> UInt64 {
        let size = key.count + value.count + 10
        if !entries.isEmpty, entries.count + size > BackupFormat.blockTarget { try flushEntries() }
        entries.appendVarint(key.count)
        entries.append(contentsOf: key)
        entries.appendVarint(value.count)
        entries.append(contentsOf: value)
        summary.entries += 1
        summary.payloadBytes += UInt64(key.count + value.count)
        return UInt64(key.count + value.count)
    }

    private func flushEntries() throws(StorageError) {
        guard !entries.isEmpty else { return }
        try block(.entries, entries)
        entries.removeAll(keepingCapacity: true)
    }

    private func block(_ kind: BackupFormat.Kind, _ payload: [UInt8]) throws(StorageError) {
        // Compressed when LZ4 saves at least an eighth.
        let limit = payload.count - payload.count / 8
        if compressed.count < LZ4.compressBound(payload.count) {
            compressed = [UInt8](repeating: 0, count: LZ4.compressBound(payload.count))
        }
        let packed: Int? = payload.count < 64 ? nil : payload.withUnsafeBytes { source in
            compressed.withUnsafeMutableBytes { LZ4.compress(source, into: $0, limit: limit) }
        }
        var header = [UInt8](repeating: 0, count: BackupFormat.blockHeaderSize)
        header[4] = kind.rawValue
        header[5] = packed == nil ? 0 : BackupFormat.compressedFlag
        header.withUnsafeMutableBytes { h in
            h.storeBytes(of: UInt32(payload.count).littleEndian, toByteOffset: 8, as: UInt32.self)
            h.storeBytes(of: UInt32(packed ?? payload.count).littleEndian, toByteOffset: 12, as: UInt32.self)
        }
        let crc: UInt32 = header.withUnsafeBytes { h in
            if let packed {
                return compressed.withUnsafeBytes { c in
                    BackupFormat.checksum(salt: salt, number: blocks, header: h, stored: UnsafeRawBufferPointer(rebasing: c[..<packed]))
                }
            }
            return payload.withUnsafeBytes { BackupFormat.checksum(salt: salt, number: blocks, header: h, stored: $0) }
        }
        header.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: 0, as: UInt32.self) }
        output.append(contentsOf: header)
        if let packed { output.append(contentsOf: compressed[..<packed]) } else { output.append(contentsOf: payload) }
        blocks += 1
        if output.count >= 4 << 20 { try writeOutput() }
    }

    private func writeOutput() throws(StorageError) {
        guard !output.isEmpty else { return }
        try output.withBytes { (bytes) throws(StorageError) in try file.writeFully(bytes, at: offset) }
        offset += UInt64(output.count)
        output.removeAll(keepingCapacity: true)
    }
}
