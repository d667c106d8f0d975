// BATCH.INSERT, BATCH.UPDATE and BATCH.DELETE: one store transaction each, bypassing contexts
// (spec/protocol.md), mapped to ObjectStore.batchInsert/Update/Delete.
//
// Which objects a BATCH.UPDATE/DELETE touches is given by its predicate (Docs/Predicates.md),
// bound before anything is written (a bad predicate is PREDICATE and changes nothing) and handed
// to the store as a `BoundPredicate`: the planner chooses the objects (indexes included) inside
// the batch's save, under the save lock, and any error — an I/O error reading a related object
// included — fails the whole batch with nothing written.

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
            "txn": ContextTerms.txn(result),
        ]
    }

    func batchUpdate(_ request: Request) throws(KeelError) -> JSON? {
        let model = server.model
        let entity = try WireValues.entity(request, in: model)
        let values = try WireValues.decode(request.arguments["values"] ?? [:], for: entity, in: model)
        let predicate = try Self.predicate(request, entity: entity, model: model)
        let result = try server.store.batchUpdate(entity: entity.id, predicate: predicate, values: values)
        // The objects the predicate matched (as Core Data's batch update counts them), not the
        // others whose inverse relationships changed with them (those are in the save's history).
        return ["updated": .int(Int64(result.matched ?? result.updated.count)), "txn": ContextTerms.txn(result)]
    }

    func batchDelete(_ request: Request) throws(KeelError) -> JSON? {
        let model = server.model
        let entity = try WireValues.entity(request, in: model)
        let predicate = try Self.predicate(request, entity: entity, model: model)
        let result = try server.store.batchDelete(entity: entity.id, predicate: predicate)
        return ["deleted": .int(Int64(result.deleted.count)), "txn": ContextTerms.txn(result)]
    }

    /// The request's predicate bound to `entity` with its `args` and `vars`; nil without one.
    private static func predicate(_ request: Request, entity: Entity, model: Model) throws(KeelError) -> BoundPredicate? {
        guard let text = request.arguments["predicate"]?.stringValue, !text.allSatisfy(\.isWhitespace) else { return nil }
        var vars: [String: JSON] = [:]
        for (key, value) in request.arguments["vars"]?.objectValue ?? [:] { vars[key] = value }
        let binder = PredicateBinder(model: model, args: request.arguments["args"]?.arrayValue ?? [], vars: vars)
        return try binder.bind(text, to: entity.id)
    }
}
