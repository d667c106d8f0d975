// The query planner: picks how a fetch reads its candidates and what it still checks.
//
// - The predicate's top-level conjunction is split into terms; each term an index can serve
//   exactly becomes an atom (FetchPlanner+Atoms.swift). Every index and unique constraint of the
//   entity (inherited ones included) is tried: equality/IN on a prefix of its columns, then a
//   range, IN or BEGINSWITH on the next. The terms it serves leave the filter.
// - Choice: with one candidate, that one. With several, each is counted up to `probeCap`
//   entries; the fewest wins (more columns served breaks ties). When a sort is asked and an
//   index gives that order, it wins unless the most selective index is known small (under the
//   cap), in which case its few rows are sorted in memory. So `sort + limit 10` on an indexed
//   key reads about 10 rows.
// - A top-level OR whose every branch has an index becomes a union of index reads (one index:
//   its ranges merged; several: duplicates dropped by ID), with the whole predicate as filter.
//   Otherwise, and with no usable index, a scan of the hierarchy's object tree with the whole
//   predicate as filter.
// - A term through a to-one (`department.name == 'Sales'`) is a semi-join: the destination's
//   matches are fetched first (by its own indexes) and, when few, become `department IN {…}`.
// - Estimates (EXPLAIN): index entries counted up to `explainCap`, then a third of the index
//   tree; a scan, the objects of the entity (tree counts).
// - A choice no value decided (one candidate, every term on the entity's own attributes) is kept
//   per request shape (`Template`); the next requests of the shape make only their atoms and that
//   index's access from their values, and are planned afresh when an atom's shape differs.

struct FetchPlanner {
    static let probeCap = 512
    static let explainCap = 100_000
    static let semiJoinLimit = 1024

    /// The state read, shared with the executor that runs the plan: existence of to-one
    /// targets, semi-joins, counts for estimates.
    let graph: FetchGraph
    let entity: EntityID
    let includeSubentities: Bool
    let predicate: BoundPredicate?
    let ordering: ObjectOrdering?
    let limit: Int?
    let offset: Int
    /// Index reads, nil when the state has none (the plan is then a scan).
    let indexes: (any IndexReading)?
    let explaining: Bool
    /// False for a request with `usesIndexes = false` (`FetchPlan.usesFastPaths`).
    var usesFastPaths = true

    var model: Model { graph.state.model }
    var state: ContextOverlay { graph.state }

    var family: Set<EntityID> { includeSubentities ? model[entity].familySet : [entity] }

    /// A term of the top-level conjunction with the text it was written as.
    struct Term {
        let node: BoundNode
        let source: KeelPredicate
    }

    func plan() throws(KeelError) -> FetchPlan {
        var none: Template? = nil
        return try plan(keeping: false, &none)
    }

    /// The plan, and in `template` (when `keeping`) what of its choice a request of the same
    /// shape can reuse (`Template`); left nil when the choice may depend on the arguments' values.
    func plan(keeping: Bool, _ template: inout Template?) throws(KeelError) -> FetchPlan {
        if explaining {
            var plan = try choose(keeping, &template)
            plan.estimatedRows = try estimate(plan)
            return plan
        }
        // Returned as made (a plan changed after `choose` was a copy and a destruction of it).
        return try choose(keeping, &template)
    }

    private func choose(_ keeping: Bool, _ template: inout Template?) throws(KeelError) -> FetchPlan {
        guard let predicate else { return try planTerms([], keeping: false, &template) }
        switch predicate.root {
        case .constant(false): return make(.nothing("FALSEPREDICATE"), residual: nil)
        case .constant(true): return try planTerms([], keeping: false, &template)
        case .or(let branches):
            if let union = try union(branches, predicate) { return union }
            return try planTerms([Term(node: predicate.root, source: predicate.source)], keeping: false, &template)
        default:
            return try planTerms(Self.terms(of: predicate), keeping: keeping, &template)
        }
    }

    /// The terms of the predicate's top-level conjunction (itself when it is no `AND`).
    private static func terms(of predicate: BoundPredicate) -> [Term] {
        if case .and(let nodes) = predicate.root, case .and(let sources) = predicate.source, sources.count == nodes.count {
            var terms: [Term] = []
            terms.reserveCapacity(nodes.count)
            for (node, source) in zip(nodes, sources) { terms.append(Term(node: node, source: source)) }
            return terms
        }
        return [Term(node: predicate.root, source: predicate.source)]
    }

