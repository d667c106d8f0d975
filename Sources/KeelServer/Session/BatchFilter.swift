// The predicate of a BATCH.UPDATE or BATCH.DELETE as the store's filter: bound before the batch
// (PREDICATE errors change nothing), evaluated on each row the batch's transaction reads, with
// relationship hops read from a snapshot pinned just before the batch.
//
// Evaluation itself only fails when reading that snapshot fails (an I/O error). The store's
// filter cannot throw, so such a failure makes every later row a non-match and `check` reports
// it as IO after the batch — naming how the batch was cut short rather than hiding it.

import KeelModel
import KeelProtocol
import Logging

final class BatchFilter {
    private let predicate: BoundPredicate?
    private let snapshot: ObjectSnapshot?
    private var failure: KeelError?

    init(_ request: Request, entity: Entity, store: ObjectStore) throws(KeelError) {
        predicate = try FetchArguments.predicate(request, entity: entity, model: store.model)
        snapshot = predicate == nil ? nil : try store.snapshot()
    }

    deinit { snapshot?.close() }

    func matches(_ row: StoredObject) -> Bool {
        guard let predicate, let snapshot else { return true }
        guard failure == nil else { return false }
        do throws(KeelError) {
            return try predicate.evaluate(row, in: snapshot)
        } catch {
            failure = error
            return false
        }
    }

    /// Throws the evaluation failure, if one happened during the batch.
    func check(logger: Logger) throws(KeelError) {
        guard let failure else { return }
        logger.error("batch predicate evaluation failed", metadata: ["error": "\(failure)"])
        throw KeelError(
            .io, "reading related objects for the predicate failed during the batch; objects after the failure were not matched: \(failure.message)",
            cause: failure)
    }
}
