// A fetch request prepared once and run many times with other arguments: Core Data's fetch-request
// templates (`$VARIABLES` substituted per use) and SQLite's prepared statement, for callers that
// hold on to a request (an application's repeated query, the daemon's per-connection statements).
//
// `ObjectContext.prepare(_:)` checks the request against the context's model and binds it once,
// as a fetch does (the same errors, thrown then); the result keeps what `PreparedFetchCache`'s
// entry for the request's shape keeps (a `PreparedShape`: the entity, the sort, the fields, the
// predicate's template with its key paths resolved, and the plan's choice once one is kept).
// `fetch(_:args:vars:_:)`, `count(_:args:vars:)` and `explain(_:args:vars:)` then bind only the
// call's `%@` arguments and `$VARS` through the template, as a request met in the cache does —
// without building the shape's key, hashing the predicate text or taking the cache's lock, and
// without a `FetchRequest` per call. The rows, counts, plans and errors are those of the same
// request with those arguments run through `fetch(_:_:)` (tested against it, bound from scratch).
//
// A prepared request belongs to the model it was prepared on: run in a context of another model
// (another loaded or migrated model: `Model.identity`), it is prepared afresh for that context,
// per call, as `fetch(_:_:)` would. It never enters the shared cache; it holds its first
// request's bound arguments for as long as the caller keeps it.

/// A fetch request checked against a model and bound once (`ObjectContext.prepare(_:)`), run with
/// each call's arguments and variables.
public final class PreparedFetchRequest: Sendable {
    /// The request as prepared; its `args` and `vars` are the ones it was checked with, and each
    /// run takes its own.
    public let request: FetchRequest
    let shape: PreparedShape

    init(_ request: FetchRequest, model: Model) throws(KeelError) {
        self.request = request
        // A grouped request is checked whole here, and its shape is that of the fetch it groups.
        let fetched = request.isGrouped ? try FetchGrouping(request, model: model).source : request
        shape = PreparedShape(try PreparedFetch(fetched, model: model), model: model)
    }

    /// The request with a call's arguments and variables (for a context of another model).
    func request(args: [JSON], vars: [String: JSON]) -> FetchRequest {
        var request = request
        request.args = args
        request.vars = vars
        return request
    }
}

extension ObjectContext {
    /// Checks `request` against the context's model and binds it once (`NO_SUCH_ENTITY`,
    /// `NO_SUCH_PROPERTY`, `PREDICATE` and `BAD_REQUEST` are thrown here, for its own `args` and
    /// `vars`); run it with `fetch(_:args:vars:_:)`, `count(_:args:vars:)`, `explain(_:args:vars:)`.
    public func prepare(_ request: FetchRequest) throws(KeelError) -> PreparedFetchRequest {
        try PreparedFetchRequest(request, model: model)
    }

    /// `prepared` bound with `args` and `vars`: through its template on its own model, afresh on another.
    func preparedFetch(_ prepared: PreparedFetchRequest, args: [JSON], vars: [String: JSON]) throws(KeelError) -> PreparedFetch {
        guard prepared.shape.model.identity == model.identity else {
            return try preparedFetch(prepared.request(args: args, vars: vars))
        }
        return try PreparedFetch(prepared.shape, args: args, vars: vars, text: prepared.request.predicate)
    }

    /// `FETCH` of a prepared request with `args` for its `%@` and `vars` for its `$NAME`s (not
    /// the ones it was prepared with): as `fetch(_:_:)` of the request with these.
    @discardableResult
    public func fetch(
        _ prepared: PreparedFetchRequest, args: [JSON] = [], vars: [String: JSON] = [:], _ row: (FetchRow) throws(KeelError) -> Bool
    ) throws(KeelError) -> Int {
        try fetching { () throws(KeelError) -> Int in
            let graph = FetchGraph(try readState())
            // Grouped and distinct fetches run their request without offset and limit (runGrouped, runDistinct).
            if prepared.request.isGrouped { return try runGrouped(prepared.request(args: args, vars: vars), graph, row) }
            if prepared.request.distinct { return try runDistinct(prepared.request(args: args, vars: vars), graph, row) }
            return try run(try preparedFetch(prepared, args: args, vars: vars), graph, row)
        }
    }

    /// `FETCH` of a prepared request collected into an array.
    public func fetch(_ prepared: PreparedFetchRequest, args: [JSON] = [], vars: [String: JSON] = [:]) throws(KeelError) -> [FetchRow] {
        var out: [FetchRow] = []
        try fetch(prepared, args: args, vars: vars) { row in
            out.append(row)
            return true
        }
        return out
    }

    /// `COUNT` of a prepared request with `args` and `vars`.
    public func count(_ prepared: PreparedFetchRequest, args: [JSON] = [], vars: [String: JSON] = [:]) throws(KeelError) -> Int {
        let graph = FetchGraph(try readState())
        if prepared.request.isGrouped { return try runGrouped(prepared.request(args: args, vars: vars), graph) { _ in true } }
        if prepared.request.distinct { return try runDistinct(prepared.request(args: args, vars: vars), graph) { _ in true } }
        return try count(try preparedFetch(prepared, args: args, vars: vars), graph)
    }

    /// `EXPLAIN` of a prepared request with `args` and `vars`.
    public func explain(_ prepared: PreparedFetchRequest, args: [JSON] = [], vars: [String: JSON] = [:]) throws(KeelError) -> String {
        if prepared.request.distinct || prepared.request.isGrouped { return try plan(prepared.request(args: args, vars: vars)).explain(in: model) }
        let state = try readState()
        return try preparedFetch(prepared, args: args, vars: vars).plan(in: state, explaining: true).explain(in: model)
    }
}
