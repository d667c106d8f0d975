// BATCH.INSERT, BATCH.UPDATE and BATCH.DELETE: one store transaction each, bypassing contexts
// (spec/protocol.md), mapped to ObjectStore.batchInsert/Update/Delete.
//
// Which objects a BATCH.UPDATE/DELETE touches is given by its predicate (Docs/Predicates.md),
// bound before anything is written (a bad predicate is PREDICATE and changes nothing). The
// store evaluates it on each row as its transaction reads it; key paths through relationships
// read a snapshot pinned just before the batch.

import KeelModel
import KeelProtocol

extension Session {
    func batchInsert(_ request: Request) throws(KeelError) -> JSON? {
        let model = server.model
        let entity = try WireValues.entity(request, in: model)
        guard !entity.isAbstract else {
            throw KeelError(.badRequest, "\(entity.name) is abstract: insert objects of one of its sub-entities")
        }
        let items = request.arguments["objects"]?.arrayValue ?? []
        var objects: [[Int: Value]] = []
        objects.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            do throws(KeelError) {
                objects.append(try WireValues.decode(item, for: entity, in: model))
            } catch {
                var located = error
                located.message = "objects[\(i)]: \(error.message)"
                throw located
            }
        }
        let result = try server.store.batchInsert(entity: entity.id, objects: objects)
        return [
            "inserted": .int(Int64(result.inserted.count)),
            "first": result.inserted.first.map { JSON.string($0.text(in: model)) } ?? .null,
            "txn": Self.txn(result),
        ]
    }

    func batchUpdate(_ request: Request) throws(KeelError) -> JSON? {
        let model = server.model
        let entity = try WireValues.entity(request, in: model)
        let values = try WireValues.decode(request.arguments["values"] ?? [:], for: entity, in: model)
        let filter = try BatchFilter(request, entity: entity, store: server.store)
        let result = try server.store.batchUpdate(entity: entity.id, where: filter.matches, values: values)
        try filter.check(logger: logger)
        return ["updated": .int(Int64(result.updated.count)), "txn": Self.txn(result)]
    }

    func batchDelete(_ request: Request) throws(KeelError) -> JSON? {
        let model = server.model
        let entity = try WireValues.entity(request, in: model)
        let filter = try BatchFilter(request, entity: entity, store: server.store)
        let result = try server.store.batchDelete(entity: entity.id, where: filter.matches)
        try filter.check(logger: logger)
        return ["deleted": .int(Int64(result.deleted.count)), "txn": Self.txn(result)]
    }

    static func txn(_ result: SaveResult) -> JSON {
        result.saveID.map { .int(Int64($0.rawValue)) } ?? .null
    }
}
