// The seam between the typed client API and where a context lives. Two implementations, one
// contract: `RemoteContextBackend` speaks the line protocol to `keeld` over a `KeelConnection`;
// `EmbeddedContextBackend` drives a KeelModel `ObjectContext` in this process. The typed layer
// (`KeelContext`, the generated entities) is written against this protocol only, so an
// application switches between embedded and daemon by the one line that opens its store.
//
// Everything is in the protocol's own terms (spec/protocol.md): IDs as `Entity/N` text, values
// and objects as wire JSON, FETCH requests as the FETCH JSON, errors as `KeelError` with the
// protocol's codes. Transport failures of the remote side are `KeelError`s too, with the codes
// added in `KeelError.Code+Client.swift`.

public import KeelModel

/// One managed-object context, embedded or behind `keeld`. Calls run in the order they are
/// made by one task; a context is not meant to be driven from several tasks at once (as in Core
/// Data, one context per task or queue), but doing so is safe and the calls are serialised.
public protocol ContextBackend: AnyObject, Sendable {
    /// The model the store serves (the daemon's `MODEL`, or the embedded store's own).
    var model: Model { get }
    /// The context's name (`main` for the first one).
    var name: String { get }

    /// `INSERT`: returns the new object's permanent ID (`Entity/N`).
    func insert(entity: String, values: JSON) async throws(KeelError) -> String
    /// `UPDATE`.
    func update(_ id: String, values: JSON) async throws(KeelError)
    /// `DELETE`: every object deleted, the given one first (cascades included).
    func delete(_ id: String) async throws(KeelError) -> [String]
    /// `RELATE`.
    func relate(_ id: String, relationship: String, add: [String], remove: [String]) async throws(KeelError)
    /// `GET`: the object as wire JSON (`$id`, `$entity`, `$version`, properties).
    func get(_ id: String, include: [String]) async throws(KeelError) -> JSON
    /// `FETCH`: rows as they are produced, in wire form (objects; `{"$id":…}` objects for `ids`; dictionaries — by
    /// `request["result"]`). The stream ends with the fetch, or throws its `KeelError`.
    func fetch(_ request: JSON) -> AsyncThrowingStream<JSON, any Error>
    /// `COUNT`.
    func count(_ request: JSON) async throws(KeelError) -> Int
    /// `EXPLAIN`: the plan in words.
    func explain(_ request: JSON) async throws(KeelError) -> String
    /// `CHANGES`: `{"hasChanges":b,"inserted":[ids],"updated":[ids],"deleted":[ids]}`.
    func changes() async throws(KeelError) -> JSON
    /// `SAVE`: `{"inserted":n,"updated":n,"deleted":n,"txn":T}`.
    func save() async throws(KeelError) -> JSON
    /// `ROLLBACK`.
    func rollback() async throws(KeelError)
    /// `REFRESH`.
    func refresh() async throws(KeelError)
    /// A child context of this one (`CONTEXT.OPEN` with `parent`), or a new top-level context
    /// on the same store when `child` is false.
    func openContext(name: String, child: Bool, mergePolicy: String) async throws(KeelError) -> any ContextBackend
    /// `CONTEXT.CLOSE` (no-op for `main`, which lives as long as its connection or store).
    func close() async
    /// Change events of every save to the store committed from now on that touches `entities`
    /// (names, each with its sub-entities; nil: all) — keeld's SUBSCRIBE, or the embedded store's
    /// own observer; the same events either way. `NO_SUCH_ENTITY` for a name the model lacks.
    func subscribe(entities: [String]?) async throws(KeelError) -> KeelStream<ChangeEvent>
    /// `BATCH.INSERT`, `BATCH.UPDATE` or `BATCH.DELETE` (`command`) with its request's arguments
    /// (`{"entity":…,"objects":[…]}`…): one store transaction that bypasses contexts; the reply's
    /// JSON. keeld runs it, or the embedded store: the same code and the same answers.
    func batch(_ command: String, _ arguments: JSON) async throws(KeelError) -> JSON
    /// `HISTORY`: the rows (`{"txn":…,"time":…,"inserted":[…],…}`) of the transactions committed
    /// after `after`, oldest first, at most `limit`; `EXPIRED` when some were pruned.
    func history(after: Int64, limit: Int) async throws(KeelError) -> [JSON]
    /// `HISTORY.PRUNE`: deletes the history records through transaction `through`; the reply's
    /// JSON (`{"deleted":n,"prunedThrough":T}`).
    func pruneHistory(through: Int64) async throws(KeelError) -> JSON
}

extension ContextBackend {
    /// A backend without change events.
    public func subscribe(entities: [String]?) async throws(KeelError) -> KeelStream<ChangeEvent> {
        throw KeelError(.badRequest, "this store gives no change events")
    }

    /// A backend without history.
    public func history(after: Int64, limit: Int) async throws(KeelError) -> [JSON] {
        throw KeelError(.badRequest, "this store keeps no history")
    }

    /// A backend without history.
    public func pruneHistory(through: Int64) async throws(KeelError) -> JSON {
        throw KeelError(.badRequest, "this store keeps no history")
    }

    /// A backend without batch requests.
    public func batch(_ command: String, _ arguments: JSON) async throws(KeelError) -> JSON {
        throw KeelError(.badRequest, "this store runs no batch requests")
    }
}
