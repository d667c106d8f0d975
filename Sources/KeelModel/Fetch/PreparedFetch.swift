// A fetch request checked against the model: the entity, the predicate bound (typed constants,
// folded patterns, field numbers), the sort bound, and the fields of `properties` and `include`.
// Errors are the protocol's: NO_SUCH_ENTITY, NO_SUCH_PROPERTY, PREDICATE, BAD_REQUEST.
//
// A class, and it keeps of the request only the scalars a run reads: the fetch hands it to the
// planner and the materializer, and copying a struct of a dozen references (and the request's
// strings and arrays) into each was a measurable part of a small query's cost.

final class PreparedFetch: Sendable {
    /// One name of `include`.
    enum Inclusion: Sendable {
        case relationship(name: String, field: Int, Relationship)
        case fetched(FetchedProperty)
    }

    let entity: Entity
    /// The request's scalars (its texts and lists are used up here).
    let result: FetchRequest.ResultType
    let limit: Int?
    let offset: Int
    let includeSubentities: Bool
    let usesIndexes: Bool
    let predicate: BoundPredicate?
    let ordering: ObjectOrdering?
    /// Fields of `properties` (nil: every one); a `dictionaries` request's key paths are not
    /// among them (`keyPaths`).
    let fields: [Int]?
    /// A `dictionaries` request whose `properties` hold key paths through to-ones
    /// (`department.name`) or `"$id"`: every name of `properties` in its order; nil for any other
    /// request.
    let keyPaths: [Projected]?
    let inclusions: [Inclusion]
    /// The shape's entry this request was prepared from (nil: prepared from scratch), where a
    /// plan's choice is kept for the requests after it (`FetchPlanner.Template`).
    let shape: PreparedShape?

    init(_ request: FetchRequest, model: Model, fetchSource: FetchSource? = nil) throws(KeelError) {
        guard let entity = model.entity(named: request.entity) else {
            throw KeelError(.noSuchEntity, "no entity \"\(request.entity)\" in model \(model.name)", details: ["entity": .string(request.entity)])
        }
        self.entity = entity
        result = request.result
        limit = request.limit
        offset = request.offset
        includeSubentities = request.includeSubentities
        usesIndexes = request.usesIndexes
        if let text = request.predicate, !Self.isBlank(text) {
            let binder = PredicateBinder(model: model, args: request.args, vars: request.vars, fetchSource: fetchSource)
            predicate = try binder.bind(text, to: entity.id)
        } else {
            if !request.args.isEmpty { throw Self.argumentsWithoutPredicate }
            predicate = nil
        }
        ordering = request.sort.isEmpty ? nil : try ObjectOrdering(request.sort, entity: entity.id, model: model)
        if let names = request.properties {
            var fields: [Int] = []
            var projected: [Projected] = []
            for name in names {
                if name == Projected.objectIDName {
                    // The object's ID (Core Data's evaluatedObject): a dictionary's `"$id"`; an
                    // object's wire form has it always.
                    if request.result == .dictionaries { projected.append(.objectID) }
                    continue
                }
                if request.result == .dictionaries, name.contains(".") {
                    projected.append(.path(try KeyPathProjection(name, from: entity, in: model)))
                    continue
                }
                guard let field = entity.field(named: name) else {
                    throw KeelError(.noSuchProperty, "\(entity.name) has no property \"\(name)\"", details: ["property": .string(name)])
                }
                fields.append(field)
                projected.append(.field(field))
            }
            self.fields = fields
            keyPaths = projected.count > fields.count ? projected : nil
        } else {
            keyPaths = nil
            if request.result == .dictionaries {
                throw KeelError(.badRequest, "result \"dictionaries\" needs \"properties\"")
            }
            self.fields = nil
        }
        var inclusions: [Inclusion] = []
        for name in request.include {
            if let field = entity.field(named: name) {
                guard case .relationship(let r) = entity.properties[field] else {
                    throw KeelError(.badRequest, "\(entity.name).\(name) is an attribute: only relationships and fetched properties can be included")
                }
                inclusions.append(.relationship(name: name, field: field, r))
            } else if let fetched = entity.fetchedProperty(named: name) {
                inclusions.append(.fetched(fetched))
            } else {
                throw KeelError(.noSuchProperty, "\(entity.name) has no property \"\(name)\"", details: ["property": .string(name)])
            }
        }
        self.inclusions = inclusions
        shape = nil
    }

