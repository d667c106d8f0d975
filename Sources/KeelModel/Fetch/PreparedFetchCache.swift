// Prepared requests by their shape: what `PreparedFetch` makes of a request that does not depend
// on its `%@` arguments or `$VARS` — the entity found by name, the sort keys bound, the fields of
// `properties` and `include`, and the predicate bound with its key paths resolved — kept per
// shape, so a repeated request (an application's fetch template run with other arguments, as
// SQLite runs a statement prepared once and re-bound) binds only its arguments.
//
// The shape is the request less `args` and `vars`: entity, predicate text, sort descriptors,
// `properties`, `include`, result type, limit, offset, `includeSubentities`, `usesIndexes`, and
// the model's identity (`Model.identity`: one per loaded model; a migrated model, with new
// entities, properties or indexes, is another model, so it never meets an entry made for the old
// one, and each entry holds its model, so an identity is not reused while its entries live).
// The plan is made per request over the state it reads (the counts behind a choice between
// several indexes, to-one targets read for existence, semi-joins' targets), except that a choice
// no value decided is kept in the entry (`FetchPlanner.Template`: one candidate index, every term a
// comparison of the entity's own attributes): the next requests make only their terms' keys and
// that index's ranges, by the planner's own code, and are planned afresh when their values would
// change what the choice rests on. The indexes are the model's, so a model with another index set
// is another entry; a state without index reads (a child context) plans afresh.
//
// What stays per request in the predicate (`PredicateTemplate`): every comparison with an
// argument, a `$VAR` or a SUBQUERY-free variable base in it is bound again through the binder's
// own code (`finishComparison`) — constants converted by the type of what they meet, patterns
// folded, the same errors in the same order — with its key-path side taken from the entry
// (resolving a key path depends on the model and the entity alone). Comparisons with neither
// are kept as bound. A predicate with a SUBQUERY is bound whole per request (its slots are
// numbered in binding order), and a fetched property's request (`$FETCH_SOURCE`, read from its
// source object) never uses the cache. A request whose first binding fails is not kept.
//
// Bounded like the parse cache (PredicateCache.swift): when full it is emptied and refilled. An
// entry keeps its first request (its bound predicate with that request's arguments), so a request
// whose arguments and variables are large (`keepsArguments`: a long `IN %@` list, long strings)
// is prepared from scratch and not kept: 512 entries must not pin 512 requests of up to
// `maxRequestBytes` each in a daemon's memory. It still uses an entry made by a smaller request.

import Synchronization

/// A prepared request of one shape: the first one prepared (its predicate bound with that
/// request's arguments, the rest shared by every request of the shape) and its predicate's template.
final class PreparedShape: Sendable {
    let model: Model
    let first: PreparedFetch
    /// Nil: no predicate.
    let predicate: PredicateTemplate?
    /// The choice of the first plan made for a request of the shape over a state with indexes,
    /// when no argument value decided it (FetchPlanner.Template); set once. (A `Mutex`: an
    /// `AtomicLazyReference`'s load, not inlined, cost ~640 instructions a request.)
    private let plan = Mutex<FetchPlanner.Template?>(nil)

    var planTemplate: FetchPlanner.Template? { plan.withLock { $0 } }

    /// Keeps `template` unless one is kept already.
    func keep(_ template: FetchPlanner.Template) {
        plan.withLock { kept in
            if kept == nil { kept = template }
        }
    }

    init(_ first: PreparedFetch, model: Model) {
        self.model = model
        self.first = first
        predicate = first.predicate.map { bound in
            PredicateTemplate(bound.source, bound: bound, binder: PredicateBinder(model: model))
        }
    }
}

/// A bound predicate with the parts that depend on a request's arguments and variables left to
/// bind per request.
struct PredicateTemplate: Sendable {
    indirect enum Node: Sendable {
        /// Nothing in it depends on the request: as bound the first time.
        case bound(BoundNode)
        case not(Node)
        case and([Node])
        case or([Node])
        /// Bound per request; a side that is a key path from the object is kept resolved (nil:
        /// bound per request — a constant, an argument, a list, a variable).
        case comparison(Comparison, left: PredicateBinder.Operand?, right: PredicateBinder.Operand?)
    }

