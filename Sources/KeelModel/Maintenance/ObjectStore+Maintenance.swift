// Online maintenance of every store file of an object store: compaction and backup, while the
// store stays open and in use (what the daemon's COMPACT and BACKUP and keelctl's offline
// commands run), and restoring a backup into a new data folder.
//
// COMPACT holds the save lock for its whole length, so no save or batch runs meanwhile (they wait
// and then run on the compacted files); each store file is compacted in turn by KeelStorage
// (`Store.compact()`: complete checkpoint, copy of the trees, rename, swap of the pager).
// Readers — contexts on their snapshots, fetches — keep reading throughout: a snapshot pinned
// before the swap reads the old file until it is closed.
//
// BACKUP pins one snapshot of every store under the snapshot gate (as `snapshot()` does: a
// multi-store save is in it whole or not at all) and writes the trees of each into one backup
// file (KeelStorage's BackupWriter; format in Backup/BackupArchive.swift and Docs/FileFormat.md,
// "Backup file"), one store section per configuration, named by it, after an info block naming
// the model. Saves continue meanwhile. The file is written as `PATH.partial`, fsynced, and
// renamed to PATH, so PATH exists only complete.
//
// RESTORE rebuilds each store file of a backup in an empty folder (`Store.restore`), then opens
// the folder with the model the backup recorded and runs every check (`verifyAll`) before it
// reports success; a backup that fails them leaves nothing behind.

public import KeelStorage

extension ObjectStore {
    /// Rewrites every store file without free pages. Saves wait while it runs; reads do not.
    /// Returns the bytes of the page files and logs before and after, summed over the stores.
    public func compact(progress: ProgressHandler = { _ in }) throws(KeelError) -> (bytesBefore: UInt64, bytesAfter: UInt64) {
        let reports = try saveLock.withLock { (_: inout SaveCounter) throws(KeelError) -> [CompactionReport] in
            var out: [CompactionReport] = []
            for store in stores {
                out.append(try engine { () throws(StorageError) in try store.compact(progress: progress) })
            }
            return out
        }
        let before = reports.reduce(0) { $0 + $1.bytesBefore }
        let after = reports.reduce(0) { $0 + $1.bytesAfter }
        logger.info("compacted the stores", metadata: ["bytes.before": "\(before)", "bytes.after": "\(after)"])
        return (before, after)
    }

    /// Writes a consistent copy of every store file into the new backup file `path` (which must
    /// not exist; its folder must). Saves continue while it runs. Returns what the file holds.
    @discardableResult
    public func backup(to path: String, progress: ProgressHandler = { _ in }) throws(KeelError) -> BackupSummary {
        let fs = options.storage.fileSystem
        guard !fs.fileExists(path) else {
            throw KeelError(.badRequest, "\(path) already exists: a backup never overwrites")
        }
        let partial = path + ".partial"
        let estimates = try storeStatistics().map { UInt64($0.report.pageCount - $0.report.freePageCount) * UInt64($0.report.pageSize) }
        let snapshot = try self.snapshot()
        defer { snapshot.close() }
        let info: JSON = [
            "model": .string(model.name), "modelVersion": .int(Int64(model.version)), "modelHash": .string(model.hash),
            "lastSave": .int(Int64(try snapshot.lastSaveID().rawValue)),
            "stores": .array(configurations.map { .string($0) }),
        ]
        let summary = try engine { () throws(StorageError) -> BackupSummary in
            if fs.fileExists(partial) { try fs.remove(partial) }
            let writer = try BackupWriter(creating: partial, fileSystem: fs, info: Array(info.serialized().utf8))
            do throws(StorageError) {
                for (i, configuration) in configurations.enumerated() {
                    try writer.add(store: configuration, snapshot: snapshot.snapshots[i], estimate: estimates[i], progress: progress)
                }
                let summary = try writer.finish()
                try fs.rename(partial, to: path)
                try fs.syncDirectory(directoryOf(path))
                return summary
            } catch {
                writer.abandon()
                throw error
            }
        }
        logger.info("backed up the stores", metadata: ["backup.path": "\(path)", "backup.bytes": "\(summary.bytes)"])
        return summary
    }

    /// Reads the backup file `path` whole and checks every rule of its format; returns what it
    /// holds. Writes nothing.
    public static func checkBackup(
        _ path: String, options: ObjectStoreOptions = ObjectStoreOptions(), progress: ProgressHandler = { _ in }
    ) throws(KeelError) -> BackupSummary {
        try engine { () throws(StorageError) in try BackupArchive.check(path: path, fileSystem: options.storage.fileSystem, progress: progress) }
    }

    /// Restores the backup file `backup` into `directory`, which must be empty or missing (a
    /// `keeld.lock` file alone is allowed: the caller may hold the folder's lock), then opens it
    /// with the model the backup recorded — which must be `model` when one is given — and runs
    /// every check. Fails, leaving nothing behind, when the file is damaged or the checks find
    /// a fault. Returns what was restored and the model.
    public static func restore(
        backup: String, into directory: String, model expected: Model? = nil, options: ObjectStoreOptions = ObjectStoreOptions(),
        progress: ProgressHandler = { _ in }
    ) throws(KeelError) -> (summary: BackupSummary, model: Model) {
        let fs = options.storage.fileSystem
        let listed = try engine { () throws(StorageError) -> [String] in
            try fs.createDirectory(directory)
            return try fs.contentsOfDirectory(directory)
        }
        let present = listed.filter { $0 != "keeld.lock" }
        guard present.isEmpty else {
            throw KeelError(
                .badRequest,
                "\(directory) is not empty (\(present.sorted().prefix(3).joined(separator: ", "))\(present.count > 3 ? ", …" : "")): a restore only goes into an empty folder")
        }
        let summary = try engine { () throws(StorageError) in
            try Store.restore(backup: backup, into: directory, options: options.storage, progress: progress)
        }
        do throws(KeelError) {
            let model = try storedModel(directory: directory, options: options)
            if let expected, expected.hash != model.hash {
                let differences = expected.differences(from: model).prefix(3).joined(separator: "; ")
                throw KeelError(.modelMismatch, "the backup was made with another model: \(differences)")
            }
            let names = Set(summary.stores.map(\.name))
            guard names == Set(model.configurations.keys) else {
                throw KeelError(
                    .corrupt,
                    "the backup holds the stores \(summary.stores.map(\.name).joined(separator: ", ")); its model has the configurations \(model.configurations.keys.joined(separator: ", "))")
            }
            let store = try ObjectStore.open(directory: directory, model: model, options: options)
            defer { try? store.close() }
            let faults = try store.verifyAll(progress: progress)
            guard faults.isEmpty else {
                throw KeelError(
                    .corrupt, "the restored stores fail verification: " + faults.prefix(3).map(\.description).joined(separator: "; "),
                    details: ["faults": .array(faults.map(\.json))])
            }
            return (summary, model)
        } catch {
            for (name, _) in summary.stores {
                for file in [name + ".keel", name + ".keel-wal"] where fs.fileExists(directory + "/" + file) {
                    try? fs.remove(directory + "/" + file)
                }
            }
            throw error
        }
    }
}
