// A grouped fetch answered from an index's keys, no object read — SQLite's GROUP BY over a
// covering index. It applies when:
// - the `groupBy` keys (a key path by its first to-one: `department` for `department.name`) are
//   the index's leading columns, in any order, and every aggregate reads a column of it (or
//   counts objects);
// - the fetch reads every object (no predicate) or reads this index with nothing filtered after
//   it (the plan's ranges are the whole predicate);
// - the context has no pending change to an object of the fetched entities (the keys are the
//   snapshot's), and the index is not a unique one.
// The keys come in key order, so a group is a run of keys with equal leading columns: a group
// opens when those bytes change, its key values decoded once. An aggregate decodes its column per
// key, except min and max of the column right after the group's: within a run that column is in
// order (nulls first), so min is the run's first non-null value and max its last.

struct IndexAggregation {
    let index: Index
    let ranges: [KeyRange]
    let family: Set<EntityID>
    /// For each `groupBy` key, its column in the index (all of them among the first `keyCount`).
    let keyColumns: [Int]
    /// For each aggregate, its column (nil: a count of objects).
    let aggregateColumns: [Int?]
    /// Per aggregate: min or max read at the run's ends.
    let atRunEnds: [Bool]
    /// Per index column: its attribute type (nil: a to-one).
    let types: [AttributeType?]
    /// Columns read of each key.
    let columnsRead: Int

    /// Nil when `grouping`'s fetch, planned as `plan` over `state`, cannot be answered from keys.
    init?(_ grouping: FetchGrouping, plan: FetchPlan, state: ContextOverlay) {
        let model = state.model
        guard plan.usesFastPaths, state.base?.indexReading != nil, grouping.aggregatesReadTheRow else { return nil }
        let family: Set<EntityID> = plan.includeSubentities ? model[plan.entity].familySet : [plan.entity]
        if state.rows.keys.contains(where: { family.contains($0.entity) }) || state.deleted.contains(where: { family.contains($0.entity) }) {
            return nil
        }
        let keyFields = (0..<grouping.keyCount).map { grouping.inputs[$0].firstField }
        let aggregateFields = grouping.aggregates.map { a in a.input.map { grouping.inputs[$0].firstField } }
        var candidates: [Index] = []
        let ranges: [KeyRange]
        switch plan.access {
        case .scan where plan.predicate == nil:
            // The entity's indexes and its ancestors' (each covers its declaring entity's family).
            var entity: EntityID? = plan.entity
            while let e = entity {
                candidates += model[e].indexes
                entity = model[e].parent
            }
            ranges = [KeyRange(lower: [], upper: nil)]
        case .index(let access) where plan.residual == nil:
            candidates = [access.index]
            ranges = access.ranges
        default:
            return nil
        }
        let fits = candidates.first { index in
            !index.isUnique && Set(keyFields).count == keyFields.count && Set(index.fields.prefix(keyFields.count)) == Set(keyFields)
                && aggregateFields.allSatisfy { $0.map(index.fields.contains) ?? true }
        }
        guard let index = fits else { return nil }
        let properties = model[plan.entity].properties
        var types: [AttributeType?] = []
        for field in index.fields {
            guard field < properties.count else { return nil }
            switch properties[field] {
            case .attribute(let a): types.append(a.type)
            case .relationship(let r):
                guard !r.isToMany else { return nil }
                types.append(nil)
            }
        }
        self.index = index
        self.ranges = ranges
        self.family = family
        self.types = types
        keyColumns = keyFields.map { f in index.fields.firstIndex(of: f) ?? 0 }
        aggregateColumns = aggregateFields.map { f in f.flatMap { index.fields.firstIndex(of: $0) } }
        atRunEnds = zip(grouping.aggregates, aggregateColumns).map { a, column in
            (a.spec.function == .min || a.spec.function == .max) && column == keyFields.count
        }
        columnsRead = max(keyFields.count, (aggregateColumns.compactMap { $0 }.max() ?? -1) + 1)
    }

