/// Figures about a store, for `keelctl stats` and the daemon's STATS command.
public struct StoreStatistics: Sendable, Equatable, Codable {
    public var pageSize: Int
    /// Pages in the store (page 0 included), and how many of them are free.
    public var pageCount: Int
    public var freePageCount: Int
    /// Bytes of the page file and of the log file on disk.
    public var fileBytes: UInt64
    public var logBytes: UInt64
    /// Bytes of frames in the log now (what the next checkpoint copies).
    public var logFrameBytes: UInt64
    public var cachedPages: Int
    public var cacheHits: UInt64
    public var cacheMisses: UInt64
    public var cacheEvictions: UInt64
    public var checkpoints: UInt64
    public var logSyncs: UInt64
    public var readersCutOff: UInt64
    public var lastTransaction: UInt64
    /// Why the store refuses writes, when it does (read-only or fail-stopped).
    public var writeRefusal: String?
}

extension Store {
    /// Current figures. Cheap: no tree is walked.
    public func statistics() throws(StorageError) -> StoreStatistics {
        let pager = try pager()
        let (meta, last) = pager.writer.withLock { ($0.meta, $0.lastTransaction) }
        let (cached, hits, misses, evictions, cutOff) = pager.state.withLock { s in
            (s.table.cachedPageCount, s.table.hits, s.table.misses, s.table.evictions, s.revokedReaderCount)
        }
        return StoreStatistics(
            pageSize: pager.pageSize, pageCount: Int(meta.pageCount), freePageCount: Int(meta.freePageCount),
            fileBytes: try pager.pageFile.size(), logBytes: try pager.log.file.size(),
            logFrameBytes: pager.logFrameBytes.load(ordering: .relaxed), cachedPages: cached, cacheHits: hits,
            cacheMisses: misses, cacheEvictions: evictions, checkpoints: pager.checkpointCount.load(ordering: .relaxed),
            logSyncs: pager.groupCommit.syncs, readersCutOff: cutOff, lastTransaction: last.rawValue,
            writeRefusal: pager.writeRefusal?.description)
    }
}

extension Store {
    /// What the trees hold as of the newest commit, per tree name: entries, key and value bytes
    /// as seen and as stored (so the compression of values), pages. Walks every node of every
    /// tree on a snapshot (O(pages); writers are not held up).
    public func contents() throws(StorageError) -> [String: TreeTally] {
        do {
            return try read { (txn) throws -> [String: TreeTally] in
                let catalog = try txn.catalog
                guard catalog.tree.root.rawValue != 0 else { return [:] }
                let source = txn.readPages
                var out: [String: TreeTally] = [:]
                for name in try catalog.names(in: source) {
                    guard let root = try catalog.root(of: name, in: source) else { continue }
                    out[name] = try BTree(root: root).tally(in: source)
                }
                return out
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.io, "reading the trees failed", cause: error)
        }
    }
}
