// The arguments of FETCH, COUNT and EXPLAIN (spec/protocol.md, "FETCH"; Docs/Predicates.md),
// checked once: what to fetch, how much, in what form, the predicate bound to the entity (with
// `args` and `vars`) and the sort descriptors bound to it. Errors: NO_SUCH_ENTITY,
// NO_SUCH_PROPERTY, PREDICATE (with `details.position`), BAD_REQUEST.

import KeelModel
import KeelProtocol

struct FetchArguments {
    enum ResultKind: String {
        case objects, ids, count, dictionaries
    }

    var entity: Entity
    var includeSubentities: Bool
    var limit: Int?
    var offset: Int
    var result: ResultKind
    var properties: [String]
    var include: [String]
    /// nil: every object.
    var predicate: BoundPredicate?
    /// nil: ID order.
    var ordering: ObjectOrdering?

    init(_ request: Request, model: Model) throws(KeelError) {
        let command = request.command
        let name = request.arguments["entity"]?.stringValue ?? ""
        guard let entity = model.entity(named: name) else {
            throw KeelError(.noSuchEntity, "no entity \(name) in model \(model.name)")
        }
        self.entity = entity
        includeSubentities = request.arguments["includeSubentities"]?.boolValue ?? true
        if let limit = request.arguments["limit"]?.intValue {
            guard limit >= 0 else { throw KeelError(.badRequest, "\(command): \"limit\" must not be negative") }
            self.limit = Int(clamping: limit)
        }
        offset = 0
        if let offset = request.arguments["offset"]?.intValue {
            guard offset >= 0 else { throw KeelError(.badRequest, "\(command): \"offset\" must not be negative") }
            self.offset = Int(clamping: offset)
        }
        let resultName = request.arguments["result"]?.stringValue ?? "objects"
        guard let result = ResultKind(rawValue: resultName) else {
            throw KeelError(.badRequest, "\(command): \"result\" is objects, ids, count or dictionaries, not \"\(resultName)\"")
        }
        self.result = result
        properties = request.arguments["properties"]?.arrayValue?.compactMap(\.stringValue) ?? []
        for property in properties where entity.field(named: property) == nil {
            throw KeelError(.noSuchProperty, "\(entity.name) has no property \"\(property)\"")
        }
        include = request.arguments["include"]?.arrayValue?.compactMap(\.stringValue) ?? []
        predicate = try Self.predicate(request, entity: entity, model: model)
        if let sort = request.arguments["sort"]?.arrayValue, !sort.isEmpty {
            ordering = try ObjectOrdering(try Self.sortDescriptors(sort, command: command), entity: entity.id, model: model)
        }
    }

    /// The request's predicate bound to `entity`, nil when it has none. Shared with BATCH.*.
    static func predicate(_ request: Request, entity: Entity, model: Model) throws(KeelError) -> BoundPredicate? {
        guard let text = request.arguments["predicate"]?.stringValue else { return nil }
        var vars: [String: JSON] = [:]
        for (key, value) in request.arguments["vars"]?.objectValue ?? [:] { vars[key] = value }
        let binder = PredicateBinder(model: model, args: request.arguments["args"]?.arrayValue ?? [], vars: vars)
        return try binder.bind(text, to: entity.id)
    }

    private static func sortDescriptors(_ items: [JSON], command: String) throws(KeelError) -> [KeelSortDescriptor] {
        var out: [KeelSortDescriptor] = []
        for (i, item) in items.enumerated() {
            guard let members = item.objectValue, let key = members["key"]?.stringValue else {
                throw KeelError(.badRequest, "\(command): sort[\(i)] must be {\"key\":…,\"ascending\":true,\"caseInsensitive\":false}")
            }
            for name in members.keys where !["key", "ascending", "caseInsensitive"].contains(name) {
                throw KeelError(.badRequest, "\(command): sort[\(i)] has an unknown key \"\(name)\" (it takes key, ascending, caseInsensitive)")
            }
            let ascending = members["ascending"]
            let caseInsensitive = members["caseInsensitive"]
            guard ascending == nil || ascending?.boolValue != nil, caseInsensitive == nil || caseInsensitive?.boolValue != nil else {
                throw KeelError(.badRequest, "\(command): sort[\(i)].ascending and .caseInsensitive are booleans")
            }
            out.append(KeelSortDescriptor(key: key, ascending: ascending?.boolValue ?? true, caseInsensitive: caseInsensitive?.boolValue ?? false))
        }
        return out
    }

    /// The filter a context's fetch runs, reading related objects as `context` sees them.
    func filter(in context: ObjectContext) -> ((ObjectValues) throws(KeelError) -> Bool)? {
        guard let predicate else { return nil }
        let graph = ContextGraph(context: context)
        return { (object: ObjectValues) throws(KeelError) -> Bool in
            try predicate.evaluate(try object.storedObject(), in: graph)
        }
    }

    /// How many of `total` matches a fetch returns after offset and limit.
    func window(_ total: Int) -> Int {
        let afterOffset = max(0, total - offset)
        return limit.map { min($0, afterOffset) } ?? afterOffset
    }
}
