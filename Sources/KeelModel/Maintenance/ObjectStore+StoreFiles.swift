// The store files under an object store, as KeelStorage sees them: figures (pages used and free,
// cache hits, file and log bytes, per configuration) and the page and tree checks of
// `Store.verify()`. The daemon's STATS and VERIFY report these next to the object layer's own
// counts and checks (ObjectStore+Verify.swift).

public import KeelStorage

/// One store file's figures or verification report, named by its configuration.
public struct StoreFileReport<Report: Sendable>: Sendable {
    public let configuration: String
    /// `DIR/<configuration>.keel`.
    public let path: String
    public let report: Report
}

extension ObjectStore {
    /// KeelStorage's figures for every store file, in configuration order. Cheap: no tree is walked.
    public func storeStatistics() throws(KeelError) -> [StoreFileReport<StoreStatistics>] {
        var out: [StoreFileReport<StoreStatistics>] = []
        for (configuration, store) in zip(configurations, stores) {
            let statistics = try engine { () throws(StorageError) in try store.statistics() }
            out.append(StoreFileReport(configuration: configuration, path: store.path, report: statistics))
        }
        return out
    }

    /// KeelStorage's page and tree checks of every store file as of its newest commit (page
    /// checksums read from disk, B+tree order and shape, overflow chains, the free list, every
    /// page reachable once). Faults are in the reports; only a closed store throws.
    public func verifyStoreFiles() throws(KeelError) -> [StoreFileReport<VerifyReport>] {
        var out: [StoreFileReport<VerifyReport>] = []
        for (configuration, store) in zip(configurations, stores) {
            let report = try engine { () throws(StorageError) in try store.verify() }
            out.append(StoreFileReport(configuration: configuration, path: store.path, report: report))
        }
        return out
    }
}

extension ObjectStore {
    /// Every check there is, as of the newest commit: each store file's pages and trees
    /// (`verifyStoreFiles`), then the object layer's rows, relationships and inverses, links,
    /// indexes and unique constraints (`verify`). An error that stops the object checks (a
    /// damaged page they must read) is reported as a `read` fault after the page faults.
    public func verifyAll(progress: ProgressHandler = { _ in }) throws(KeelError) -> [StoreFault] {
        var faults: [StoreFault] = []
        try verifyAll(progress: progress) { faults.append($0) }
        return faults
    }

    /// `verifyAll`, each fault handed to `report` as it is found, in the same order; nothing is
    /// kept here, so a caller that keeps a bounded number (keeld's VERIFY: the first 100 and a
    /// count) checks a store of any number of faults in bounded memory.
    public func verifyAll(progress: ProgressHandler = { _ in }, report: (StoreFault) -> Void) throws(KeelError) {
        for (configuration, store) in zip(configurations, stores) {
            let pages = try engine { () throws(StorageError) in try store.verify(progress: progress) }
            for fault in pages.faults { report(StoreFault(page: fault, store: configuration)) }
        }
        do throws(KeelError) {
            try verify(progress: progress, report: report)
        } catch where error.code == .corrupt || error.code == .io {
            let page = (error.cause as? StorageError)?.page?.rawValue
            report(StoreFault(kind: "read", message: "the object checks stopped: \(error.message)", page: page))
        }
    }

    /// The page and tree checks of the store files of `configurations` in `directory`, without
    /// opening the object layer (for a folder whose object store cannot be opened). Files are
    /// opened read-only; a file that cannot be opened is one fault.
    public static func verifyStoreFiles(
        directory: String, configurations: [String], options: ObjectStoreOptions = ObjectStoreOptions(),
        progress: ProgressHandler = { _ in }
    ) -> [StoreFault] {
        var faults: [StoreFault] = []
        var storage = options.storage
        storage.readOnly = true
        for configuration in configurations {
            let path = directory + "/" + configuration + ".keel"
            do throws(StorageError) {
                let store = try Store.open(at: path, options: storage)
                defer { try? store.close() }
                faults += try store.verify(progress: progress).faults.map { StoreFault(page: $0, store: configuration) }
            } catch {
                faults.append(StoreFault(kind: "page", message: "cannot be opened: \(error.message)", store: configuration, page: error.page?.rawValue))
            }
        }
        return faults
    }

    /// The model the data folder `directory` was created with, as its primary store file
    /// recorded it. Throws `NOT_FOUND` when no store file in the folder records one.
    public static func storedModel(directory: String, options: ObjectStoreOptions = ObjectStoreOptions()) throws(KeelError) -> Model {
        var storage = options.storage
        storage.readOnly = true
        let names = try engine { () throws(StorageError) in try storage.fileSystem.contentsOfDirectory(directory) }
        for name in names.sorted() where name.hasSuffix(".keel") {
            let store = try engine { () throws(StorageError) in try Store.open(at: directory + "/" + name, options: storage) }
            defer { try? store.close() }
            if let text = try readMeta(store, MetaKey.modelJSON) {
                return try ModelLoader.load(text: String(decoding: text, as: UTF8.self))
            }
        }
        throw KeelError(.notFound, "no store file in \(directory) records a model (is it a Keel data folder?)")
    }
}

extension StoreFault {
    /// A store file's page or tree fault.
    init(page fault: VerifyFault, store: String) {
        self.init(kind: "page", message: fault.message, store: store, page: fault.page?.rawValue, tree: fault.tree)
    }
}
