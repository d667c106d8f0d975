// What the store commands do, offline (OfflineBackend: the object store in this process, on a
// held data folder) or online (OnlineBackend: keeld's admin commands through KeelConnection).
// Each command is written once against this protocol; the replies have one shape either way
// (the JSON of STATS, the faults of VERIFY, the rows of FETCH).

import KeelModel
import KeelStorage

/// What a backup wrote.
struct BackupOutcome: Sendable {
    var path: String
    var bytes: Int64
    var entries: Int64
    var payloadBytes: Int64
}

protocol Backend: Sendable {
    /// The model the store is served with.
    var model: Model { get }
    /// "the data folder DIR" or "keeld at SOCKET", for messages.
    var place: String { get }

    /// STATS (`contents`: walk every tree for the compression figures).
    func statistics(contents: Bool) async throws(KeelError) -> JSON
    func checkpoint() async throws(KeelError)
    func compact(progress: ProgressBar) async throws(KeelError) -> (bytesBefore: Int64, bytesAfter: Int64)
    /// Every check; each fault is handed to `fault` as it is found (online: the ones keeld's
    /// reply lists, the first 100); returns how many there are in all (0: clean).
    func verify(progress: ProgressBar, fault: @escaping @Sendable (StoreFault) -> Void) async throws(KeelError) -> Int
    func backup(to path: String, progress: ProgressBar) async throws(KeelError) -> BackupOutcome
    /// FETCH `request` (the protocol's JSON); `row` gets each row's JSON, in order.
    func fetch(_ request: JSON, row: @escaping @Sendable (JSON) throws(KeelError) -> Void) async throws(KeelError)
    func count(_ request: JSON) async throws(KeelError) -> Int
    func importObjects(_ plan: ImportPlan, chunkSize: Int, progress: ProgressBar) async throws(KeelError) -> ImportResult
    /// HISTORY: the rows of the transactions after `after`, oldest first, at most `limit`.
    func history(after: Int64, limit: Int?) async throws(KeelError) -> [JSON]
    /// HISTORY.PRUNE: deletes the history through `through`; `{"deleted":n,"prunedThrough":T}`.
    func pruneHistory(through: Int64) async throws(KeelError) -> JSON
    /// Ends the work: closes the store (offline: checkpoint, release the folder) or the connection.
    func close() async throws(KeelError)
}

extension Location {
    /// Opens the store this location names: offline, the held data folder (which must hold
    /// stores unless `creating`; opened without writing when `readOnly`; closed without a
    /// checkpoint when the command is only `reading`); online, a connection to keeld.
    func backend(creating: Bool = false, readOnly: Bool = false, reading: Bool = false) async throws(Failure) -> any Backend {
        if let socket {
            return try await OnlineBackend.connect(socket)
        }
        return try OfflineBackend(folder: OfflineFolder.acquire(self, creating: creating), readOnly: readOnly, reading: reading)
    }
}

extension Location {
    /// Opens the backend, runs `body`, and closes it (offline: checkpoint and release the
    /// folder), also when `body` fails. A `KeelError` becomes a failure (exit 1).
    func run<R>(creating: Bool = false, readOnly: Bool = false, reading: Bool = false, _ body: (any Backend) async throws -> R) async throws -> R {
        try await Self.using(try await backend(creating: creating, readOnly: readOnly, reading: reading), body)
    }

    /// Runs `body` on `backend` and closes it, as `run` does.
    static func using<R>(_ backend: any Backend, _ body: (any Backend) async throws -> R) async throws -> R {
        let result: R
        do {
            result = try await body(backend)
        } catch {
            try? await backend.close()
            if let error = error as? KeelError { throw Failure(error) }
            throw error
        }
        do throws(KeelError) {
            try await backend.close()
        } catch {
            throw Failure(error)
        }
        return result
    }
}
