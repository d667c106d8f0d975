// FETCH, COUNT and EXPLAIN with a `FetchRequest`: the predicate language, sort descriptors,
// limit/offset, result types, `include` with prefetching and fetched properties, planned with
// the indexes (Fetch/FetchPlanner.swift). A fetch reads the context's snapshot with its pending
// changes laid over it: inserted objects match, deleted ones do not, changed ones are evaluated
// on their pending values — with or without an index.

extension ObjectContext {
    /// `FETCH`: calls `row` with each result, in order, streamed (a million objects are never
    /// held at once, except that a sort no index gives holds the matches — only the best
    /// `offset + limit` of them with a limit). `row` returns false to stop. Returns how many
    /// rows were handed over, or for `result: count`, the count (and `row` is not called).
    @discardableResult
    public func fetch(_ request: FetchRequest, _ row: (FetchRow) throws(KeelError) -> Bool) throws(KeelError) -> Int {
        // A copy of the state: `row` may call the context (its changes are not seen by this fetch).
        let state = try readState()
        let prepared = try PreparedFetch(request, model: model)
        let plan = try prepared.plan(in: state, explaining: false)
        let executor = FetchExecutor(state: state, plan: plan, ordering: prepared.ordering)
        if request.result == .count { return try executor.count() }
        var materializer = FetchMaterializer(state: state, prepared: prepared)
        var delivered = 0
        var going = true
        try withoutActuallyEscaping(row) { (row) throws(KeelError) in
            let counting = { (fetched: FetchRow) throws(KeelError) -> Bool in
                delivered += 1
                return try row(fetched)
            }
            try executor.run { (stored) throws(KeelError) -> Bool in
                going = try materializer.add(stored, counting)
                return going
            }
            if going { _ = try materializer.flush(counting) }
        }
        return delivered
    }

    /// `FETCH` collected into an array.
    public func fetch(_ request: FetchRequest) throws(KeelError) -> [FetchRow] {
        var out: [FetchRow] = []
        try fetch(request) { row in
            out.append(row)
            return true
        }
        return out
    }

    /// `COUNT`: how many rows the fetch would give (after `offset`, at most `limit`). An index
    /// that serves the whole predicate is counted by its keys; no row is read.
    public func count(_ request: FetchRequest) throws(KeelError) -> Int {
        let state = try readState()
        let prepared = try PreparedFetch(request, model: model)
        let plan = try prepared.plan(in: state, explaining: false)
        return try FetchExecutor(state: state, plan: plan, ordering: prepared.ordering).count()
    }

    /// `EXPLAIN`: how the fetch would run, in words (Docs/Predicates.md, "Indexes and EXPLAIN").
    public func explain(_ request: FetchRequest) throws(KeelError) -> String {
        try plan(request).explain(in: model)
    }

    /// The plan the fetch would run, with its estimate.
    public func plan(_ request: FetchRequest) throws(KeelError) -> FetchPlan {
        let state = try readState()
        return try PreparedFetch(request, model: model).plan(in: state, explaining: true)
    }
}
