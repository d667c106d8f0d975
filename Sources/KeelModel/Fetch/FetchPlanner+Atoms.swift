// The planner's reading of a predicate: which terms of a conjunction an index can serve, and the
// key ranges they make on a given index.
//
// A term is index-servable when it compares an attribute of the fetched object itself (or a
// to-one of it) with constants, without `[c]`/`[d]` and without ANY/ALL/NONE:
//   attribute ==, IN {…}                     → points (nil included: idx trees hold nulls)
//   attribute < <= > >=, BETWEEN {lo, hi}   → a range inside the attribute type's key family
//   string attribute BEGINSWITH 'p'          → the range of keys starting with p's bytes
//   to-one == obj, IN {objs}                 → points, objects that may dangle and do not exist dropped
// and the constant's key order agrees with how predicates compare it (KeyFamily.fits). Such a
// term is served *exactly*: the range holds the objects that satisfy it and no others, so it
// needs no re-check. A to-one compares as nil when its target is missing, so only existing
// targets are looked up — read only when rows can dangle (the inverse's rule is `noAction`, or
// there is none); otherwise a missing target keys no entry — and `to-one == nil` is not served (a
// dangling row is keyed by its old target). Unique trees hold no entry for an object with a null in the key, so one is used only
// when every column is constrained by a term that excludes null.

extension FetchPlanner {
    /// One servable term: a constraint on one field.
    struct Atom {
        enum Constraint {
            /// Equal to one of these value keys.
            case points([[UInt8]], hasNull: Bool)
            /// Inside this range of one column's keys.
            case range(KeyRange)
        }

        let term: Int
        let field: Int
        let constraint: Constraint
        /// What EXPLAIN shows for it (written out only then).
        let text: PlanCondition
    }

    /// The atom a term makes, nil when no index can serve it.
    func atom(_ term: Int, _ node: BoundNode) throws(KeelError) -> Atom? {
        guard let (c, op, side, other) = Self.sides(node) else { return nil }
        let properties = model[entity].properties
        switch side {
        case .field(let f):
            guard properties.indices.contains(f), case .attribute(let a) = properties[f] else { return nil }
            return Self.attributeAtom(term, f, op, other, name: a.name, type: a.type)
        case .path(let p) where p.steps.count == 2:
            return try semiJoin(term, c, p, op: op, other)
        case .path(let p):
            guard case .toOne(let f) = p.steps.first, properties.indices.contains(f),
                case .relationship(let r) = properties[f]
            else { return nil }
            var targets: [Value]
            switch (op, other) {
            case (.equal, .constant(let v)): targets = [v]
            case (.in, .list(let vs)): targets = vs
            default: return nil
            }
            // A target that cannot be missing behind a stored row (its inverse's delete rule
            // nullifies, cascades or denies: `mayDangle` false) is not read: if it does not exist,
            // no entry is keyed by it; deleted in the context, it still matches nothing.
            let mayDangle = ObjectContext.mayDangle(r, model)
            var points: [[UInt8]] = []
            for target in targets {
                guard case .object(let id) = target else { return nil }
                guard id.entity.index < model.entities.count else { continue }
                if mayDangle ? try state.object(id) != nil : !state.deleted.contains(id) {
                    points.append(KeyEncoding.valuesKey([target]))
                }
            }
            return Atom(term: term, field: f, constraint: .points(Self.unique(points), hasNull: false), text: .comparison(r.name, op, other))
        default:
            return nil
        }
    }

    /// A servable comparison's parts: the comparison, its operator as read from the column's
    /// side (`5 < age` is `age > 5`), the column and the other side. Nil when the term is no
    /// such comparison.
    static func sides(_ node: BoundNode) -> (BoundComparison, ComparisonOperator, BoundExpression, BoundExpression)? {
        guard case .comparison(let c) = node, c.modifier == .direct, c.options.isEmpty else { return nil }
        var op = c.op
        if isColumn(c.left) { return (c, op, c.left, c.right) }
        guard isColumn(c.right), c.left.constant != nil else { return nil }
        switch op {
        case .equal: break
        case .less: op = .greater
        case .lessOrEqual: op = .greaterOrEqual
        case .greater: op = .less
        case .greaterOrEqual: op = .lessOrEqual
        default: return nil
        }
        return (c, op, c.right, c.left)
    }

    /// The atom of `attribute op other` on the entity's attribute `field` (its name and type
    /// given: a plan kept per shape has them, without copying the attribute per request).
    static func attributeAtom(
        _ term: Int, _ field: Int, _ op: ComparisonOperator, _ other: BoundExpression, name: String, type: AttributeType
    ) -> Atom? {
        guard let constraint = attributeConstraint(op, other, type) else { return nil }
        return Atom(term: term, field: field, constraint: constraint, text: .comparison(name, op, other))
    }