    /// The request prepared from its shape's entry (PreparedFetchCache.swift): only the
    /// predicate's arguments and variables are bound.
    convenience init(_ shape: PreparedShape, _ request: FetchRequest) throws(KeelError) {
        try self.init(shape, args: request.args, vars: request.vars, text: request.predicate)
    }

    /// A request of `shape` with `args` and `vars` (its predicate's text `text`, for the position
    /// an argument count error names): from a shape's entry, or a `PreparedFetchRequest`'s.
    init(_ shape: PreparedShape, args: [JSON], vars: [String: JSON], text: String?) throws(KeelError) {
        let first = shape.first
        entity = first.entity
        result = first.result
        limit = first.limit
        offset = first.offset
        includeSubentities = first.includeSubentities
        usesIndexes = first.usesIndexes
        if let template = shape.predicate {
            let binder = PredicateBinder(model: shape.model, args: args, vars: vars)
            let text = text ?? ""  // the closure captures the text, not a copy of the request
            predicate = try template.bind(with: binder) { text.unicodeScalars.count }
        } else {
            if !args.isEmpty { throw Self.argumentsWithoutPredicate }
            predicate = nil
        }
        ordering = first.ordering
        fields = first.fields
        keyPaths = first.keyPaths
        inclusions = first.inclusions
        self.shape = shape
    }

    static var argumentsWithoutPredicate: KeelError {
        KeelError(.predicate, "args were given but there is no predicate", details: ["position": 0])
    }

    /// Whether `text` is empty or only white space (Unicode's White_Space, as
    /// `Character.isWhitespace`). A text that starts with an ASCII character other than
    /// tab, line feed, vertical tab, form feed, carriage return or space is not: decided on its
    /// first byte instead of walking its characters (a cost of every request).
    static func isBlank(_ text: String) -> Bool {
        if let first = text.utf8.first, first < 0x80, first != 0x20, !(0x09...0x0D).contains(first) { return false }
        return text.allSatisfy(\.isWhitespace)
    }
}

extension PreparedFetch {
    /// The plan for this fetch over `state`: indexes when the state's snapshot has them and the
    /// request allows them, else a scan.
    func plan(in state: ContextOverlay, explaining: Bool) throws(KeelError) -> FetchPlan {
        try plan(in: FetchGraph(state), explaining: explaining)
    }

    /// The plan over the graph's state (the graph the fetch then runs on, shared, not copied).
    /// A request prepared from its shape's entry reuses the choice kept there when its values
    /// allow (`FetchPlanner.Template`), and keeps one when none is (an EXPLAIN neither reads nor
    /// keeps one: it counts its estimate afresh).
    func plan(in graph: FetchGraph, explaining: Bool) throws(KeelError) -> FetchPlan {
        let indexes = usesIndexes ? graph.state.base?.indexReading : nil
        // Only over a state with indexes: a child context's view (none) plans a scan, afresh.
        // (Asked before the reads are moved into the planner: not a copy of them each.)
        let reusable = shape != nil && !explaining && indexes != nil
        let planner = FetchPlanner(
            graph: graph, entity: entity.id, includeSubentities: includeSubentities, predicate: predicate,
            ordering: ordering, limit: limit, offset: offset, indexes: consume indexes, explaining: explaining,
            usesFastPaths: usesIndexes)
        guard reusable, let shape else { return try planner.plan() }
        let kept = shape.planTemplate
        if let kept, let plan = try planner.plan(reusing: kept) { return plan }
        var made: FetchPlanner.Template? = nil
        let plan = try planner.plan(keeping: kept == nil, &made)
        if let made { shape.keep(made) }
        return plan
    }
}

