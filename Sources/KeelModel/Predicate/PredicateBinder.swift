// Binding: a parsed `KeelPredicate` meets the model and the request. Key paths become field
// numbers and relationship hops checked against the entity (unknown keys, keys on attributes,
// to-many without ANY/ALL/NONE or an aggregate are refused where they are written); `%@` takes
// the next of `args` and `$NAME` takes `vars.NAME`, each converted to the type of what it is
// compared with (PredicateBinder+Values.swift); `$FETCH_SOURCE.key` is read from the fetched
// property's source object; string patterns are folded and MATCHES regexes compiled, once.
// Every refusal is a `PREDICATE` error with the position of the offending piece.
//
// A grouped fetch's `having` is bound over its rows instead of an entity (`groupRow`): a key path
// is one of the rows' names taken whole (`department.name`, `payroll`), read as the row's value at
// that place; `%@` and `$NAME` as anywhere; SUBQUERY, SELF, `@count`… and keys beyond a name are
// refused (a group's row holds values, not objects to follow).
//
// Inside `SUBQUERY(collection, $x, p)`, `p` is bound with `$x` and SELF both meaning the
// element (NSPredicate evaluates the subquery predicate on each element), so `$x.age` and `age`
// read the same.

/// The object a fetched property is evaluated for (`$FETCH_SOURCE`) and how to read its graph.
public struct FetchSource {
    public let object: StoredObject
    public let graph: any ObjectGraphReading

    public init(object: StoredObject, graph: any ObjectGraphReading) {
        self.object = object
        self.graph = graph
    }
}

public struct PredicateBinder {
    public let model: Model
    public let args: [JSON]
    public let vars: [String: JSON]
    public let fetchSource: FetchSource?
    public let limits: PredicateLimits
    /// Set for a grouped fetch's `having`: the rows' names, each with its place in the row
    /// (`.field`) and what it holds.
    var groupRow: [String: (field: Int, type: OperandType)]? = nil

    public init(
        model: Model, args: [JSON] = [], vars: [String: JSON] = [:], fetchSource: FetchSource? = nil,
        limits: PredicateLimits = .standard
    ) {
        self.model = model
        self.args = args
        self.vars = vars
        self.fetchSource = fetchSource
        self.limits = limits
    }

    /// Parses (once per text: PredicateCache.swift) and binds `text` for objects of `entity`.
    public func bind(_ text: String, to entity: EntityID) throws(KeelError) -> BoundPredicate {
        let predicate = try PredicateCache.parse(text, limits: limits)
        return try bind(predicate, to: entity) { text.unicodeScalars.count }
    }

    /// Binds a parsed predicate for objects of `entity`. `textLength` is where "too many
    /// arguments" is reported (the end of the text).
    public func bind(_ predicate: KeelPredicate, to entity: EntityID, textLength: Int = 0) throws(KeelError) -> BoundPredicate {
        try bind(predicate, to: entity) { textLength }
    }

    /// `textLength` is asked only for that error (counting a text's scalars is a cost of every
    /// binding otherwise).
    func bind(_ predicate: KeelPredicate, to entity: EntityID, textLength: () -> Int) throws(KeelError) -> BoundPredicate {
        var state = BindingState()
        let root = try bindNode(predicate, Scope(entity: entity), &state)
        try checkArgumentsUsed(state, textLength: textLength)
        return BoundPredicate(entity: entity, root: root, source: predicate, slotCount: state.slots)
    }

    /// Refuses arguments the predicate has no `%@` for.
    func checkArgumentsUsed(_ state: BindingState, textLength: () -> Int) throws(KeelError) {
        if state.argumentsUsed < args.count {
            throw PredicateError.at(
                textLength(), expected: "\(state.argumentsUsed) argument\(state.argumentsUsed == 1 ? "" : "s") for the %@ in the predicate",
                found: "\(args.count) in args")
        }
    }

    // MARK: - Predicates