    /// A plan for a conjunction of terms.
    private func planTerms(_ terms: [Term], keeping: Bool, _ template: inout Template?) throws(KeelError) -> FetchPlan {
        if terms.contains(where: { if case .constant(false) = $0.node { true } else { false } }) {
            return make(.nothing("FALSEPREDICATE"), residual: nil)
        }
        if case .none = indexes { return make(.scan, residual: residual(terms, served: SmallIntSet())) }
        var atoms: [Atom] = []
        for (i, term) in terms.enumerated() {
            if let atom = try atom(i, term.node) { atoms.append(atom) }
        }
        var candidates: [IndexAccess] = []
        func consider(_ index: Index) {
            if let access = access(index, atoms) { candidates.append(access) }
        }
        let e = model[entity]
        e.indexes.forEach(consider)  // and the unique constraints, without joining the lists per request
        e.uniqueConstraints.forEach(consider)
        guard let chosen = try pick(candidates) else { return make(.scan, residual: residual(terms, served: SmallIntSet())) }
        if keeping, candidates.count == 1 { template = Template(chosen, atoms: atoms, terms: terms.count, e) }
        return make(.index(chosen), residual: residual(terms, served: chosen.served), reverse: sortOrder(chosen))
    }

    // MARK: Plans kept per request shape

    /// What a plan chose that no value of the request's arguments decided, kept by the request's
    /// shape (`PreparedShape`) so that the next request of the shape plans only what its values
    /// make. Made only when one index was a candidate (no count chose it) and every term of the
    /// conjunction is a comparison of one of the entity's own attributes that an index can serve
    /// (no to-one: its targets are read for existence, a semi-join fetches them — both depend on
    /// the values and the state). A request reusing it makes each term's atom again
    /// (`atom`: its keys from the request's values) and the chosen index's access from them
    /// (`access`: the ranges), the same code as a fresh plan; when an atom differs in its kind
    /// from the first request's (no atom, a value outside the attribute's key family, another
    /// number of distinct points, nil among them), the request is planned afresh.
    final class Template: Sendable {
        /// One atom's shape: what `access` decides a candidate from, besides its keys.
        struct AtomShape: Equatable, Sendable {
            let field: Int
            /// Distinct points; -1 for a range.
            let points: Int
            let hasNull: Bool

            init(_ atom: Atom) {
                field = atom.field
                switch atom.constraint {
                case .points(let keys, let hasNull):
                    points = keys.count
                    self.hasNull = hasNull
                case .range:
                    points = -1
                    hasNull = false
                }
            }
        }

        let index: Index
        /// The shape of term i's atom, one per term.
        let atoms: [AtomShape]
        /// Term i's attribute: its name and type (read from the model once, not per request).
        let columns: [(name: String, type: AttributeType)]
        /// The terms the chosen access served.
        let served: SmallIntSet

        /// Nil when a term made no atom or one on a relationship.
        init?(_ chosen: IndexAccess, atoms: [Atom], terms: Int, _ entity: Entity) {
            guard atoms.count == terms else { return nil }
            var shapes: [AtomShape] = []
            var columns: [(name: String, type: AttributeType)] = []
            for (i, atom) in atoms.enumerated() {
                guard atom.term == i, entity.properties.indices.contains(atom.field),
                    case .attribute(let a) = entity.properties[atom.field]
                else { return nil }
                shapes.append(AtomShape(atom))
                columns.append((a.name, a.type))
            }
            index = chosen.index
            self.atoms = shapes
            self.columns = columns
            served = chosen.served
        }
    }

    /// The plan `template`'s choice makes for this request, nil when the request's values could
    /// make another choice (then it is planned afresh, `plan()`): the same plan as a fresh one.
    func plan(reusing template: Template) throws(KeelError) -> FetchPlan? {
        guard !explaining, let predicate else { return nil }
        switch predicate.root {
        case .constant, .or: return nil
        default: break
        }
        let terms = Self.terms(of: predicate)
        guard terms.count == template.atoms.count else { return nil }
        var atoms: [Atom] = []
        atoms.reserveCapacity(terms.count)
        for (i, term) in terms.enumerated() {
            // `atom`'s own steps for a term on one of the entity's attributes.
            let shape = template.atoms[i]
            let column = template.columns[i]
            guard let (_, op, side, other) = Self.sides(term.node), case .field(let f) = side, f == shape.field,
                let atom = Self.attributeAtom(i, f, op, other, name: column.name, type: column.type),
                Template.AtomShape(atom) == shape
            else { return nil }
            atoms.append(atom)
        }
        guard let chosen = access(template.index, atoms), chosen.served == template.served else { return nil }
        let reverse = sortOrder(chosen)
        let rest = residual(terms, served: chosen.served)
        return make(.index(consume chosen), residual: rest, reverse: reverse)
    }

    /// The candidate to read, nil for a scan.
    private func pick(_ candidates: [IndexAccess]) throws(KeelError) -> IndexAccess? {
        if candidates.count <= 1 { return candidates.first }
        var counted: [IndexAccess] = []
        for var candidate in candidates {
            if !candidate.served.isEmpty { try count(&candidate, cap: Self.probeCap) }
            counted.append(candidate)
        }
        let selective = counted.filter { !$0.served.isEmpty }.min { a, b in
            let x = a.counted ?? .max, y = b.counted ?? .max
            return x != y ? x < y : a.conditions.count > b.conditions.count
        }
        guard let ordering, !ordering.keys.isEmpty else { return selective }
        if let selective, sortOrder(selective) != nil { return selective }
        let ordered = counted.filter { sortOrder($0) != nil }.min { ($0.counted ?? .max) < ($1.counted ?? .max) }
        guard let ordered else { return selective }
        if let selective, !selective.capped { return selective }
        return ordered
    }

