// INSERT, UPDATE, DELETE, RELATE and GET, each one call on the request's context
// (ObjectContext); values stay in their wire form, the context decodes and checks them.

import KeelModel
import KeelProtocol

extension Session {
    func insert(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let entity = request.arguments["entity"]?.stringValue ?? ""
        let id = try context.insert(entity: entity, values: request.arguments["values"] ?? [:])
        return ["$id": .string(id.text(in: server.model))]
    }

    func update(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        try context.update(try objectID(request.arguments["$id"]), values: request.arguments["values"] ?? [:])
        return nil
    }

    func delete(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let deleted = try context.delete(try objectID(request.arguments["$id"]))
        return ["deleted": .array(deleted.map { .string($0.text(in: server.model)) })]
    }

    func relate(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let id = try objectID(request.arguments["$id"])
        let add = try objectIDs(request.arguments["add"])
        let remove = try objectIDs(request.arguments["remove"])
        try context.relate(id, relationship: request.arguments["relationship"]?.stringValue ?? "", add: add, remove: remove)
        return nil
    }

    func get(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let include = request.arguments["include"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return try context.get(try objectID(request.arguments["$id"]), include: include).json(in: server.model)
    }

    /// An `Entity/N` ID of this model: BAD_REQUEST when malformed, NO_SUCH_ENTITY when the
    /// entity is unknown.
    func objectID(_ json: JSON?) throws(KeelError) -> ObjectID {
        let text = json?.stringValue ?? ""
        if let id = server.model.objectID(text) { return id }
        if let slash = text.lastIndex(of: "/"), let number = UInt64(text[text.index(after: slash)...]), number > 0 {
            throw KeelError(.noSuchEntity, "no entity \(text[..<slash]) in model \(server.model.name) (in the ID \"\(text)\")")
        }
        throw KeelError(.badRequest, "\"\(text)\" is not an object ID (Entity/N, N from 1)")
    }

    func objectIDs(_ json: JSON?) throws(KeelError) -> [ObjectID] {
        var out: [ObjectID] = []
        for item in json?.arrayValue ?? [] { out.append(try objectID(item)) }
        return out
    }
}
