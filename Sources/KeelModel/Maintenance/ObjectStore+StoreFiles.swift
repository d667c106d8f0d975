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
