// BATCH.INSERT, BATCH.UPDATE and BATCH.DELETE: one store transaction each, bypassing contexts
// (spec/protocol.md), mapped to ObjectStore.batchInsert/Update/Delete — written once for both
// sides that run them: keeld's sessions and the embedded store of KeelClient (`KeelStore.batch…`),
// so a batch answers the same embedded and over the socket.
//
// Which objects a BATCH.UPDATE/DELETE touches is given by its predicate (Docs/Predicates.md),
// bound before anything is written (a bad predicate is PREDICATE and changes nothing) and handed
// to the store as a `BoundPredicate`: the planner chooses the objects (indexes included) inside
// the batch's save, under the save lock, and any error — an I/O error reading a related object
// included — fails the whole batch with nothing written.

public import Collections
public import KeelModel

public enum BatchCommands {
    /// Runs the batch command `command` (BATCH.INSERT, BATCH.UPDATE or BATCH.DELETE, any case)
    /// with its request's arguments against `store`, and gives the reply's JSON. The arguments are
    /// checked against the command's spec first, as keeld's dispatch checks them (a missing
    /// `objects`, a `predicate` that is not a string: `BAD_REQUEST`).
    public static func run(_ command: String, _ arguments: OrderedDictionary<String, JSON>, store: ObjectStore) throws(KeelError) -> JSON {
        let spec = try CommandTable.resolve(Request(tag: "batch", command: command, arguments: arguments))
        switch spec.name {
        case "BATCH.INSERT": return try insert(arguments, store: store)
        case "BATCH.UPDATE": return try update(arguments, store: store)
        case "BATCH.DELETE": return try delete(arguments, store: store)
        default: throw KeelError(.unknownCommand, "\(spec.name) is not a batch command (BATCH.INSERT, BATCH.UPDATE, BATCH.DELETE)")
        }
    }

    /// `BATCH.INSERT`: `{"inserted":n,"first":"Employee/…","txn":T}`; the IDs are consecutive
    /// from `first`, in the order of `objects`.
    public static func insert(_ arguments: OrderedDictionary<String, JSON>, store: ObjectStore) throws(KeelError) -> JSON {
        let model = store.model
        let entity = try WireValues.entity(arguments, in: model)
        guard !entity.isAbstract else {
            throw KeelError(.badRequest, "\(entity.name) is abstract: insert objects of one of its sub-entities")
        }
        let items = arguments["objects"]?.arrayValue ?? []
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
        let result = try store.batchInsert(entity: entity.id, objects: objects)
        return [
            "inserted": .int(Int64(result.inserted.count)),
            "first": result.inserted.first.map { JSON.string($0.text(in: model)) } ?? .null,
            "txn": ContextTerms.txn(result),
        ]
    }

    /// `BATCH.UPDATE`: `{"updated":n,"txn":T}`.
    public static func update(_ arguments: OrderedDictionary<String, JSON>, store: ObjectStore) throws(KeelError) -> JSON {
        let model = store.model
        let entity = try WireValues.entity(arguments, in: model)
        let values = try WireValues.decode(arguments["values"] ?? [:], for: entity, in: model)
        let predicate = try predicate(arguments, entity: entity, model: model)
        let result = try store.batchUpdate(entity: entity.id, predicate: predicate, values: values)
        // The objects the predicate matched (as Core Data's batch update counts them), not the
        // others whose inverse relationships changed with them (those are in the save's history).
        return ["updated": .int(Int64(result.matched ?? result.updated.count)), "txn": ContextTerms.txn(result)]
    }

    /// `BATCH.DELETE`: `{"deleted":n,"txn":T}` (cascades counted).
    public static func delete(_ arguments: OrderedDictionary<String, JSON>, store: ObjectStore) throws(KeelError) -> JSON {
        let model = store.model
        let entity = try WireValues.entity(arguments, in: model)
        let predicate = try predicate(arguments, entity: entity, model: model)
        let result = try store.batchDelete(entity: entity.id, predicate: predicate)
        return ["deleted": .int(Int64(result.deleted.count)), "txn": ContextTerms.txn(result)]
    }

    /// The request's predicate bound to `entity` with its `args` and `vars`; nil without one.
    private static func predicate(_ arguments: OrderedDictionary<String, JSON>, entity: Entity, model: Model) throws(KeelError) -> BoundPredicate? {
        guard let text = arguments["predicate"]?.stringValue, !text.allSatisfy(\.isWhitespace) else { return nil }
        var vars: [String: JSON] = [:]
        for (key, value) in arguments["vars"]?.objectValue ?? [:] { vars[key] = value }
        let binder = PredicateBinder(model: model, args: arguments["args"]?.arrayValue ?? [], vars: vars)
        return try binder.bind(text, to: entity.id)
    }
}
