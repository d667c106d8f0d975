// Runs a plan over a context's state (its snapshot with the pending changes laid over it) and
// streams the matching rows in the requested order, `offset` skipped and `limit` kept.
//
// Pending changes: a scan reads through the overlay, which merges them by ID. An index read
// sees only the snapshot, so every object the context inserted, changed or deleted is skipped in
// the index stream, and the context's pending rows of the entity's family are evaluated on the
// whole predicate instead and merged in — in sort order when the index gives the order (they are
// sorted once: they are in memory already), else after the index stream.
//
// Memory: rows stream one at a time when the access gives the order (a scan without sort, or an
// index in sort order). A sort the access does not give holds the matches: all of them without
// a limit, or the best `offset + limit` in a bounded heap with one.

struct FetchExecutor {
    /// The state read (`graph.state`), shared with the planner and the materializer: one
    /// reference, not a copy of the overlay's dozen.
    let graph: FetchGraph
    let plan: FetchPlan
    let ordering: ObjectOrdering?

    init(graph: FetchGraph, plan: consuming FetchPlan, ordering: ObjectOrdering?) {
        self.graph = graph
        self.plan = plan
        self.ordering = ordering
    }

    var state: ContextOverlay { graph.state }

    var family: Set<EntityID> {
        plan.includeSubentities ? state.model[plan.entity].familySet : [plan.entity]
    }

    /// The matching rows in order, after `offset`, at most `limit`; `body` returns false to stop.
    func run(_ body: (StoredObject) throws(KeelError) -> Bool) throws(KeelError) {
        if let limit = plan.limit, limit <= 0 { return }
        var window = Window(offset: plan.offset, limit: plan.limit)
        if plan.orderedByAccess || ordering == nil {
            try produce { (row) throws(KeelError) -> Bool in try window.take(row, body) }
            return
        }
        guard let ordering else { return }
        var sorter = BoundedSorter(ordering: ordering, keep: plan.limit.map { $0 + plan.offset })
        try produce { (row) throws(KeelError) -> Bool in
            sorter.add(row, try ordering.sortValues(of: row, in: graph))
            return true
        }
        for row in sorter.sorted() { guard try window.take(row, body) else { return } }
    }

    /// How many rows `run` would give. An index read without a filter counts keys and reads no row.
    func count() throws(KeelError) -> Int {
        if let limit = plan.limit, limit <= 0 { return 0 }
        var n = 0
        switch plan.access {
        case .scan where plan.predicate == nil:
            n = try state.count(plan.entity, includeSubentities: plan.includeSubentities)
        case .index(let access) where plan.residual == nil:
            guard let indexes = state.base?.indexReading else { throw KeelError(.internal, "an index plan over a state without indexes") }
            if hasPendingRows {
                try indexes.indexIDs(access.index, ranges: access.ranges, family: family) { (id) throws(KeelError) -> Bool in
                    if !isTouched(id) { n += 1 }
                    return true
                }
                n += try pendingMatches(sorted: false).count
            } else {
                n = try indexes.indexCount(access.index, ranges: access.ranges, family: family, cap: .max)
            }
        default:
            try produce { _ in
                n += 1
                return true
            }
        }
        return min(max(n - plan.offset, 0), plan.limit ?? .max)
    }

    /// Hands every matching row to `visit` with only the fields of `wanted` (and those the
    /// predicate reads) decoded, inside the engine reads — `visit` must not read the state — in
    /// no promised order, the context's pending rows included; no offset, limit or sort. Only
    /// for a scan whose predicate reads nothing but the row: returns false (having visited
    /// nothing) for any other plan, which the caller then runs through `run`.
    func visit(decoding wanted: [Bool], _ visit: (StoredObject) throws(KeelError) -> Void) throws(KeelError) -> Bool {
        guard case .scan = plan.access, plan.usesFastPaths, let snapshot = state.base?.objectSnapshot else { return false }
        let fieldCount = state.model[plan.entity].properties.count
        var mask = wanted
        let predicate = plan.predicate
        if let predicate {
            guard let fields = predicate.rowFields(fieldCount: fieldCount) else { return false }
            for (f, w) in fields.enumerated() where w {
                if f < mask.count { mask[f] = true }
            }
        }
        // Sub-entities have more fields than the fetched entity: the mask is sized for the widest.
        let widest = family.map { state.model[$0].properties.count }.max() ?? mask.count
        if mask.count < widest { mask += [Bool](repeating: false, count: widest - mask.count) }
        let graph = graph
        let touched = hasPendingRows
        // The filtered scan's test runs inside the engine read on the partly decoded row: the
        // row is visited there, and the test refuses it, so that no row is decoded whole or
        // copied out. (No raw text filter: its rows skip the test.)
        try snapshot.scan(
            plan.entity, includeSubentities: plan.includeSubentities, decoding: mask,
            where: { (row) throws(KeelError) -> Bool in
                if touched, isTouched(row.id) { return false }
                if let predicate, try !predicate.evaluate(row, in: graph) { return false }
                try visit(row)
                return false
            }, raw: nil
        ) { _ in true }
        for pending in try pendingMatches(sorted: false) { try visit(pending.row) }
        return true
    }

    // MARK: Producing candidates