    struct Scope {
        var entity: EntityID
        /// SUBQUERY variables in scope: name → (slot, the element's entity).
        var variables: [String: (slot: Int, entity: EntityID)] = [:]
    }

    struct BindingState {
        var argumentsUsed = 0
        var slots = 0
    }

    func bindNode(_ predicate: KeelPredicate, _ scope: Scope, _ state: inout BindingState) throws(KeelError) -> BoundNode {
        switch predicate {
        case .constant(let b): return .constant(b)
        case .not(let inner): return .not(try bindNode(inner, scope, &state))
        case .and(let terms):
            var bound: [BoundNode] = []
            for term in terms { bound.append(try bindNode(term, scope, &state)) }
            return .and(bound)
        case .or(let terms):
            var bound: [BoundNode] = []
            for term in terms { bound.append(try bindNode(term, scope, &state)) }
            return .or(bound)
        case .comparison(let c): return .comparison(try bindComparison(c, scope, &state))
        }
    }

    // MARK: - Key paths

    /// What a side of a comparison is before the constants are typed.
    enum Operand: Sendable {
        /// A key path (or a resolved `$FETCH_SOURCE`): its bound form, type, whether it is a
        /// collection, and the key path as parsed (written out only for a message: its text is a
        /// cost of every binding).
        case typed(BoundExpression, OperandType, isCollection: Bool, path: PredicateKeyPath)
        /// A constant still to be converted to the other side's type.
        case raw(RawConstant)
    }

    func bindOperand(_ expression: KeelExpression, _ scope: Scope, _ state: inout BindingState) throws(KeelError) -> Operand {
        switch expression {
        case .literal(let l): return .raw(RawConstant(literal: l))
        case .list(let elements, let position):
            var raws: [RawConstant] = []
            for element in elements {
                guard case .raw(let raw) = try bindOperand(element, scope, &state) else {
                    throw PredicateError.at(element.position, expected: "a constant in a {list}", found: "the key path \(element)")
                }
                raws.append(raw)
            }
            return .raw(RawConstant(kind: .list(raws), position: position))
        case .argument(let index, let position):
            guard index < args.count else {
                throw PredicateError.at(position, expected: "an argument for %@ number \(index + 1) in args", found: "\(args.count) argument\(args.count == 1 ? "" : "s")")
            }
            state.argumentsUsed = max(state.argumentsUsed, index + 1)
            return .raw(try RawConstant(json: args[index], position: position, limits: limits))
        case .keyPath(let path): return try bindKeyPath(path, scope, &state)
        }
    }

    private enum Focus {
        case objects(EntityID)
        case value(AttributeType)
    }

