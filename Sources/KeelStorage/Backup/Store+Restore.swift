// Restoring a backup file (BackupArchive.swift) into a folder: each store of the backup becomes
// `DIR/<name>.keel`, rebuilt from its trees' entries (so it comes out compacted, with fresh
// compression). Every block is checked before it is used (BackupReader.swift).
//
// Crash safety (I9): each store is written as `<name>.keel.restoring` (sync mode normal, synced
// once by its closing checkpoint) and stripped of its log; only when the end block has checked
// out are they all renamed to `<name>.keel` and the folder fsynced. A failure removes what the
// restore made; a crash leaves `.restoring` files, which the next restore removes.
//
// Store identity (I17): each restored page file is a new store with a fresh identity — its pages
// are laid out anew, so no log of the store the backup was made from may ever be replayed onto
// it. It is renamed into place without a log; its first open makes one naming its identity. A
// `<name>.keel-wal` already in the folder (a log left by a store that was there) is refused up
// front, like an existing `<name>.keel`: beside the restored file it would be another store's.

public import Logging

extension Store {
    /// Restores every store of the backup `path` into `directory` (which must exist and hold
    /// none of the backup's `<name>.keel` files). Returns what was restored.
    public static func restore(
        backup path: String, into directory: String, options: StoreOptions = StoreOptions(),
        logger: Logger = Logger(label: "keel.storage"), progress: ProgressHandler = { _ in }
    ) throws(StorageError) -> BackupSummary {
        var reader = try BackupReader(path: path, fileSystem: options.fileSystem)
        defer { reader.close() }
        var restorer = Restorer(directory: directory, options: options, logger: logger)
        do throws(StorageError) {
            let summary = try reader.walk(&restorer, progress: progress)
            logger.info("restored a backup", metadata: ["backup.path": "\(path)", "data.path": "\(directory)", "backup.entries": "\(summary.entries)"])
            return summary
        } catch {
            restorer.abandon()
            throw error
        }
    }
}

/// Writes the records of a backup into new store files.
private struct Restorer: BackupVisitor {
    let directory: String
    let options: StoreOptions
    let logger: Logger
    var current: Store?
    var tree: String?
    /// Every store started, as final paths (`.restoring` until the end).
    var made: [String] = []

    init(directory: String, options: StoreOptions, logger: Logger) {
        self.directory = directory
        self.options = options
        self.logger = logger
    }

    var fs: any FileSystem { options.fileSystem }

    mutating func store(name: String, pageSize: Int) throws(StorageError) {
        try closeCurrent()
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw StorageError(.corrupt, "the backup names a store \"\(name)\", which is not a file name")
        }
        let path = directory + "/" + name + ".keel"
        guard !fs.fileExists(path) else {
            throw StorageError(.invalidArgument, "\(path) exists; a restore never overwrites a store", path: path)
        }
        guard !fs.fileExists(path + "-wal") else {
            throw StorageError(
                .invalidArgument,
                "\(path)-wal exists: the log of a store that was there, which would belong to another store than the restored \(name).keel. A restore never overwrites a store: move the log away first",
                path: path + "-wal")
        }
        let temporary = path + ".restoring"
        for leftover in [temporary, temporary + "-wal", temporary + ".creating"] where fs.fileExists(leftover) {
            try fs.remove(leftover)
        }
        var storeOptions = options
        storeOptions.pageSize = pageSize
        storeOptions.syncMode = .normal
        storeOptions.readOnly = false
        made.append(path)
        current = try Store.open(at: temporary, options: storeOptions, logger: logger)
        tree = nil
    }

    mutating func tree(name: String) throws(StorageError) {
        guard let current else { throw StorageError(.corrupt, "a tree outside a store") }
        try write(current) { (txn) throws in _ = try txn.createTree(name) }
        tree = name
    }

    mutating func entries(_ entries: [([UInt8], [UInt8])]) throws(StorageError) {
        guard let current, let name = tree else { throw StorageError(.corrupt, "entries outside a tree") }
        try write(current) { (txn) throws in
            guard let out = try txn.tree(name) else { throw StorageError(.noSuchTree, "tree \(name) vanished during the restore") }
            for (key, value) in entries { try out.put(key: key, value: value) }
        }
    }

    mutating func end() throws(StorageError) {
        try closeCurrent()
        for path in made { try fs.rename(path + ".restoring", to: path) }
        try fs.syncDirectory(directory)
        made = []
    }

    private func write(_ store: Store, _ body: (WriteTransaction) throws -> Void) throws(StorageError) {
        do {
            try store.write(body)
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.io, "writing the restored store failed", cause: error)
        }
    }

    /// Closes the store being written (its final checkpoint syncs the page file) and removes its log.
    private mutating func closeCurrent() throws(StorageError) {
        guard let store = current else { return }
        current = nil
        try store.close()
        try fs.remove(store.path + "-wal")
    }

    /// After a failure: closes and removes everything this restore made.
    mutating func abandon() {
        if let store = current { try? store.close() }
        current = nil
        for path in made {
            for leftover in [path + ".restoring", path + ".restoring-wal", path + ".restoring.creating"] where fs.fileExists(leftover) {
                try? fs.remove(leftover)
            }
        }
        made = []
    }
}
