// FETCH (rows streamed as they are read, with back-pressure: Session.stream waits while the
// client is not reading), COUNT and EXPLAIN, on the request's context — so a fetch sees the
// context's pending changes (inserted objects match, deleted ones do not) and its predicate
// reads related objects as the context sees them (ContextGraph).
//
// Without `sort`, objects stream in ID order as the context's scan yields them. With `sort`,
// the sort keys and IDs of every match are gathered first (not the objects), ordered
// (ObjectOrdering), cut by offset and limit, and then each object is read and streamed.

import KeelModel
import KeelProtocol

extension Session {
    func fetch(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let arguments = try FetchArguments(request, model: server.model)
        let filter = arguments.filter(in: context)
        if arguments.result == .count {
            let total = try context.count(entity: arguments.entity.name, includeSubentities: arguments.includeSubentities, filter: filter)
            return ["count": .int(Int64(arguments.window(total)))]
        }
        let tag = request.tag
        if let ordering = arguments.ordering {
            let graph = ContextGraph(context: context)
            var keyed: [(values: [Value], id: ObjectID)] = []
            try context.fetch(entity: arguments.entity.name, includeSubentities: arguments.includeSubentities, filter: filter) {
                (object) throws(KeelError) -> Bool in
                let row = StoredObject(id: object.id, version: object.version, values: object.values)
                keyed.append((try ordering.sortValues(of: row, in: graph), object.id))
                return true
            }
            keyed.sort { ordering.compare($0.values, $0.id, $1.values, $1.id) == .orderedAscending }
            let window = keyed.dropFirst(arguments.offset).prefix(arguments.limit ?? Int.max)
            for entry in window {
                let object = try context.get(entry.id, include: arguments.result == .objects ? arguments.include : [])
                try stream(.row(tag: tag, row(object, arguments, context: context, included: true)))
            }
            return ["count": .int(Int64(window.count))]
        }
        let delivered = try context.fetch(
            entity: arguments.entity.name, includeSubentities: arguments.includeSubentities, filter: filter,
            limit: arguments.limit, offset: arguments.offset
        ) { (object) throws(KeelError) -> Bool in
            try stream(.row(tag: tag, try row(object, arguments, context: context, included: false)))
            return true
        }
        return ["count": .int(Int64(delivered))]
    }

    /// One ROW of a fetch in the requested form.
    private func row(_ object: ManagedObject, _ arguments: FetchArguments, context: ObjectContext, included: Bool) throws(KeelError) -> JSON {
        let model = server.model
        switch arguments.result {
        case .ids:
            return ["$id": .string(object.idText)]
        case .dictionaries:
            let full = object.json(in: model)
            var picked: OrderedJSON = [:]
            let names = arguments.properties.isEmpty ? object.entity.properties.map(\.name) : arguments.properties
            for name in names { picked[name] = full[name] ?? .null }
            return .object(picked)
        case .objects, .count:
            if included || arguments.include.isEmpty { return object.json(in: model) }
            return try context.get(object.id, include: arguments.include).json(in: model)
        }
    }

    func count(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let arguments = try FetchArguments(request, model: server.model)
        let total = try context.count(
            entity: arguments.entity.name, includeSubentities: arguments.includeSubentities, filter: arguments.filter(in: context))
        return ["count": .int(Int64(arguments.window(total)))]
    }

    /// How this build runs the fetch. There is no planner yet: every fetch scans the entity's
    /// objects in ID order with the context's pending changes laid over, filters, then sorts.
    func explain(_ request: Request) throws(KeelError) -> JSON? {
        _ = try context(for: request)
        let arguments = try FetchArguments(request, model: server.model)
        let entities = arguments.includeSubentities && arguments.entity.family.count > 1
            ? "\(arguments.entity.name) and its sub-entities" : arguments.entity.name
        let filter = arguments.predicate.map { $0.source.description } ?? "none"
        var plan = "scan \(entities) in ID order (no index: the planner is not in this build), pending changes of the context laid over"
        plan += "; filter: \(filter)"
        var sort: JSON = .null
        if let ordering = arguments.ordering {
            let keys = ordering.keys.map { "\($0.descriptor.key) \($0.descriptor.ascending ? "ASC" : "DESC")\($0.descriptor.caseInsensitive ? " [c]" : "")" }
            plan += "; sort in memory by \(keys.joined(separator: ", ")) (the keys of every match are held)"
            sort = .array(keys.map(JSON.string))
        }
        if arguments.offset > 0 { plan += "; skip \(arguments.offset)" }
        if let limit = arguments.limit { plan += "; stop after \(limit)" }
        return ["plan": .string(plan), "index": .null, "filter": .string(filter), "sort": sort]
    }
}