/// One name of a `dictionaries` request's `properties`: a field of the entity, a key path, or the
/// object's ID.
enum Projected: Sendable {
    case field(Int)
    case path(KeyPathProjection)
    /// `"$id"`: the object's ID, `"Entity/N"` (Core Data's `NSExpression.expressionForEvaluatedObject()`
    /// in `propertiesToFetch`, which gives the object's ID in a dictionary result).
    case objectID

    /// The name in `properties` that stands for the object's ID.
    static let objectIDName = "$id"
}

/// A key path of `properties` (Core Data's `propertiesToFetch` with `"department.name"`): to-one
/// relationships from the fetched entity, ending at an attribute or a to-one of the last one's
/// destination. Its value is read from the related objects as the context sees them; a to-one
/// on the way that is unset makes it null.
struct KeyPathProjection: Sendable {
    /// As written in `properties`: the dictionary's key.
    let name: String
    /// The to-one fields followed, from the fetched entity on.
    let hops: [Int]
    /// The field read on the last object, and its property (for the wire form).
    let field: Int
    let property: Property

    init(_ name: String, from entity: Entity, in model: Model) throws(KeelError) {
        if name == Projected.objectIDName {
            // Reached only by grouped fetches (a plain dictionaries fetch takes `"$id"` first).
            throw KeelError(
                .badRequest,
                "\"$id\" (each object's ID) cannot be a groupBy key, an aggregate's key or a grouped row's column: a group's row stands for many objects")
        }
        self.name = name
        let components = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var current = entity
        var hops: [Int] = []
        for (i, component) in components.enumerated() {
            guard let field = current.field(named: component) else {
                throw KeelError(
                    .noSuchProperty, "\(current.name) has no property \"\(component)\" (in the key path \"\(name)\")",
                    details: ["property": .string(name)])
            }
            let property = current.properties[field]
            if i == components.count - 1 {
                if case .relationship(let r) = property, r.isToMany {
                    throw KeelError(.badRequest, "the key path \"\(name)\" ends at the to-many \(current.name).\(component): a key path in properties, groupBy or an aggregate ends at an attribute or a to-one")
                }
                self.hops = hops
                self.field = field
                self.property = property
                return
            }
            guard case .relationship(let r) = property, !r.isToMany else {
                throw KeelError(.badRequest, "the key path \"\(name)\" goes through \(current.name).\(component), which is not a to-one relationship: a key path in properties, groupBy or an aggregate follows to-ones")
            }
            hops.append(field)
            current = model[r.destination]
        }
        preconditionFailure("split gives at least one component")
    }

    /// The value at the end of the path from `object`, as `graph` reads the objects on the way.
    func value(from object: ManagedObject, graph: FetchGraph) throws(KeelError) -> Value {
        try value(from: object.values, graph: graph)
    }

    /// The value at the end of the path from an object of these values.
    func value(from values: [Value], graph: FetchGraph) throws(KeelError) -> Value {
        let first = firstField < values.count ? values[firstField] : .null
        return hops.isEmpty ? first : try value(throughFirst: first, graph: graph)
    }

    /// The field of the fetched object the path starts with: its first to-one, or the field itself.
    var firstField: Int { hops.first ?? field }

    /// The value at the end of the path, given the value of `firstField` (a grouped fetch groups
    /// by that first, and follows the path once per group).
    func value(throughFirst first: Value, graph: FetchGraph) throws(KeelError) -> Value {
        guard !hops.isEmpty else { return first }
        guard case .object(let id) = first, var object = try graph.object(id) else { return .null }
        for hop in hops.dropFirst() {
            guard hop < object.values.count, case .object(let next) = object.values[hop], let found = try graph.object(next) else { return .null }
            object = found
        }
        return field < object.values.count ? object.values[field] : .null
    }
}