    func bindKeyPath(_ path: PredicateKeyPath, _ scope: Scope, _ state: inout BindingState) throws(KeelError) -> Operand {
        let base: BoundKeyPath.Base
        var focus: Focus
        var isCollection = false
        switch path.base {
        case .object:
            if let groupRow { return try bindGroupRowName(path, groupRow) }
            base = .object
            focus = .objects(scope.entity)
        case .variable(let name):
            if let variable = scope.variables[name] {
                base = .variable(variable.slot)
                focus = .objects(variable.entity)
            } else if name == "FETCH_SOURCE" {
                return try bindFetchSource(path)
            } else {
                guard let value = vars[name] else {
                    throw PredicateError.at(path.position, expected: "a value for $\(name) in vars", found: "none")
                }
                guard path.components.isEmpty else {
                    throw PredicateError.at(path.componentPositions[0], expected: "an operator ($\(name) is a value, not an object)", found: "a key path")
                }
                return .raw(try RawConstant(json: value, position: path.position, limits: limits))
            }
        case .subquery(let collectionExpression, let variable, let predicate):
            if groupRow != nil {
                throw PredicateError.at(path.position, expected: "a name of the grouped rows (a groupBy key or an aggregate)", found: "SUBQUERY")
            }
            guard case .keyPath(let collectionPath) = collectionExpression,
                case .typed(.path(let collection), .object(let element), true, _) = try bindKeyPath(collectionPath, scope, &state),
                collection.aggregate == nil
            else {
                throw PredicateError.at(collectionExpression.position, expected: "a to-many key path as the SUBQUERY's collection", found: "\(collectionExpression)")
            }
            let slot = state.slots
            state.slots += 1
            var inner = scope
            inner.entity = element
            inner.variables[variable] = (slot, element)
            let bound = try bindNode(predicate, inner, &state)
            base = .subquery(BoundSubquery(collection: collection, slot: slot, predicate: bound))
            focus = .objects(element)
            isCollection = true
        }
        var steps: [BoundKeyPath.Step] = []
        var aggregate: (function: AggregateFunction, split: Int, component: Int)? = nil
        for (i, component) in path.components.enumerated() {
            let position = path.componentPositions.indices.contains(i) ? path.componentPositions[i] : path.position
            switch component {
            case .key(let name):
                guard case .objects(let entityID) = focus else {
                    throw PredicateError.at(position, expected: "an operator (the key before is an attribute, which has no keys)", found: "key \(name)")
                }
                let entity = model[entityID]
                guard let field = entity.field(named: name) else {
                    throw PredicateError.at(position, expected: "a property of \(entity.name)", found: "\"\(name)\"")
                }
                switch entity.properties[field] {
                case .attribute(let a):
                    if a.isTransient {
                        throw PredicateError.at(position, expected: "a stored property of \(entity.name) (\(name) is transient)", found: "\"\(name)\"")
                    }
                    steps.append(.attribute(field))
                    focus = .value(a.type)
                case .relationship(let r):
                    if r.isToMany {
                        if aggregate != nil {
                            throw PredicateError.at(position, expected: "a to-one key or an attribute after the aggregate", found: "the to-many \(name)")
                        }
                        isCollection = true
                        steps.append(.toMany(field))
                    } else {
                        steps.append(.toOne(field))
                    }
                    focus = .objects(r.destination)
                }
            case .aggregate(let function):
                guard aggregate == nil else {
                    throw PredicateError.at(position, expected: "one aggregate per key path", found: function.rawValue)
                }
                guard isCollection else {
                    throw PredicateError.at(position, expected: "a to-many key path before \(function.rawValue)", found: function.rawValue)
                }
                aggregate = (function, steps.count, i)
            }
        }
        guard let aggregate else {
            let type: OperandType =
                switch focus {
                case .objects(let e): .object(e)
                case .value(let t): .attribute(t)
                }
            if case .object = base, steps.count == 1, case .attribute(let field) = steps[0] {
                return .typed(.field(field), type, isCollection: false, path: path)
            }
            let bound = BoundKeyPath(base: base, steps: steps, aggregate: nil, isCollection: isCollection, source: path)
            return .typed(.path(bound), type, isCollection: isCollection, path: path)
        }
        let tail = Array(steps[aggregate.split...])
        let type = try aggregateType(aggregate.function, focus: focus, at: aggregate.component, path: path)
        let bound = BoundKeyPath(
            base: base, steps: Array(steps[..<aggregate.split]), aggregate: (aggregate.function, tail), isCollection: true, source: path)
        return .typed(.path(bound), type, isCollection: false, path: path)
    }

    /// A name of a grouped fetch's rows, in `having`: the components joined by dots are the name.
    private func bindGroupRowName(_ path: PredicateKeyPath, _ row: [String: (field: Int, type: OperandType)]) throws(KeelError) -> Operand {
        let expected = "a name of the grouped rows (a groupBy key or an aggregate)"
        var keys: [String] = []
        for (i, component) in path.components.enumerated() {
            switch component {
            case .key(let key): keys.append(key)
            case .aggregate(let function):
                let position = path.componentPositions.indices.contains(i) ? path.componentPositions[i] : path.position
                throw PredicateError.at(position, expected: expected, found: function.rawValue)
            }
        }
        let name = keys.joined(separator: ".")
        guard !keys.isEmpty, let column = row[name] else {
            throw PredicateError.at(path.position, expected: expected, found: keys.isEmpty ? "SELF" : "\"\(name)\"")
        }
        return .typed(.field(column.field), column.type, isCollection: false, path: path)
    }

