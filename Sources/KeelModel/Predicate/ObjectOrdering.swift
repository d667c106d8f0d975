// Sort descriptors bound to an entity: what `sort` in a FETCH means.
//
// - Each key is a key path from the fetched object through to-one relationships (`name`,
//   `department.name`); to-many steps and aggregates are refused (`NO_SUCH_PROPERTY`, with the
//   predicate error's position inside the key).
// - Values order by `Value.sortCompare`: numbers by value across int/double/decimal, dates by
//   instant, strings by UTF-8 bytes (Unicode scalar order, as index keys), booleans false first.
// - nil (unset, or a to-one whose target is missing) sorts FIRST ascending and therefore LAST
//   descending — SQLite's and Core Data's SQLite store's order, and index key order.
// - `caseInsensitive`: strings compared after Unicode case folding (TextFolding, `[c]`).
// - Keys apply in order; objects equal on every key are ordered by object ID ascending, so the
//   order is total and the same whatever order the objects arrived in (an index scan and a
//   table scan agree). That makes it stable for input in ID order, which a scan yields.
// Sorting extracts each object's key values once (decorate, sort, undecorate), so relationship
// hops are read n times, not n log n.

public import Foundation

public struct ObjectOrdering: Sendable {
    public struct Key: Sendable {
        public let descriptor: KeelSortDescriptor
        /// `.field(f)` for an attribute of the object itself, else a to-one path.
        public let expression: BoundExpression
    }

    public let entity: EntityID
    public let keys: [Key]

    /// Binds `descriptors` for objects of `entity`.
    public init(_ descriptors: [KeelSortDescriptor], entity: EntityID, model: Model) throws(KeelError) {
        self.entity = entity
        let binder = PredicateBinder(model: model)
        var keys: [Key] = []
        for descriptor in descriptors {
            var state = PredicateBinder.BindingState()
            let refusal = { (why: String) in
                KeelError(
                    .noSuchProperty, "sort key \"\(descriptor.key)\": \(why)",
                    details: ["key": .string(descriptor.key), "entity": .string(model[entity].name)])
            }
            if descriptor.key.hasPrefix("$") {
                // `$id`, or a variable: not a property (the predicate language would read a variable).
                throw refusal("a sort key is a property or a key path through to-ones, not a variable or $id (rows with equal keys come in object ID order already)")
            }
            let operand: PredicateBinder.Operand
            do throws(KeelError) {
                guard case .keyPath(let path) = try PredicateCache.keyPath(descriptor.key) else {
                    throw refusal("expected a key path like name or department.name")
                }
                operand = try binder.bindKeyPath(path, PredicateBinder.Scope(entity: entity), &state)
            } catch {
                throw error.code == .predicate ? refusal(error.message) : error
            }
            guard case .typed(let expression, _, false, _) = operand else {
                throw refusal("expected a key path through to-one relationships (no to-many, no aggregate)")
            }
            if case .path(let p) = expression, p.aggregate != nil {
                throw refusal("expected a key path through to-one relationships (no aggregate)")
            }
            keys.append(Key(descriptor: descriptor, expression: expression))
        }
        self.keys = keys
    }

    /// The values `object` sorts by, one per key.
    public func sortValues(of object: StoredObject, in graph: some ObjectGraphReading) throws(KeelError) -> [Value] {
        var evaluator = PredicateEvaluator(graph: graph, slotCount: 0)
        var values: [Value] = []
        values.reserveCapacity(keys.count)
        for key in keys {
            var value: Value = .null
            if case .one(let v) = try evaluator.expression(key.expression, object) { value = v }
            if key.descriptor.caseInsensitive, case .string(let s) = value {
                value = .string(TextFolding.fold(s, .caseInsensitive))
            }
            values.append(value)
        }
        return values
    }

    /// The order of two objects given their `sortValues` and IDs.
    public func compare(_ a: [Value], _ aID: ObjectID, _ b: [Value], _ bID: ObjectID) -> ComparisonResult {
        for (i, key) in keys.enumerated() {
            let order = Value.sortCompare(a[i], b[i])
            if order != .orderedSame {
                return key.descriptor.ascending ? order : (order == .orderedAscending ? .orderedDescending : .orderedAscending)
            }
        }
        return aID < bID ? .orderedAscending : aID == bID ? .orderedSame : .orderedDescending
    }

    /// `objects` in this order.
    public func sorted(_ objects: [StoredObject], in graph: some ObjectGraphReading) throws(KeelError) -> [StoredObject] {
        var decorated: [(values: [Value], object: StoredObject)] = []
        decorated.reserveCapacity(objects.count)
        for object in objects { decorated.append((try sortValues(of: object, in: graph), object)) }
        decorated.sort { compare($0.values, $0.object.id, $1.values, $1.object.id) == .orderedAscending }
        return decorated.map(\.object)
    }
}

extension KeelPredicate {
    /// Parses a lone key path (`department.name`) as the predicate grammar reads one.
    static func parseKeyPath(_ text: String, limits: PredicateLimits = .standard) throws(KeelError) -> KeelExpression {
        guard text.unicodeScalars.count <= limits.maximumLength else {
            throw PredicateError.at(limits.maximumLength, expected: "a key path of at most \(limits.maximumLength) characters", found: "a longer one")
        }
        var parser = PredicateParser(PredicateLexer(Array(text.unicodeScalars), limits: limits), limits: limits)
        return try parser.parseWholeExpression()
    }
}