    let source: KeelPredicate
    let entity: EntityID
    /// Nil when the predicate is bound whole per request (it has a SUBQUERY).
    let root: Node?

    /// The template of `source` as `bound` bound it for `entity` (the same model).
    init(_ source: KeelPredicate, bound: BoundPredicate, binder: PredicateBinder) {
        self.source = source
        entity = bound.entity
        root = Self.hasSubquery(source) ? nil : Self.node(source, bound.root, binder, PredicateBinder.Scope(entity: bound.entity))
    }

    private static func node(_ p: KeelPredicate, _ b: BoundNode, _ binder: PredicateBinder, _ scope: PredicateBinder.Scope) -> Node? {
        switch (p, b) {
        case (.constant, _): return .bound(b)
        case (.not(let inner), .not(let boundInner)):
            guard let n = node(inner, boundInner, binder, scope) else { return nil }
            if case .bound = n { return .bound(b) }
            return .not(n)
        case (.and(let terms), .and(let bounds)), (.or(let terms), .or(let bounds)):
            guard terms.count == bounds.count else { return nil }
            var nodes: [Node] = []
            var fixed = true
            for (t, u) in zip(terms, bounds) {
                guard let n = node(t, u, binder, scope) else { return nil }
                if case .bound = n {} else { fixed = false }
                nodes.append(n)
            }
            if fixed { return .bound(b) }
            if case .and = p { return .and(nodes) }
            return .or(nodes)
        case (.comparison(let c), .comparison):
            if !dependsOnRequest(c.left), !dependsOnRequest(c.right) { return .bound(b) }
            return .comparison(c, left: resolved(c.left, binder, scope), right: resolved(c.right, binder, scope))
        default:
            return nil
        }
    }

    /// An argument, a variable base (`$VAR`, `$FETCH_SOURCE`), or either inside a list.
    private static func dependsOnRequest(_ e: KeelExpression) -> Bool {
        switch e {
        case .literal: return false
        case .argument: return true
        case .list(let elements, _): return elements.contains(where: dependsOnRequest)
        case .keyPath(let path):
            if case .object = path.base { return false }
            return true
        }
    }

    /// A key path from the object, resolved once (nil for every other operand).
    private static func resolved(_ e: KeelExpression, _ binder: PredicateBinder, _ scope: PredicateBinder.Scope) -> PredicateBinder.Operand? {
        guard case .keyPath(let path) = e, case .object = path.base else { return nil }
        var state = PredicateBinder.BindingState()
        return try? binder.bindKeyPath(path, scope, &state)
    }

    static func hasSubquery(_ p: KeelPredicate) -> Bool {
        switch p {
        case .constant: return false
        case .not(let inner): return hasSubquery(inner)
        case .and(let terms), .or(let terms): return terms.contains(where: hasSubquery)
        case .comparison(let c): return hasSubquery(c.left) || hasSubquery(c.right)
        }
    }

    private static func hasSubquery(_ e: KeelExpression) -> Bool {
        switch e {
        case .literal, .argument: return false
        case .list(let elements, _): return elements.contains(where: hasSubquery)
        case .keyPath(let path):
            if case .subquery = path.base { return true }
            return false
        }
    }

    /// The predicate bound with `binder`'s arguments and variables.
    func bind(with binder: PredicateBinder, textLength: () -> Int) throws(KeelError) -> BoundPredicate {
        guard let root else { return try binder.bind(source, to: entity, textLength: textLength) }
        var state = PredicateBinder.BindingState()
        let scope = PredicateBinder.Scope(entity: entity)
        let bound = try Self.bind(root, binder, scope, &state)
        try binder.checkArgumentsUsed(state, textLength: textLength)
        return BoundPredicate(entity: entity, root: bound, source: source, slotCount: state.slots)
    }