    /// The type an aggregate yields, or why it cannot apply.
    private func aggregateType(_ function: AggregateFunction, focus: Focus, at component: Int, path: PredicateKeyPath) throws(KeelError) -> OperandType {
        func position(_ i: Int) -> SourcePosition {
            path.componentPositions.indices.contains(i) ? path.componentPositions[i] : path.position
        }
        if function == .count {
            guard component == path.components.count - 1 else {
                throw PredicateError.at(position(component + 1), expected: "nothing after @count", found: "a key")
            }
            return .attribute(.int64)
        }
        guard case .value(let type) = focus else {
            throw PredicateError.at(position(component), expected: "an attribute to aggregate (like employees.\(function.rawValue).salary)", found: "objects")
        }
        switch (function, type) {
        case (.sum, .int16), (.sum, .int32), (.sum, .int64): return .attribute(.int64)
        case (.sum, .double), (.sum, .float), (.avg, .int16), (.avg, .int32), (.avg, .int64), (.avg, .double), (.avg, .float):
            return .attribute(.double)
        case (.sum, .decimal), (.avg, .decimal): return .attribute(.decimal)
        case (.min, _), (.max, _):
            switch type {
            case .int16, .int32, .int64, .double, .float, .decimal, .date, .string: return .attribute(type)
            default: break
            }
        default: break
        }
        throw PredicateError.at(position(component), expected: "a numeric attribute for \(function.rawValue)", found: "a \(type.rawValue) attribute")
    }

    /// `$FETCH_SOURCE` and `$FETCH_SOURCE.key.key`: read now from the source object.
    private func bindFetchSource(_ path: PredicateKeyPath) throws(KeelError) -> Operand {
        guard let source = fetchSource else {
            throw PredicateError.at(path.position, expected: "$FETCH_SOURCE only in a fetched property's predicate", found: "$FETCH_SOURCE")
        }
        var object: StoredObject? = source.object
        var entity = model[source.object.id.entity]
        for (i, component) in path.components.enumerated() {
            let position = path.componentPositions.indices.contains(i) ? path.componentPositions[i] : path.position
            let name: String
            switch component {
            case .key(let key): name = key
            case .aggregate(let function): throw PredicateError.at(position, expected: "a property of \(entity.name)", found: function.rawValue)
            }
            guard let field = entity.field(named: name) else {
                throw PredicateError.at(position, expected: "a property of \(entity.name)", found: "\"\(name)\"")
            }
            let last = i == path.components.count - 1
            switch entity.properties[field] {
            case .attribute(let a):
                guard last else { throw PredicateError.at(position, expected: "an operator after the attribute \(name)", found: "a key") }
                let value = object.flatMap { field < $0.values.count ? $0.values[field] : nil } ?? .null
                return .typed(.constant(value), .attribute(a.type), isCollection: false, path: path)
            case .relationship(let r) where r.isToMany:
                guard last else { throw PredicateError.at(position, expected: "an operator after the to-many \(name)", found: "a key") }
                let members = try object.map { o throws(KeelError) in try source.graph.members(of: o.id, field: field) } ?? []
                return .typed(.list(members.map { .object($0) }), .object(r.destination), isCollection: true, path: path)
            case .relationship(let r):
                if case .object(let target)? = object.map({ field < $0.values.count ? $0.values[field] : .null }) {
                    object = try source.graph.object(target)
                } else {
                    object = nil
                }
                entity = model[r.destination]
            }
        }
        let value: Value = object.map { .object($0.id) } ?? .null
        return .typed(.constant(value), .object(entity.id), isCollection: false, path: path)
    }
}
