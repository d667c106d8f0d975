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
        try fetching { () throws(KeelError) -> Int in try run(request, row) }
    }

    private func run(_ request: FetchRequest, _ row: (FetchRow) throws(KeelError) -> Bool) throws(KeelError) -> Int {
        // A copy of the state: `row` may call the context (its changes are not seen by this fetch).
        // It is moved into the fetch's graph, which the planner, the executor and the
        // materializer share (one reference each, not a copy each of the overlay's dozen).
        let graph = FetchGraph(try readState())
        if request.isGrouped { return try runGrouped(request, graph, row) }
        if request.distinct { return try runDistinct(request, graph, row) }
        return try run(try preparedFetch(request), graph, row)
    }

    /// A `distinct` fetch: the fetch without offset and limit, each row handed over the first
    /// time its wire text is seen; offset and limit count those. Holds one text per distinct row
    /// (the result's size, as a sort no index gives holds the matches).
    func runDistinct(_ request: FetchRequest, _ graph: FetchGraph, _ row: (FetchRow) throws(KeelError) -> Bool) throws(KeelError) -> Int {
        guard request.result == .dictionaries else {
            throw KeelError(.badRequest, "\"distinct\" needs \"result\": \"dictionaries\"")
        }
        var window = ResultWindow(request, model: model)
        if window.isClosed { return 0 }
        _ = try run(try preparedFetch(Self.whole(request)), graph) { (fetched) throws(KeelError) -> Bool in
            try window.offer(fetched, row)
        }
        return window.delivered
    }

    /// `request` without distinct, offset and limit: the fetch whose rows in-memory steps take.
    static func whole(_ request: FetchRequest) -> FetchRequest {
        var whole = request
        whole.distinct = false
        whole.limit = nil
        whole.offset = 0
        return whole
    }

    /// Runs a prepared request over `graph` (`fetch(_:_:)`'s body; PreparedFetchRequest.swift's too).
    func run(_ prepared: PreparedFetch, _ graph: FetchGraph, _ row: (FetchRow) throws(KeelError) -> Bool) throws(KeelError) -> Int {
        if prepared.result == .count { return try count(prepared, graph) }
        // First, in one engine read (Self.pinning): the plan and, when the fetch is small, the
        // whole result, materialized before `row` sees any of it — `row` never runs inside the read.
        // The executor (with its plan) is moved out of the read and reused for the rest; the
        // first rows are returned with it, from a variable of the read's closure — not one the
        // closure captures from outside, which `pinning` (handing the closure on as escaping)
        // would box, each append paying a runtime exclusivity check.
        let (executor, complete, firstRows, lastChunk) = try Self.pinning(graph, prepared.entity.id) {
            () throws(KeelError) -> (FetchExecutor, Bool, [FetchRow], [ManagedObject]) in
            let executor = FetchExecutor(graph: graph, plan: try prepared.plan(in: graph, explaining: false), ordering: prepared.ordering)
            guard Self.fitsOneRead(executor.plan, ordering: prepared.ordering) else { return (executor, false, [], []) }
            var materializer = FetchMaterializer(graph: graph, prepared: prepared)
            var first: [FetchRow] = []
            var produced = 0
            var stopped = false
            // Each row is moved into `first`, not copied (a copy retains a dozen references), by
            // closures written at the call (non-escaping): a closure value or a local function
            // referenced from the closure below would box `first`, and each append would pay a
            // runtime exclusivity check.
            try executor.run { (stored) throws(KeelError) -> Bool in
                if produced == Self.pinnedRows {
                    stopped = true
                    return false
                }
                produced += 1
                return try materializer.add(stored) { (fetched: consuming FetchRow) throws(KeelError) -> Bool in
                    if first.capacity == 0 { first.reserveCapacity(16) }  // not grown from 1 for a typical result
                    first.append(consume fetched)
                    return true
                }
            }
            // `pinnedRows` is a multiple of the materializer's chunk: when stopped, nothing is
            // buffered. The last chunk (the whole result of a small fetch) is returned as the
            // materializer made it, last row first, and handed over by `popLast` below: no list
            // of rows reserved, filled and emptied, no ID-only row left in each slot.
            let last = stopped ? [] : try materializer.flushReversed()
            return (executor, !stopped, first, last)
        }
        var rows = consume firstRows
        var last = consume lastChunk
        var delivered = 0
        // Each row moved out of the array's buffer in place, an ID-only row (nothing to release)
        // left in its slot before `row` runs (so the array stays whole if it throws): the call
        // borrows the moved row, and its destruction here is the row's only one. Read from the
        // buffer instead, each row was copied for the call (its references retained) and that
        // copy destroyed after it (released), then the array's own released them again. (Moving
        // them out reversed, by `popLast`, cost more: `reverse` copied them; round fetchrow.)
        // (An empty list is not opened for writing: that would give it storage of its own.)
        let stoppedEarly = try rows.isEmpty ? false : rows.withUnsafeMutableBufferPointer { (buffer) throws(KeelError) -> Bool in
            guard let base = buffer.baseAddress else { return false }
            for i in 0..<buffer.count {
                delivered += 1
                let slot = base + i
                let taken = slot.move()
                slot.initialize(to: FetchRow(id: taken.id, result: .ids, object: nil, fields: nil))
                guard try row(taken) else { return true }
            }
            return false
        }
        if stoppedEarly { return delivered }
        // Each object moved out of the list before `row` runs (the rest are the list's if it
        // throws); the row made of it is destroyed here after the call, its only destruction.
        while let object = last.popLast() {
            delivered += 1
            if let keyPaths = prepared.keyPaths {
                // Key paths in a dictionary's properties: read through the fetch's graph.
                guard try row(try FetchMaterializer.row(object, keyPaths, graph: graph, prepared)) else { return delivered }
                continue
            }
            guard try row(FetchMaterializer.row(consume object, prepared)) else { return delivered }
        }
        if complete { return delivered }
        // The rest streams, each chunk in its own read; the rows handed over already are skipped.
        var materializer = FetchMaterializer(graph: graph, prepared: prepared)
        var skip = rows.count
        rows = []
        var going = true
        try withoutActuallyEscaping(row) { (row) throws(KeelError) in
            let counting = { (fetched: consuming FetchRow) throws(KeelError) -> Bool in
                delivered += 1
                return try row(fetched)
            }
            try executor.run { (stored) throws(KeelError) -> Bool in
                if skip > 0 {
                    skip -= 1
                    return true
                }
                going = try materializer.add(stored, counting)
                return going
            }
            if going { _ = try materializer.flush(counting) }
        }
        return delivered
    }

    /// The request checked against the model and bound: from the entry of its shape when one
    /// was prepared before (PreparedFetchCache.swift), binding only its arguments and variables.
    func preparedFetch(_ request: FetchRequest) throws(KeelError) -> PreparedFetch {
        preparesByShape ? try PreparedFetchCache.prepare(request, model: model) : try PreparedFetch(request, model: model)
    }

    /// Rows a fetch materializes inside its first engine read (a multiple of the materializer's chunk).
    static let pinnedRows = 8 * FetchMaterializer.chunkSize

    /// Whether running `plan` for its first `pinnedRows` rows is cheap enough to try in one read
    /// (and to redo, skipped, when the result turns out longer): index reads, which stream, and
    /// fetches whose limit keeps them inside; not a scan or an in-memory sort without one.
    static func fitsOneRead(_ plan: FetchPlan, ordering: ObjectOrdering?) -> Bool {
        if let limit = plan.limit, limit + plan.offset <= pinnedRows { return true }
        guard plan.offset == 0 else { return false }
        switch plan.access {
        case .nothing: return true
        case .scan: return false
        case .index, .union: return plan.orderedByAccess || ordering == nil
        }
    }

    /// Runs `body` with the engine read of the entity's store held open (ObjectSnapshot.pinned)
    /// when the context reads a store snapshot.
    static func pinning<R>(_ graph: FetchGraph, _ entity: EntityID, _ body: () throws(KeelError) -> R) throws(KeelError) -> R {
        guard let snapshot = graph.state.base?.objectSnapshot, entity.index < snapshot.layout.storeOf.count else { return try body() }
        return try snapshot.pinned(store: snapshot.layout.storeOf[entity.index], body)
    }

    func count(_ prepared: PreparedFetch, _ graph: FetchGraph) throws(KeelError) -> Int {
        try Self.pinning(graph, prepared.entity.id) { () throws(KeelError) -> Int in
            try FetchExecutor(graph: graph, plan: try prepared.plan(in: graph, explaining: false), ordering: prepared.ordering).count()
        }
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
        let graph = FetchGraph(try readState())
        if request.isGrouped { return try runGrouped(request, graph) { _ in true } }
        if request.distinct { return try runDistinct(request, graph) { _ in true } }
        return try count(try preparedFetch(request), graph)
    }

    /// `EXPLAIN`: how the fetch would run, in words (Docs/Predicates.md, "Indexes and EXPLAIN").
    public func explain(_ request: FetchRequest) throws(KeelError) -> String {
        try plan(request).explain(in: model)
    }

    /// The plan the fetch would run, with its estimate.
    public func plan(_ request: FetchRequest) throws(KeelError) -> FetchPlan {
        let state = try readState()
        if request.isGrouped { return try groupedPlan(request, state) }
        guard request.distinct else { return try preparedFetch(request).plan(in: state, explaining: true) }
        // As runDistinct runs it: the whole fetch, then distinct rows, then offset and limit.
        var plan = try preparedFetch(Self.whole(request)).plan(in: state, explaining: true)
        plan.inMemory = FetchPlan.InMemorySteps(distinct: true, offset: request.offset, limit: request.limit)
        return plan
    }
}
