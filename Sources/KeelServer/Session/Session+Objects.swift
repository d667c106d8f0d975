// INSERT, UPDATE, DELETE, RELATE and GET, each one call on the request's context
// (ObjectContext); values stay in their wire form, the context decodes and checks them.

import KeelModel
import KeelProtocol

extension Session {
    /// The new object's ID: its reply is `{"$id":"Entity/N"}` (Answer.insertedID).
    func insert(_ request: Request) throws(KeelError) -> ObjectID {
        let context = try context(for: request)
        let entity = request.arguments["entity"]?.stringValue ?? ""
        return try context.insert(entity: entity, values: request.arguments["values"] ?? [:])
    }

    func update(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        try context.update(try objectID(request.arguments["$id"]), values: request.arguments["values"] ?? [:])
        return nil
    }

    func delete(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let deleted = try context.delete(try objectID(request.arguments["$id"]))
        return ["deleted": .array(ContextTerms.texts(deleted, in: server.model).map(JSON.string))]
    }

    func relate(_ request: Request) throws(KeelError) -> JSON? {
        let context = try context(for: request)
        let id = try objectID(request.arguments["$id"])
        let add = try objectIDs(request.arguments["add"])
        let remove = try objectIDs(request.arguments["remove"])
        try context.relate(id, relationship: request.arguments["relationship"]?.stringValue ?? "", add: add, remove: remove)
        return nil
    }

    func get(_ request: Request) throws(KeelError) -> ManagedObject {
        let context = try context(for: request)
        let include = request.arguments["include"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return try context.get(try objectID(request.arguments["$id"]), include: include)
    }

    /// An `Entity/N` ID of this model (ContextTerms.objectID).
    func objectID(_ json: JSON?) throws(KeelError) -> ObjectID {
        try ContextTerms.objectID(json?.stringValue ?? "", in: server.model)
    }

    func objectIDs(_ json: JSON?) throws(KeelError) -> [ObjectID] {
        try ContextTerms.objectIDs(json?.arrayValue?.map { $0.stringValue ?? "" } ?? [], in: server.model)
    }
}
