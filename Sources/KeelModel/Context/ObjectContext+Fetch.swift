// FETCH and COUNT basics over the snapshot with the pending changes laid over it: inserted
// objects match, deleted ones do not, changed ones match by their pending values. Objects come
// in ID order (per entity), streamed one at a time. A filter is a closure over `ObjectValues`;
// the predicate language (issue 4) compiles to the same shape, and sorting and the planner's
// index use slot in before the filter.

extension ObjectContext {
    /// `FETCH`: calls `body` with each matching object, after `offset` matches are skipped, up to
    /// `limit` of them; `body` returns false to stop. Returns how many objects `body` received.
    @discardableResult
    public func fetch(
        entity name: String, includeSubentities: Bool = true, filter: ((ObjectValues) throws(KeelError) -> Bool)? = nil,
        limit: Int? = nil, offset: Int = 0, _ body: (ManagedObject) throws(KeelError) -> Bool
    ) throws(KeelError) -> Int {
        let entity = try entity(named: name)
        // A copy of the state: `body` may call the context (its changes are not seen by this fetch).
        let state = try readState()
        fetchesRunning += 1
        defer { fetchesRunning -= 1 }
        var skipped = 0
        var delivered = 0
        if let limit, limit <= 0 { return 0 }
        try state.scan(entity.id, includeSubentities: includeSubentities) { (row) throws(KeelError) -> Bool in
            if let filter, try !filter(ObjectValues(row: row, state: state)) { return true }
            if skipped < offset {
                skipped += 1
                return true
            }
            delivered += 1
            guard try body(try Self.managedObject(row, state: state)) else { return false }
            if let limit, delivered >= limit { return false }
            return true
        }
        return delivered
    }

    /// `FETCH` collected into an array.
    public func fetch(
        entity name: String, includeSubentities: Bool = true, filter: ((ObjectValues) throws(KeelError) -> Bool)? = nil,
        limit: Int? = nil, offset: Int = 0
    ) throws(KeelError) -> [ManagedObject] {
        var out: [ManagedObject] = []
        try fetch(entity: name, includeSubentities: includeSubentities, filter: filter, limit: limit, offset: offset) {
            out.append($0)
            return true
        }
        return out
    }

    /// `FETCH` with `result: ids`.
    public func fetchIDs(
        entity name: String, includeSubentities: Bool = true, filter: ((ObjectValues) throws(KeelError) -> Bool)? = nil
    ) throws(KeelError) -> [ObjectID] {
        let entity = try entity(named: name)
        let state = try readState()
        var out: [ObjectID] = []
        try state.scan(entity.id, includeSubentities: includeSubentities) { (row) throws(KeelError) -> Bool in
            if let filter, try !filter(ObjectValues(row: row, state: state)) { return true }
            out.append(row.id)
            return true
        }
        return out
    }

    /// `COUNT`: how many objects `fetch` would find (before limit and offset). Without a filter and
    /// without pending changes to the entity's family, the store counts without reading rows.
    public func count(
        entity name: String, includeSubentities: Bool = true, filter: ((ObjectValues) throws(KeelError) -> Bool)? = nil
    ) throws(KeelError) -> Int {
        let entity = try entity(named: name)
        let state = try readState()
        guard let filter else { return try state.count(entity.id, includeSubentities: includeSubentities) }
        var n = 0
        try state.scan(entity.id, includeSubentities: includeSubentities) { (row) throws(KeelError) -> Bool in
            if try filter(ObjectValues(row: row, state: state)) { n += 1 }
            return true
        }
        return n
    }
}
