// BATCH.INSERT, BATCH.UPDATE and BATCH.DELETE: one store transaction each, bypassing contexts
// (spec/protocol.md), mapped to ObjectStore.batchInsert/Update/Delete.
//
// Which objects a BATCH.UPDATE/DELETE touches is given by a predicate. Until the predicate
// engine is in this build, only TRUEPREDICATE (or no predicate) and FALSEPREDICATE can be
// evaluated; any other predicate is refused with PREDICATE, never guessed at.

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
        let filter = try batchFilter(request)
        let values = try WireValues.decode(request.arguments["values"] ?? [:], for: entity, in: model)
        let result = try server.store.batchUpdate(entity: entity.id, where: filter, values: values)
        return ["updated": .int(Int64(result.updated.count)), "txn": Self.txn(result)]
    }

    func batchDelete(_ request: Request) throws(KeelError) -> JSON? {
        let model = server.model
        let entity = try WireValues.entity(request, in: model)
        let filter = try batchFilter(request)
        let result = try server.store.batchDelete(entity: entity.id, where: filter)
        return ["deleted": .int(Int64(result.deleted.count)), "txn": Self.txn(result)]
    }

    /// The filter a batch's predicate stands for, when this build can evaluate it.
    private func batchFilter(_ request: Request) throws(KeelError) -> @Sendable (StoredObject) -> Bool {
        guard let predicate = request.arguments["predicate"]?.stringValue else { return { _ in true } }
        switch predicate.trimmingSpaces.uppercased() {
        case "TRUEPREDICATE", "": return { _ in true }
        case "FALSEPREDICATE": return { _ in false }
        default:
            throw KeelError(
                .predicate,
                "this daemon cannot evaluate predicates yet (the predicate engine is not in this build); only TRUEPREDICATE and FALSEPREDICATE",
                details: ["position": 0])
        }
    }

    static func txn(_ result: SaveResult) -> JSON {
        result.saveID.map { .int(Int64($0.rawValue)) } ?? .null
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and newlines.
    var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
