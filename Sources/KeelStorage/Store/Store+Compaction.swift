// Compaction: rewrite the store into a new page file with no free pages and fresh compression,
// then swap it in crash-safely (I9).
//
// Steps, holding the writer lock throughout (readers keep running on the old pager):
//   1. Complete checkpoint of the old store: everything is in its page file, its log is reset.
//   2. Check the disk has room for the live pages (refuse, saying how much is needed).
//   3. Copy every tree, in key order, into a new store at `PATH.compact` (sync mode normal, so
//      the copy is synced once at the end rather than per chunk). It gets the old store's store
//      identity (step 1 gave one to a store made before identities), so the old log, which
//      names it, may serve the new page file (I17).
//   4. Close the new store: its final checkpoint writes and fsyncs its page file; remove its log.
//   5. rename(PATH.compact, PATH), fsync the directory. The old log, reset in step 1 and untouched
//      since, holds no valid frame and serves the new page file, whose store identity it names.
//      The old log is truncated to its header (it regrows on the next commit).
//   6. Open a pager on the new file and make it current; the old pager is retired and closes its
//      files when its last reader ends.
// A crash before 5 leaves the old store complete (plus leftovers that the next compaction removes);
// a crash after 5 leaves the new one complete. Either way nothing committed is lost.

/// What compaction did.
public struct CompactionReport: Sendable, Equatable, Codable {
    /// Bytes of the page file and the log before and after.
    public var bytesBefore: UInt64
    public var bytesAfter: UInt64
    public var pageFileBytesBefore: UInt64
    public var pageFileBytesAfter: UInt64
    public var trees: Int
    public var entries: Int
}

extension Store {
    /// Rewrites the store without free pages. Writers wait while it runs; readers do not.
    /// Reports the new file's pages against the old file's live pages (an estimate: the new
    /// pages are fuller).
    public func compact(progress: ProgressHandler = { _ in }) throws(StorageError) -> CompactionReport {
        let old = try pager()
        let fs = options.fileSystem
        let temporary = path + ".compact"
        let result: (CompactionReport, Pager) = try old.writer.withLock {
            (w: inout WriterState) throws(StorageError) -> (CompactionReport, Pager) in
            if w.retired { throw StorageError(.closed, "the store was closed or compacted meanwhile", path: path) }
            if let refusal = old.writeRefusal { throw refusal }
            // 1.
            _ = try old.checkpointLocked(.complete, writer: &w)
            let pageFileBefore = try old.pageFile.size()
            let before = pageFileBefore + (try old.log.file.size())
            // 2.
            let liveBytes = UInt64(w.meta.pageCount - w.meta.freePageCount) * UInt64(old.pageSize)
            if let available = fs.availableBytes(at: directoryOf(path)), available < liveBytes + (4 << 20) {
                throw StorageError(
                    .diskFull,
                    "compaction needs about \(liveBytes + (4 << 20)) free bytes for the new file; \(available) are available",
                    path: path)
            }
            for leftover in [temporary, temporary + "-wal", temporary + ".creating"] where fs.fileExists(leftover) {
                try fs.remove(leftover)
            }
            // 3.
            var newOptions = options
            newOptions.syncMode = .normal
            newOptions.readOnly = false
            newOptions.pageSize = old.pageSize
            let target = try Store.open(at: temporary, options: newOptions, logger: logger, newStoreIdentity: w.meta.storeIdentity)
            var trees = 0
            var entries = 0
            do throws(StorageError) {
                let source = ReadPages(pager: old, snapshot: w.sequence)
                let catalog = Catalog(root: w.meta.catalogRoot)
                let livePages = UInt64(w.meta.pageCount - w.meta.freePageCount)
                let task = "compacting \(path.split(separator: "/").last.map(String.init) ?? path)"
                for name in try catalog.names(in: source) {
                    guard let root = try catalog.root(of: name, in: source) else { continue }
                    trees += 1
                    entries += try Store.copyTree(name: name, from: BTree(root: root), source: source, into: target) {
                        progress(WorkProgress(task: task, done: min($0, livePages), total: livePages))
                    }
                }
                progress(WorkProgress(task: task, done: livePages, total: livePages))
                // 4.
                try target.close()
            } catch {
                try? target.close()
                for leftover in [temporary, temporary + "-wal"] { try? fs.remove(leftover) }
                throw error
            }
            try fs.remove(temporary + "-wal")
            // 5.
            try fs.rename(temporary, to: path)
            try fs.syncDirectory(directoryOf(path))
            // The old log is empty since step 1: give its preallocated space back too.
            try old.log.file.truncate(to: UInt64(LogFormat.headerSize))
            try old.log.file.sync()
            // 6.
            w.retired = true
            let fresh = try Pager.open(path: path, options: options, logger: logger)
            let after = (try fresh.pageFile.size()) + (try fresh.log.file.size())
            let report = CompactionReport(
                bytesBefore: before, bytesAfter: after, pageFileBytesBefore: pageFileBefore,
                pageFileBytesAfter: try fresh.pageFile.size(), trees: trees, entries: entries)
            current.withLock { $0 = fresh }  // before writers waiting on the old lock look again
            return (report, fresh)
        }
        logger.info(
            "compacted the store",
            metadata: ["store.path": "\(path)", "bytes.before": "\(result.0.bytesBefore)", "bytes.after": "\(result.0.bytesAfter)"])
        return result.0
    }

    /// Copies one tree in key order, committing every few thousand entries to bound memory.
    /// After each commit, tells `copied` how many pages the target has.
    static func copyTree(
        name: String, from tree: BTree, source: ReadPages, into target: Store, copied pages: (UInt64) -> Void
    ) throws(StorageError) -> Int {
        var cursor = BTreeCursor(tree: tree, source: source)
        var more = try cursor.seekFirst()
        var copied = 0
        var created = false
        repeat {
            do {
                try target.write { txn in
                    let out = created ? try txn.tree(name)! : try txn.createTree(name)  // safe: created in an earlier chunk of this copy
                    created = true
                    var inChunk = 0
                    while more, inChunk < 20_000 {
                        try cursor.withEntry { (k, v) throws(StorageError) in try out.put(key: k, value: v) }
                        inChunk += 1
                        copied += 1
                        more = try cursor.next()
                    }
                }
            } catch let error as StorageError {
                throw error
            } catch {
                throw StorageError(.io, "copying tree \(name) failed", cause: error)
            }
            pages(UInt64(try target.statistics().pageCount))
        } while more
        return copied
    }
}
