// A read whose snapshot was cut off (SNAPSHOT_TOO_OLD: a COMPACT, or the log passing its limit
// while the context held its snapshot) is renewed once: a context without pending changes reads
// on from a new snapshot, as REFRESH would give it; one with pending changes is told to REFRESH
// (they are kept over it). keeld's sessions and the embedded client backend both read this way.

import KeelStorage

extension ObjectContext {
    /// Runs `read` (a GET, FETCH, COUNT or EXPLAIN of this context); once more on a new snapshot
    /// when the first try's snapshot was cut off and nothing is pending, else `BUSY` asking for
    /// REFRESH. `retry` false (a fetch that already handed rows over) rethrows the `BUSY` as is.
    @discardableResult
    public func renewingSnapshot<T>(retry: () -> Bool = { true }, _ read: () throws(KeelError) -> T) throws(KeelError) -> T {
        do throws(KeelError) {
            return try read()
        } catch where Self.isSnapshotTooOld(error) && retry() {
            guard !changes().hasChanges else {
                throw KeelError(.busy, error.message + "; REFRESH the context (its pending changes are kept) and retry", cause: error)
            }
            refresh()
            return try read()
        }
    }

    /// Whether `error` is a snapshot cut off by a checkpoint.
    public static func isSnapshotTooOld(_ error: KeelError) -> Bool {
        error.code == .busy && (error.cause as? StorageError)?.code == .snapshotTooOld
    }
}