    /// Reads the keys into `builder`'s groups; false (nothing read) when `reading` cannot hand
    /// keys over.
    func run(_ reading: any IndexReading, into builder: inout GroupBuilder) throws(KeelError) -> Bool {
        let count = aggregateColumns.count
        let keyCount = keyColumns.count
        // Sums and averages of a decimal column: added from the key's digits.
        let sumsDecimals = (0..<count).map { a in
            let f = builder.freshAccumulators[a].function
            return (f == .sum || f == .avg) && aggregateColumns[a].map { types[$0] == .decimal } == true
        }
        var run = Run(fresh: builder.freshAccumulators, atRunEnds: atRunEnds)
        var starts = [Int](repeating: 0, count: columnsRead)
        var ends = [Int](repeating: 0, count: columnsRead)
        let damaged = KeelError(.corrupt, "\(TreeLayout.index(index)) holds a key that is not a value of its columns")
        let read = try reading.indexKeys(index, ranges: ranges, family: family) { (key) throws(KeelError) -> Bool in
            var offset = 0
            for c in 0..<columnsRead {
                guard let end = KeyEncoding.valueEnd(key, at: offset) else { throw damaged }
                starts[c] = offset
                ends[c] = end
                offset = end
            }
            let prefixEnd = keyCount == 0 ? 0 : ends[keyCount - 1]
            guard key.count >= prefixEnd + KeyEncoding.objectKeySize else { throw damaged }
            if !run.isOpen || !run.prefix.elementsEqual(UnsafeRawBufferPointer(rebasing: key[..<prefixEnd])) {
                if run.isOpen { try run.close(self, into: &builder) }
                var values: [Value] = []
                values.reserveCapacity(keyCount)
                for c in keyColumns {
                    guard let value = KeyEncoding.decodeValue(key, starts[c], ends[c], as: types[c]) else { throw damaged }
                    values.append(value)
                }
                guard let first = KeyEncoding.objectID(key, at: key.count - KeyEncoding.objectKeySize) else { throw damaged }
                run.open(prefix: UnsafeRawBufferPointer(rebasing: key[..<prefixEnd]), keys: values, first: first)
            }
            for a in 0..<count {
                guard let c = aggregateColumns[a] else {
                    run.accumulators[a].add(.bool(true))  // a count of objects
                    continue
                }
                let isNull = key[starts[c]] == KeyEncoding.Tag.null
                if atRunEnds[a] {
                    if run.function(a) == .max {
                        run.lastKey(a, UnsafeRawBufferPointer(rebasing: key[starts[c]..<ends[c]]))
                    } else if !isNull, !run.hasValue(a) {
                        guard let value = KeyEncoding.decodeValue(key, starts[c], ends[c], as: types[c]) else { throw damaged }
                        run.accumulators[a].add(value)
                    }
                    continue
                }
                if run.function(a) == .count {
                    run.accumulators[a].add(isNull ? .null : .bool(true))
                    continue
                }
                if sumsDecimals[a], let parts = KeyEncoding.numberParts(key, starts[c], ends[c]) {
                    run.accumulators[a].addDecimal(parts.value, scale: parts.scale)  // no Decimal built a key
                    continue
                }
                guard let value = KeyEncoding.decodeValue(key, starts[c], ends[c], as: types[c]) else { throw damaged }
                run.accumulators[a].add(value)
            }
            return true
        }
        guard read else { return false }
        if run.isOpen { try run.close(self, into: &builder) }
        return true
    }

    /// The group being read: its key bytes and values, first object and accumulators.
    private struct Run {
        let fresh: [AggregateAccumulator]
        let atRunEnds: [Bool]
        var isOpen = false
        var prefix: [UInt8] = []
        var keys: [Value] = []
        var first: ObjectID? = nil
        var accumulators: [AggregateAccumulator] = []
        /// Per run-end max: the bytes of its column in the run's last key.
        var last: [[UInt8]]

        init(fresh: [AggregateAccumulator], atRunEnds: [Bool]) {
            self.fresh = fresh
            self.atRunEnds = atRunEnds
            last = Array(repeating: [], count: fresh.count)
        }

        func function(_ a: Int) -> FetchAggregate.Function { fresh[a].function }

        /// Whether a min at the run's start has its value.
        func hasValue(_ a: Int) -> Bool { !accumulators[a].value.isNull }

        mutating func lastKey(_ a: Int, _ bytes: UnsafeRawBufferPointer) {
            last[a].replaceSubrange(0..<last[a].count, with: bytes)
        }

        mutating func open(prefix bytes: UnsafeRawBufferPointer, keys: [Value], first: ObjectID) {
            prefix.replaceSubrange(0..<prefix.count, with: bytes)
            self.keys = keys
            self.first = first
            accumulators = fresh
            isOpen = true
        }

        /// Ends the run: a max takes its last key's value; the group goes to `builder`.
        mutating func close(_ aggregation: IndexAggregation, into builder: inout GroupBuilder) throws(KeelError) {
            for a in accumulators.indices where atRunEnds[a] && function(a) == .max {
                guard let c = aggregation.aggregateColumns[a] else { continue }
                let value = last[a].withUnsafeBytes { KeyEncoding.decodeValue($0, 0, $0.count, as: aggregation.types[c]) }
                guard let value else { throw KeelError(.corrupt, "\(TreeLayout.index(aggregation.index)) holds a key that is not a value of its columns") }
                accumulators[a].add(value)
            }
            if let first { builder.append(keys: keys, accumulators: accumulators, first: first) }
            isOpen = false
        }
    }
}