    private static func bind(
        _ node: Node, _ binder: PredicateBinder, _ scope: PredicateBinder.Scope, _ state: inout PredicateBinder.BindingState
    ) throws(KeelError) -> BoundNode {
        switch node {
        case .bound(let b): return b
        case .not(let inner): return .not(try bind(inner, binder, scope, &state))
        case .and(let nodes):
            var bound: [BoundNode] = []
            bound.reserveCapacity(nodes.count)
            for n in nodes { bound.append(try bind(n, binder, scope, &state)) }
            return .and(bound)
        case .or(let nodes):
            var bound: [BoundNode] = []
            bound.reserveCapacity(nodes.count)
            for n in nodes { bound.append(try bind(n, binder, scope, &state)) }
            return .or(bound)
        case .comparison(let c, let left, let right):
            let l: PredicateBinder.Operand
            if let left { l = left } else { l = try binder.bindOperand(c.left, scope, &state) }
            let r: PredicateBinder.Operand
            if let right { r = right } else { r = try binder.bindOperand(c.right, scope, &state) }
            return .comparison(try binder.finishComparison(c, l, r))
        }
    }
}

enum PreparedFetchCache {
    static let capacity = 512

    /// A request less its arguments and variables, on one model. Its fields, not the request
    /// with `args` and `vars` emptied: copying and comparing whole requests cost ~600
    /// instructions a look-up more.
    struct Key: Hashable {
        let model: ObjectIdentifier
        let entity: String
        let predicate: String?
        let sort: [KeelSortDescriptor]
        let properties: [String]?
        let include: [String]
        let result: FetchRequest.ResultType
        let limit: Int?
        let offset: Int
        let includeSubentities: Bool
        let usesIndexes: Bool

        init(_ request: FetchRequest, model: Model) {
            self.model = model.identity
            entity = request.entity
            predicate = request.predicate
            sort = request.sort
            properties = request.properties
            include = request.include
            result = request.result
            limit = request.limit
            offset = request.offset
            includeSubentities = request.includeSubentities
            usesIndexes = request.usesIndexes
        }

        /// Hashes the model, the predicate text and the scalars: the entity name and the lists are
        /// compared only (requests of one predicate text on several entities are rare; hashing
        /// every string of the shape was most of a look-up's cost).
        func hash(into hasher: inout Hasher) {
            hasher.combine(model)
            hasher.combine(predicate)
            hasher.combine(limit)
            hasher.combine(offset)
            hasher.combine(sort.count)
        }
    }

    private static let entries = Mutex<[Key: PreparedShape]>([:])

    /// `PreparedFetch(request, model:)`, binding only the arguments and variables when a request
    /// of this shape was prepared before on this model.
    static func prepare(_ request: FetchRequest, model: Model) throws(KeelError) -> PreparedFetch {
        let key = Key(request, model: model)
        if let shape = entries.withLock({ $0[key] }) { return try PreparedFetch(shape, request) }
        let prepared = try PreparedFetch(request, model: model)
        guard keepsArguments(request) else { return prepared }
        let shape = PreparedShape(prepared, model: model)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = shape
        }
        return prepared
    }

    /// The most an entry's first request may hold in arguments and variables (`weight`).
    static let argumentBudget = 4096

    /// Whether the request's arguments and variables are small enough for its entry to keep them.
    static func keepsArguments(_ request: FetchRequest) -> Bool {
        var budget = argumentBudget
        for arg in request.args where !weigh(arg, &budget) { return false }
        for (name, value) in request.vars where !weigh(.string(name), &budget) || !weigh(value, &budget) { return false }
        return true
    }

    /// Takes `value`'s weight (a string's bytes, 8 for any other value, arrays and objects their
    /// elements') from `budget`; false once it is spent, without walking the rest.
    private static func weigh(_ value: JSON, _ budget: inout Int) -> Bool {
        switch value {
        case .string(let text): budget -= 8 + text.utf8.count
        case .array(let items):
            budget -= 8
            for item in items where budget >= 0 { _ = weigh(item, &budget) }
        case .object(let members):
            budget -= 8
            for (key, item) in members where budget >= 0 {
                budget -= key.utf8.count
                _ = weigh(item, &budget)
            }
        case .null, .bool, .int, .double: budget -= 8
        }
        return budget >= 0
    }

    /// Entries held (tests).
    static var count: Int { entries.withLock { $0.count } }

    /// The entry of the request's shape, if any (tests).
    static func entry(_ request: FetchRequest, model: Model) -> PreparedShape? {
        entries.withLock { $0[Key(request, model: model)] }
    }

    /// Whether a request of this shape has an entry (tests).
    static func holds(_ request: FetchRequest, model: Model) -> Bool {
        entries.withLock { $0[Key(request, model: model)] != nil }
    }
}