    /// `.field(f)`, a single to-one hop from the object, or a to-one hop and an attribute.
    private static func isColumn(_ expression: BoundExpression) -> Bool {
        switch expression {
        case .field: return true
        case .path(let p):
            // `SELF` is a path of no steps: not a column.
            guard case .object = p.base, p.aggregate == nil, let first = p.steps.first, case .toOne = first else { return false }
            if p.steps.count == 1 { return true }
            if p.steps.count == 2, case .attribute = p.steps[1] { return true }
            return false
        default: return false
        }
    }

    /// `toOne.attribute op constant` (`department.name == 'Sales'`) as `toOne IN {the objects
    /// whose attribute matches}`: the destination is fetched first (with its own indexes) over
    /// the same state, and when at most `semiJoinLimit` objects match, their IDs become points
    /// on the to-one. Exact for comparisons that are false on nil (an unset or dangling to-one
    /// reads every key behind it as nil): not `!=`, and no nil among the constants.
    private func semiJoin(
        _ term: Int, _ c: BoundComparison, _ p: BoundKeyPath, op: ComparisonOperator, _ other: BoundExpression
    ) throws(KeelError) -> Atom? {
        guard case .toOne(let f) = p.steps[0], case .attribute(let g) = p.steps[1],
            case .relationship(let r) = model[entity].properties[f], case .some = indexes
        else { return nil }
        switch (op, other) {
        case (.notEqual, _): return nil
        case (_, .constant(let v)) where v.isNull: return nil
        case (_, .list(let vs)) where vs.contains(where: \.isNull): return nil
        case (_, .constant), (_, .list): break
        default: return nil
        }
        let comparison = BoundComparison(
            modifier: .direct, left: .field(g), op: op, options: c.options, right: other, position: c.position, pattern: c.pattern)
        let inner = BoundPredicate(entity: r.destination, root: .comparison(comparison), source: .constant(true), slotCount: 0)
        let planner = FetchPlanner(
            graph: graph, entity: r.destination, includeSubentities: true, predicate: inner, ordering: nil,
            limit: Self.semiJoinLimit + 1, offset: 0, indexes: indexes, explaining: false)
        var targets: [Value] = []
        try FetchExecutor(graph: graph, plan: try planner.plan(), ordering: nil).run { row in
            targets.append(.object(row.id))
            return true
        }
        guard targets.count <= Self.semiJoinLimit else { return nil }
        let points = Self.unique(targets.map { KeyEncoding.valuesKey([$0]) })
        let shown = PlanCondition.semiJoin(.comparison(p.text, op, other), toOne: r.name, targets: targets)
        return Atom(term: term, field: f, constraint: .points(points, hasNull: false), text: shown)
    }

    private static func attributeConstraint(_ op: ComparisonOperator, _ other: BoundExpression, _ type: AttributeType) -> Atom.Constraint? {
        func key(_ v: Value) -> [UInt8] { KeyEncoding.valuesKey([v]) }
        switch (op, other) {
        case (.equal, .constant(let v)):
            if v.isNull { return type == .json ? nil : .points([[KeyEncoding.Tag.null]], hasNull: true) }
            return KeyFamily.fits(v, type) ? .points([key(v)], hasNull: false) : nil
        case (.in, .list(let vs)):
            var points: [[UInt8]] = []
            var hasNull = false
            for v in vs {
                if v.isNull, type != .json {
                    hasNull = true
                    points.append([KeyEncoding.Tag.null])
                } else if KeyFamily.fits(v, type) {
                    points.append(key(v))
                } else {
                    return nil
                }
            }
            return .points(Self.unique(points), hasNull: hasNull)
        case (.less, .constant(let v)), (.lessOrEqual, .constant(let v)), (.greater, .constant(let v)),
            (.greaterOrEqual, .constant(let v)):
            guard KeyFamily.fits(v, type), let (low, high) = KeyFamily.tags(of: type) else { return nil }
            let k = key(v)
            switch op {
            case .less: return .range(KeyRange(lower: [low], upper: k))
            case .lessOrEqual: return .range(KeyRange(lower: [low], upper: KeyRange.successor(of: k) ?? [high]))
            case .greater: return .range(KeyRange(lower: KeyRange.successor(of: k) ?? [high], upper: [high]))
            default: return .range(KeyRange(lower: k, upper: [high]))
            }
        case (.between, .list(let bounds)):
            guard bounds.count == 2, KeyFamily.fits(bounds[0], type), KeyFamily.fits(bounds[1], type),
                let (_, high) = KeyFamily.tags(of: type)
            else { return nil }
            return .range(KeyRange(lower: key(bounds[0]), upper: KeyRange.successor(of: key(bounds[1])) ?? [high]))
        case (.beginsWith, .constant(.string(let prefix))) where type == .string:
            var bytes: [UInt8] = [KeyEncoding.Tag.string]
            for b in prefix.utf8 {
                bytes.append(b)
                if b == 0 { bytes.append(0xFF) }
            }
            return .range(KeyRange.prefix(bytes))
        default:
            return nil
        }
    }

