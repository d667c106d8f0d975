// FETCH (rows streamed as they are read, with back-pressure: Session.stream waits while the
// client is not reading), COUNT and EXPLAIN, on the request's context — so a fetch sees the
// context's pending changes (inserted objects match, deleted ones do not).

import KeelModel
import KeelProtocol

extension Session {
    func fetch(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let arguments = try FetchArguments(request, model: server.model)
        let model = server.model
        if arguments.result == .count {
            let total = try context.count(
                entity: arguments.entity.name, includeSubentities: arguments.includeSubentities, filter: arguments.filter)
            return ["count": .int(Int64(arguments.window(total)))]
        }
        let tag = request.tag
        let delivered = try context.fetch(
            entity: arguments.entity.name, includeSubentities: arguments.includeSubentities, filter: arguments.filter,
            limit: arguments.limit, offset: arguments.offset
        ) { (object) throws(KeelError) -> Bool in
            let row: JSON
            switch arguments.result {
            case .ids:
                row = ["$id": .string(object.idText)]
            case .dictionaries:
                let full = object.json(in: model)
                var picked: OrderedJSON = [:]
                let names = arguments.properties.isEmpty ? object.entity.properties.map(\.name) : arguments.properties
                for name in names { picked[name] = full[name] ?? .null }
                row = .object(picked)
            case .objects, .count:
                row = arguments.include.isEmpty
                    ? object.json(in: model) : try context.get(object.id, include: arguments.include).json(in: model)
            }
            try stream(.row(tag: tag, row))
            return true
        }
        return ["count": .int(Int64(delivered))]
    }

    func count(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let arguments = try FetchArguments(request, model: server.model)
        let total = try context.count(
            entity: arguments.entity.name, includeSubentities: arguments.includeSubentities, filter: arguments.filter)
        return ["count": .int(Int64(arguments.window(total)))]
    }

    /// How this build runs a fetch: it has no planner yet, so every fetch scans the entity's
    /// objects in ID order with the context's pending changes laid over them.
    func explain(_ request: Request) throws(KeelError) -> JSON? {
        _ = try context(for: request)
        let arguments = try FetchArguments(request, model: server.model)
        let entities = arguments.includeSubentities && arguments.entity.family.count > 1
            ? "\(arguments.entity.name) and its sub-entities" : arguments.entity.name
        var plan = "scan \(entities) in ID order (no index: the planner is not in this build); pending changes of the context laid over"
        plan += "; filter: \(arguments.filterText)"
        if arguments.offset > 0 { plan += "; skip \(arguments.offset)" }
        if let limit = arguments.limit { plan += "; stop after \(limit)" }
        return ["plan": .string(plan), "index": .null, "filter": .string(arguments.filterText)]
    }
}