    private func count(_ access: inout IndexAccess, cap: Int) throws(KeelError) {
        guard let indexes else { return }
        let n = try indexes.indexCount(access.index, ranges: access.ranges, family: family, cap: cap)
        access.counted = n
        access.capped = n >= cap
    }

    /// `a OR b OR …` as index reads, nil when some branch has no index.
    private func union(_ branches: [BoundNode], _ predicate: BoundPredicate) throws(KeelError) -> FetchPlan? {
        guard case .some = indexes, case .or(let sources) = predicate.source, sources.count == branches.count else { return nil }
        var accesses: [IndexAccess] = []
        for (node, source) in zip(branches, sources) {
            let terms: [Term]
            if case .and(let nodes) = node, case .and(let parts) = source, nodes.count == parts.count {
                terms = zip(nodes, parts).map { Term(node: $0, source: $1) }
            } else {
                terms = [Term(node: node, source: source)]
            }
            var atoms: [Atom] = []
            for (i, term) in terms.enumerated() {
                if let atom = try atom(i, term.node) { atoms.append(atom) }
            }
            var best: IndexAccess? = nil
            for index in model[entity].indexes + model[entity].uniqueConstraints {
                guard var access = access(index, atoms), !access.served.isEmpty else { continue }
                try count(&access, cap: Self.probeCap)
                if best == nil || (access.counted ?? .max) < (best?.counted ?? .max) { best = access }
            }
            guard let best else { return nil }
            accesses.append(best)
        }
        let whole = residual([Term(node: predicate.root, source: predicate.source)], served: SmallIntSet())
        if let first = accesses.first, accesses.allSatisfy({ $0.index == first.index }) {
            let merged = IndexAccess(
                index: first.index, ranges: KeyRange.normalized(accesses.flatMap(\.ranges)),
                conditions: [.either(accesses.map(\.conditions))],
                served: SmallIntSet(), fixedColumns: 0)
            return make(.index(merged), residual: whole)
        }
        return make(.union(accesses), residual: whole)
    }

    /// The terms not served, as one predicate (nil when none is left).
    private func residual(_ terms: [Term], served: SmallIntSet) -> BoundPredicate? {
        // Every term served (the usual indexed fetch; no predicate, no term): no list of the rest
        // made, and the predicate not copied.
        if terms.indices.allSatisfy(served.contains) { return nil }
        guard let predicate else { return nil }
        let rest = terms.indices.filter { !served.contains($0) }.map { terms[$0] }
        if rest.count == 1, case .constant(true) = rest[0].node { return nil }
        let node: BoundNode = rest.count == 1 ? rest[0].node : .and(rest.map(\.node))
        let source: KeelPredicate = rest.count == 1 ? rest[0].source : .and(rest.map(\.source))
        return BoundPredicate(entity: entity, root: node, source: source, slotCount: predicate.slotCount)
    }

    private func make(_ access: FetchPlan.Access, residual: BoundPredicate?, reverse: Bool? = nil) -> FetchPlan {
        let sorted = !(ordering?.keys.isEmpty ?? true)
        let ordered: Bool
        switch access {
        case .nothing, .scan, .union: ordered = !sorted
        case .index: ordered = !sorted || reverse != nil
        }
        return FetchPlan(
            entity: entity, includeSubentities: includeSubentities, access: access, residual: residual,
            predicate: predicate, orderedByAccess: ordered, reverse: reverse ?? false,
            ordering: ordering, limit: limit, offset: offset, estimatedRows: nil, usesFastPaths: usesFastPaths)
    }

    // MARK: Estimates

    private func estimate(_ plan: FetchPlan) throws(KeelError) -> Int {
        var rows: Int
        switch plan.access {
        case .nothing: return 0
        case .scan: rows = try state.count(entity, includeSubentities: includeSubentities)
        case .index(let access): rows = try estimate(access)
        case .union(let accesses):
            rows = 0
            for access in accesses { rows += try estimate(access) }
        }
        if plan.orderedByAccess, plan.residual == nil, let limit { rows = min(rows, offset + limit) }
        return rows
    }

    private func estimate(_ access: IndexAccess) throws(KeelError) -> Int {
        guard let indexes else { return 0 }
        var access = access
        try count(&access, cap: Self.explainCap)
        guard access.capped else { return access.counted ?? 0 }
        return max(Self.explainCap, try indexes.treeSize(of: access.index) / 3)
    }
}
