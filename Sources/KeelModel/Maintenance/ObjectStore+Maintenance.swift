// Online maintenance of every store file of an object store: compaction and backup, while the
// store stays open and in use (what the daemon's COMPACT and BACKUP run).
//
// COMPACT holds the save lock for its whole length, so no save or batch runs meanwhile (they wait
// and then run on the compacted files); each store file is compacted in turn by KeelStorage
// (`Store.compact()`: complete checkpoint, copy of the trees, rename, swap of the pager).
// Readers — contexts on their snapshots, fetches — keep reading throughout: a snapshot pinned
// before the swap reads the old file until it is closed.
//
// BACKUP pins one snapshot of every store under the snapshot gate (as `snapshot()` does: a
// multi-store save is in it whole or not at all) and copies each store's trees from it into a
// new store file (`Store.copy(from:to:)`). Saves continue meanwhile. The copies are written into
// `DIR.partial` and the folder renamed to `DIR` once every file is complete and synced, so `DIR`
// exists only when the whole backup does. The backup is a data folder: `ObjectStore.open` on it
// with the same model opens the state of the snapshot.

import KeelStorage

extension ObjectStore {
    /// Rewrites every store file without free pages. Saves wait while it runs; reads do not.
    /// Returns the bytes of the page files and logs before and after, summed over the stores.
    public func compact() throws(KeelError) -> (bytesBefore: UInt64, bytesAfter: UInt64) {
        let reports = try saveLock.withLock { (_: inout SaveCounter) throws(KeelError) -> [CompactionReport] in
            var out: [CompactionReport] = []
            for store in stores {
                out.append(try engine { () throws(StorageError) in try store.compact() })
            }
            return out
        }
        let before = reports.reduce(0) { $0 + $1.bytesBefore }
        let after = reports.reduce(0) { $0 + $1.bytesAfter }
        logger.info("compacted the stores", metadata: ["bytes.before": "\(before)", "bytes.after": "\(after)"])
        return (before, after)
    }

    /// Writes a consistent copy of every store file into the new folder `directory` (which must
    /// not exist; its parent must). Saves continue while it runs. Returns the bytes written.
    @discardableResult
    public func backup(to directory: String) throws(KeelError) -> UInt64 {
        let fs = options.storage.fileSystem
        guard !fs.fileExists(directory) else {
            throw KeelError(.badRequest, "\(directory) already exists: a backup never overwrites")
        }
        let partial = directory + ".partial"
        let names = configurations.map { $0 + ".keel" }
        let snapshot = try self.snapshot()
        defer { snapshot.close() }
        var bytes: UInt64 = 0
        do throws(KeelError) {
            try engine { () throws(StorageError) in
                try fs.createDirectory(partial)
                for name in names {
                    for leftover in [name, name + "-wal", name + ".copying", name + ".copying-wal"] where fs.fileExists(partial + "/" + leftover) {
                        try fs.remove(partial + "/" + leftover)
                    }
                }
                for (i, store) in stores.enumerated() {
                    bytes += try store.copy(from: snapshot.snapshots[i], to: partial + "/" + names[i])
                }
                try fs.syncDirectory(partial)
                try fs.rename(partial, to: directory)
                try fs.syncDirectory(directoryOf(directory))
            }
        } catch {
            for name in names where fs.fileExists(partial + "/" + name) { try? fs.remove(partial + "/" + name) }
            throw error
        }
        logger.info("backed up the stores", metadata: ["backup.path": "\(directory)", "backup.bytes": "\(bytes)"])
        return bytes
    }
}
