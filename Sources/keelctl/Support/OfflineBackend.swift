// The store commands offline: the object store of a held data folder, in this process. The
// store's work blocks on disk I/O, so it runs on a thread of its own, never on the cooperative
// pool (DESIGN.md, "Concurrency").

import Foundation
import KeelModel
import KeelProtocol
import KeelStorage

final class OfflineBackend: Backend {
    let folder: OfflineFolder
    let store: ObjectStore
    /// The command only reads: the store is closed without a checkpoint, so it writes nothing
    /// of its own (a full disk does not fail it, and the logs stay as they were).
    let reading: Bool

    init(folder: OfflineFolder, store: ObjectStore, reading: Bool = false) {
        self.folder = folder
        self.store = store
        self.reading = reading
    }

    /// Opens the store of `folder`; releases the folder when it cannot.
    convenience init(folder: OfflineFolder, readOnly: Bool = false, reading: Bool = false) throws(Failure) {
        let store: ObjectStore
        do throws(Failure) {
            store = try folder.open(readOnly: readOnly)
        } catch {
            folder.release()
            throw error
        }
        self.init(folder: folder, store: store, reading: reading)
    }

    var model: Model { store.model }
    var place: String { "the data folder \(folder.directory)" }

    func statistics(contents: Bool) async throws(KeelError) -> JSON {
        try await onThread { [store] () throws(KeelError) in try store.statistics(contents: contents) }
    }

    func checkpoint() async throws(KeelError) {
        try await onThread { [store] () throws(KeelError) in try store.checkpoint() }
    }

    func compact(progress: ProgressBar) async throws(KeelError) -> (bytesBefore: Int64, bytesAfter: Int64) {
        let (before, after) = try await onThread { [store] () throws(KeelError) in try store.compact(progress: progress.report) }
        return (Int64(before), Int64(after))
    }

    func verify(progress: ProgressBar, fault: @escaping @Sendable (StoreFault) -> Void) async throws(KeelError) -> Int {
        try await onThread { [store] () throws(KeelError) -> Int in
            var count = 0
            try store.verifyAll(progress: progress.report) { found in
                count += 1
                fault(found)
            }
            return count
        }
    }

    func backup(to path: String, progress: ProgressBar) async throws(KeelError) -> BackupOutcome {
        let summary = try await onThread { [store] () throws(KeelError) in try store.backup(to: path, progress: progress.report) }
        return BackupOutcome(path: path, bytes: Int64(summary.bytes), entries: Int64(summary.entries), payloadBytes: Int64(summary.payloadBytes))
    }

    func fetch(_ request: JSON, row: @escaping @Sendable (JSON) throws(KeelError) -> Void) async throws(KeelError) {
        try await onThread { [store] () throws(KeelError) in
            let fetch = try FetchRequest(json: request)
            let context = ObjectContext(store: store)
            let model = store.model
            try context.fetch(fetch) { (r) throws(KeelError) -> Bool in
                try row(r.json(in: model))
                return true
            }
        }
    }

    func count(_ request: JSON) async throws(KeelError) -> Int {
        try await onThread { [store] () throws(KeelError) in
            try ObjectContext(store: store).count(try FetchRequest(json: request))
        }
    }

    func importObjects(_ plan: ImportPlan, chunkSize: Int, progress: ProgressBar) async throws(KeelError) -> ImportResult {
        try await onThread { [store] () throws(KeelError) in try store.importObjects(plan, chunkSize: chunkSize, progress: progress.report) }
    }

    func history(after: Int64, limit: Int?) async throws(KeelError) -> [JSON] {
        try await onThread { [store] () throws(KeelError) -> [JSON] in
            try store.history(after: SaveID(rawValue: UInt64(after)), limit: limit).map { EventTerms.historyRow($0, model: store.model) }
        }
    }

    func pruneHistory(through: Int64) async throws(KeelError) -> JSON {
        try await onThread { [store] () throws(KeelError) -> JSON in try EventTerms.pruneHistory(["through": .int(through)], in: store) }
    }

    func close() async throws(KeelError) {
        defer { folder.release() }
        try await onThread { [store, reading] () throws(KeelError) in try store.close(checkpoint: !reading) }
    }
}

/// Runs `body` on a new thread and waits for it without holding a thread of the cooperative pool.
func onThread<R: Sendable>(_ body: @escaping @Sendable () throws(KeelError) -> R) async throws(KeelError) -> R {
    let result: Result<R, KeelError> = await withCheckedContinuation { continuation in
        let thread = Thread {
            continuation.resume(returning: Result { () throws(KeelError) -> R in try body() })
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
    return try result.get()
}
