// A copy of one snapshot into a new store file: what an online backup writes. The trees of the
// snapshot are copied in key order with the compaction copier (Store+Compaction.swift) into a
// store created at `PATH.copying`, which is closed (its final checkpoint writes and fsyncs the
// page file), stripped of its log, renamed to PATH, and the directory fsynced — so PATH either
// does not exist or holds the whole snapshot (I9). The source store keeps committing meanwhile:
// the copy reads only the pinned snapshot, never the writer.
//
// The snapshot is a reader like any other: held past the log limit it is cut off by a
// checkpoint (`snapshotTooOld`), and the copy fails, leaving nothing at PATH.

extension Store {
    /// Writes the state `snapshot` pins (a snapshot of this store) into a new store file at
    /// `path`, with this store's page size and file system. Refuses a `path` that exists. Returns
    /// the bytes of the new page file.
    public func copy(from snapshot: Snapshot, to path: String) throws(StorageError) -> UInt64 {
        let fs = options.fileSystem
        guard !fs.fileExists(path) else {
            throw StorageError(.invalidArgument, "a file already exists there; a copy never overwrites", path: path)
        }
        let temporary = path + ".copying"
        for leftover in [temporary, temporary + "-wal", temporary + ".creating"] where fs.fileExists(leftover) {
            try fs.remove(leftover)
        }
        var targetOptions = options
        targetOptions.syncMode = .normal
        targetOptions.readOnly = false
        targetOptions.pageSize = snapshot.pager.pageSize
        let target = try Store.open(at: temporary, options: targetOptions, logger: logger)
        do throws(StorageError) {
            try Self.copyTrees(of: snapshot, into: target)
            try target.close()
            try fs.remove(temporary + "-wal")
            try fs.rename(temporary, to: path)
            try fs.syncDirectory(directoryOf(path))
        } catch {
            try? target.close()
            for leftover in [temporary, temporary + "-wal"] where fs.fileExists(leftover) { try? fs.remove(leftover) }
            throw error
        }
        let file = try fs.open(path, options: FileOpenOptions(readOnly: true))
        defer { try? file.close() }
        let bytes = try file.size()
        logger.info("copied a snapshot", metadata: ["store.path": "\(self.path)", "copy.path": "\(path)", "copy.bytes": "\(bytes)"])
        return bytes
    }

    /// Every tree of `snapshot`, in catalog order, into `target` (which holds no trees yet).
    private static func copyTrees(of snapshot: Snapshot, into target: Store) throws(StorageError) {
        do {
            try snapshot.read { (txn) throws -> Void in
                let catalog = try txn.catalog
                guard catalog.tree.root.rawValue != 0 else { return }
                let source = txn.readPages
                for name in try catalog.names(in: source) {
                    guard let root = try catalog.root(of: name, in: source) else { continue }
                    _ = try copyTree(name: name, from: BTree(root: root), source: source, into: target)
                }
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.io, "copying the snapshot failed", cause: error)
        }
    }
}
