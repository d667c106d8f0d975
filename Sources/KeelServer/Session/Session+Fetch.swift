// FETCH, COUNT and EXPLAIN, mapped straight onto KeelModel's fetch: the request's JSON is a
// `FetchRequest` (decoded there, with its BAD_REQUEST, NO_SUCH_ENTITY, NO_SUCH_PROPERTY and
// PREDICATE errors), run on the request's context with `ObjectContext.fetch(_:_:)`, `count(_:)`
// and `plan(_:)` — planned with the indexes, the context's pending changes laid over, fetched
// properties in `include` evaluated. Rows stream as the fetch hands them over, with
// back-pressure: `Session.streamRow` writes each row's text straight from its values and waits
// while the client is not reading.

import KeelModel
import KeelProtocol

extension Session {
    func fetch(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let fetchRequest = try FetchRequest(json: .object(request.arguments))
        let model = server.model
        let tag = request.tag
        let count = try context.fetch(fetchRequest) { (row) throws(KeelError) -> Bool in
            try streamRow(tag: tag) { row.write(to: &$0, in: model) }
            return true
        }
        return ["count": .int(Int64(count))]
    }

    func count(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let total = try context.count(try FetchRequest(json: .object(request.arguments)))
        return ["count": .int(Int64(total))]
    }

    /// The planner's plan in words (Docs/Predicates.md, "Indexes and EXPLAIN"), with the access
    /// it chose and the indexes it reads named apart for programs.
    func explain(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let plan = try context.plan(try FetchRequest(json: .object(request.arguments)))
        var access: String
        let indexes: [IndexAccess]
        switch plan.access {
        case .nothing: (access, indexes) = ("nothing", [])
        case .scan: (access, indexes) = ("scan", [])
        case .index(let one): (access, indexes) = ("index", [one])
        case .union(let many): (access, indexes) = ("union", many)
        }
        var names = indexes.map { $0.index.name }
        if let keysOf = plan.inMemory?.keysOf, !names.contains(keysOf.name) {
            // A grouped fetch read from an index's keys alone.
            (access, names) = ("index", [keysOf.name])
        }
        return [
            "plan": .string(plan.explain(in: server.model)),
            "access": .string(access),
            "indexes": .array(names.map(JSON.string)),
            "estimatedRows": plan.estimatedRows.map { .int(Int64($0)) } ?? .null,
        ]
    }
}