    static func unique(_ points: [[UInt8]]) -> [[UInt8]] {
        if points.count < 2 { return points }
        var seen = Set<[UInt8]>()
        return points.filter { seen.insert($0).inserted }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    // MARK: Accesses

    /// The best read of `index` for the atoms: equality on a prefix of its columns, then points
    /// or a range on the next one. Nil when the index serves nothing and cannot give the order.
    func access(_ index: Index, _ atoms: [Atom]) -> IndexAccess? {
        // No atom on the first column: the index serves nothing, and without a sort (or, unique,
        // missing a column) it is no candidate — decided before any list is built (a request
        // touches one or two of an entity's indexes; every other one was an allocation each).
        if let first = index.fields.first, !atoms.contains(where: { $0.field == first }),
            index.isUnique || (ordering?.keys.isEmpty ?? true)
        {
            return nil
        }
        var prefixes: [[UInt8]] = [[]]
        var ranges: [KeyRange]? = nil
        var served = SmallIntSet()
        var conditions: [PlanCondition] = []
        var fixed = 0
        var stillFixed = true
        var constrainedColumns = 0
        for field in index.fields {
            // The column's atoms, found without building lists of them: the points atom with the
            // fewest keys (the first of equals; by its place, not copied), and whether a range atom
            // is there. No atom on this column: nothing more of the index is served.
            var pointsAt = -1
            var fewest = Int.max
            var hasAtom = false
            var hasRange = false
            for k in atoms.indices where atoms[k].field == field {
                hasAtom = true
                switch atoms[k].constraint {
                case .points(let keys, _):
                    if keys.count < fewest {
                        pointsAt = k
                        fewest = keys.count
                    }
                case .range:
                    hasRange = true
                }
            }
            guard hasAtom else { break }
            if pointsAt >= 0, case .points(let keys, let hasNull) = atoms[pointsAt].constraint, !(index.isUnique && hasNull),
                keys.count * prefixes.count <= 1024
            {
                // The first column's points are the prefixes themselves (no copy per key).
                let atRoot = prefixes.count == 1 && prefixes[0].isEmpty
                prefixes = atRoot ? keys : prefixes.flatMap { p in keys.map { p + $0 } }
                served.insert(atoms[pointsAt].term)
                conditions.append(atoms[pointsAt].text)
                constrainedColumns += 1
                if stillFixed, keys.count == 1 { fixed += 1 } else { stillFixed = false }
                continue
            }
            if hasRange {
                var column = KeyRange(lower: [], upper: nil)
                for atom in atoms where atom.field == field {
                    guard case .range(let r) = atom.constraint else { continue }
                    column = column.intersection(r)
                    served.insert(atom.term)
                    conditions.append(atom.text)
                }
                constrainedColumns += 1
                // Under the empty prefix (a range on the first column) the column's bounds are
                // the key range itself: no concatenation copied.
                ranges = prefixes.map { p in
                    p.isEmpty
                        ? KeyRange(lower: column.lower, upper: column.upper ?? KeyRange.successor(of: p))
                        : KeyRange(lower: p + column.lower, upper: column.upper.map { p + $0 } ?? KeyRange.successor(of: p))
                }
            }
            break
        }
        if index.isUnique, constrainedColumns < index.fields.count { return nil }
        // Serving no term and not giving the sort asked (none asked included): no candidate,
        // decided before its ranges are built (an index of the entity that only a sort could
        // use was a list of ranges, normalized, built and dropped per request).
        if served.isEmpty, sortOrder(index, fixedColumns: fixed) == nil { return nil }
        // One prefix (equality on the columns served): its one range, without a list mapped.
        let all = KeyRange.normalized(ranges ?? (prefixes.count == 1 ? [KeyRange.prefix(prefixes[0])] : prefixes.map { KeyRange.prefix($0) }))
        return IndexAccess(index: index, ranges: all, conditions: conditions, served: served, fixedColumns: fixed)
    }

    /// Whether reading `access` in key order (or backwards) gives the requested sort: the sort
    /// keys are exactly the index columns after those fixed by equality, plain attributes of the
    /// object, all ascending or all descending, case-sensitive. Nil when it does not; false/true
    /// for forwards/backwards. No sort requested: nil.
    func sortOrder(_ access: IndexAccess) -> Bool? { sortOrder(access.index, fixedColumns: access.fixedColumns) }

    /// `sortOrder` of a read of `index` whose first `fixedColumns` columns are fixed by equality.
    func sortOrder(_ index: Index, fixedColumns: Int) -> Bool? {
        guard let ordering, !ordering.keys.isEmpty else { return nil }
        let fields = index.fields
        let keys = ordering.keys
        guard fields.count - fixedColumns == keys.count else { return nil }
        let ascending = keys[0].descriptor.ascending
        let properties = model[entity].properties
        for k in keys.indices {
            let key = keys[k]
            guard case .field(let f) = key.expression, f == fields[fixedColumns + k], !key.descriptor.caseInsensitive,
                key.descriptor.ascending == ascending, case .attribute(let a) = properties[f], a.type != .json
            else { return nil }
        }
        return !ascending
    }
}