    /// Every matching row, in the access's order.
    private func produce(_ body: (StoredObject) throws(KeelError) -> Bool) throws(KeelError) {
        switch plan.access {
        case .nothing:
            return
        case .scan:
            if plan.usesFastPaths, let predicate = plan.predicate, let snapshot = state.base?.objectSnapshot,
                let wanted = predicate.rowFields(fieldCount: state.model[plan.entity].properties.count)
            {
                try filteredScan(snapshot, predicate, wanted, body)
                return
            }
            try state.scan(plan.entity, includeSubentities: plan.includeSubentities) { (row) throws(KeelError) -> Bool in
                if let predicate = plan.predicate, try !predicate.evaluate(row, in: graph) { return true }
                return try body(row)
            }
        case .index(let access):
            try indexed([access], body)
        case .union(let accesses):
            try indexed(accesses, body)
        }
    }

    private func indexed(_ accesses: [IndexAccess], _ body: (StoredObject) throws(KeelError) -> Bool) throws(KeelError) {
        guard let indexes = state.base?.indexReading else { throw KeelError(.internal, "an index plan over a state without indexes") }
        let merging = plan.orderedByAccess && ordering != nil
        let pending = try pendingMatches(sorted: merging)
        let touched = hasPendingRows
        var next = 0
        var seen: Set<ObjectID>? = accesses.count > 1 ? [] : nil
        var stopped = false
        // Rows the window will take when nothing is filtered or merged after the index.
        let expected: Int? =
            accesses.count == 1 && plan.residual == nil && !touched && (plan.orderedByAccess || ordering == nil)
            ? plan.limit.map { $0 + plan.offset } : nil
        for access in accesses {
            try indexes.indexRows(access.index, ranges: access.ranges, reverse: plan.reverse, family: family, expected: expected) {
                (row) throws(KeelError) -> Bool in
                if touched, isTouched(row.id) { return true }
                if seen != nil, seen?.insert(row.id).inserted == false { return true }
                if let residual = plan.residual, try !residual.evaluate(row, in: graph) { return true }
                if merging, next < pending.count, let ordering {
                    let values = try ordering.sortValues(of: row, in: graph)
                    while next < pending.count,
                        ordering.compare(pending[next].values, pending[next].row.id, values, row.id) == .orderedAscending
                    {
                        guard try body(pending[next].row) else {
                            stopped = true
                            return false
                        }
                        next += 1
                    }
                }
                guard try body(row) else {
                    stopped = true
                    return false
                }
                return true
            }
            if stopped { return }
        }
        while next < pending.count {
            guard try body(pending[next].row) else { return }
            next += 1
        }
    }

    /// A scan whose predicate reads only the row: filtered inside the engine read on partly
    /// decoded rows, with the context's pending rows merged in by ID as `ContextOverlay.scan` does.
    private func filteredScan(
        _ snapshot: ObjectSnapshot, _ predicate: BoundPredicate, _ wanted: [Bool], _ body: (StoredObject) throws(KeelError) -> Bool
    ) throws(KeelError) {
        let pending = try pendingMatches(sorted: false)
        let touched = hasPendingRows
        var next = 0
        var stopped = false
        let graph = graph
        // Sub-entities have more fields than the fetched entity: the mask is sized for the widest.
        var mask = wanted
        let widest = family.map { state.model[$0].properties.count }.max() ?? wanted.count
        if mask.count < widest { mask += [Bool](repeating: false, count: widest - mask.count) }
        try snapshot.scan(
            plan.entity, includeSubentities: plan.includeSubentities, decoding: mask,
            where: { (row) throws(KeelError) -> Bool in try predicate.evaluate(row, in: graph) },
            raw: RawRowFilter(predicate, model: state.model)
        ) { (row) throws(KeelError) -> Bool in
            if touched, isTouched(row.id) { return true }
            while next < pending.count, pending[next].row.id < row.id {
                guard try body(pending[next].row) else {
                    stopped = true
                    return false
                }
                next += 1
            }
            guard try body(row) else {
                stopped = true
                return false
            }
            return true
        }
        if stopped { return }
        while next < pending.count {
            guard try body(pending[next].row) else { return }
            next += 1
        }
    }

    // MARK: Pending changes

    private var hasPendingRows: Bool { !state.rows.isEmpty || !state.deleted.isEmpty }

    /// Inserted, changed or deleted in the context: the snapshot's version is not the one to read.
    private func isTouched(_ id: ObjectID) -> Bool {
        state.rows[id] != nil || state.deleted.contains(id)
    }

    /// The context's pending rows of the family that match the whole predicate, by ID or in sort order.
    private func pendingMatches(sorted: Bool) throws(KeelError) -> [(row: StoredObject, values: [Value])] {
        guard !state.rows.isEmpty else { return [] }
        let family = family
        var out: [(row: StoredObject, values: [Value])] = []
        for (id, pending) in state.rows where family.contains(id.entity) {
            let row = StoredObject(id: id, version: pending.version, values: pending.values)
            if let predicate = plan.predicate, try !predicate.evaluate(row, in: graph) { continue }
            out.append((row, sorted ? try ordering?.sortValues(of: row, in: graph) ?? [] : []))
        }
        if sorted, let ordering {
            out.sort { ordering.compare($0.values, $0.row.id, $1.values, $1.row.id) == .orderedAscending }
        } else {
            out.sort { $0.row.id < $1.row.id }
        }
        return out
    }
}

/// `offset` then `limit`.
struct Window {
    var offset: Int
    var limit: Int?
    var skipped = 0
    var delivered = 0

    mutating func take(_ row: StoredObject, _ body: (StoredObject) throws(KeelError) -> Bool) throws(KeelError) -> Bool {
        if skipped < offset {
            skipped += 1
            return true
        }
        guard try body(row) else { return false }
        delivered += 1
        if let limit, delivered >= limit { return false }
        return true
    }
}
