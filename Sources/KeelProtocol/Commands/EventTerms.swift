// A committed save's terms on the wire, written once for every side that tells of saves: keeld's
// SUBSCRIBE events and HISTORY rows (KeelServer/Session+Events, Subscription), the client's
// connection subscriptions and the embedded store's own observer (KeelClient's ChangeEvent) — so
// an event lists the same objects, in the same order, embedded and over the socket
// (spec/protocol.md, "Changes and history").

public import Collections
public import KeelModel

public enum EventTerms {
    /// The entities a subscription to `names` follows: each with its sub-entities; nil for nil
    /// (every entity). `NO_SUCH_ENTITY` for a name `model` lacks.
    public static func followed(_ names: [String]?, in model: Model) throws(KeelError) -> Set<EntityID>? {
        guard let names else { return nil }
        var ids = Set<EntityID>()
        for name in names {
            guard let entity = model.entity(named: name) else {
                throw KeelError(.noSuchEntity, "no entity \(name) in model \(model.name)")
            }
            ids.formUnion(entity.family)
        }
        return ids
    }

    /// The objects a save inserted, updated and deleted, as `Entity/N` texts: in the record's
    /// order, the updated ones in ID order.
    public struct Objects: Sendable, Equatable {
        public var inserted: [String]
        public var updated: [String]
        public var deleted: [String]

        public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
    }

    /// `record`'s objects of `entities` (nil: all).
    public static func objects(_ record: HistoryRecord, model: Model, entities: Set<EntityID>? = nil) -> Objects {
        func texts(_ list: [ObjectID]) -> [String] {
            guard let entities else { return list.map { $0.text(in: model) } }
            return list.filter { entities.contains($0.entity) }.map { $0.text(in: model) }
        }
        return Objects(inserted: texts(record.inserted), updated: texts(record.updated.keys.sorted()), deleted: texts(record.deleted))
    }

    /// An `* EVENT` line's JSON for `record`, restricted to `entities`.
    public static func event(_ record: HistoryRecord, model: Model, entities: Set<EntityID>?) -> JSON {
        let objects = objects(record, model: model, entities: entities)
        return [
            "txn": .int(Int64(record.saveID.rawValue)),
            "inserted": .array(objects.inserted.map(JSON.string)),
            "updated": .array(objects.updated.map(JSON.string)),
            "deleted": .array(objects.deleted.map(JSON.string)),
        ]
    }

    /// The `* EVENT` line's JSON that stands for the events dropped through `through`.
    public static func overflow(through: SaveID) -> JSON {
        ["overflow": true, "txn": .int(Int64(through.rawValue))]
    }

    /// HISTORY's `after` (a transaction number from 0) and `limit` (nil: no limit), checked.
    public static func historyRange(_ arguments: OrderedDictionary<String, JSON>) throws(KeelError) -> (after: SaveID, limit: Int?) {
        guard let after = arguments["after"]?.intValue, after >= 0 else {
            throw KeelError(.badRequest, "HISTORY: \"after\" must be a transaction number from 0")
        }
        var limit: Int?
        if let value = arguments["limit"] {
            guard let n = value.intValue, n >= 0 else { throw KeelError(.badRequest, "HISTORY: \"limit\" must be a whole number from 0") }
            limit = Int(clamping: n)
        }
        return (SaveID(rawValue: UInt64(after)), limit)
    }

    /// HISTORY.PRUNE: deletes the history through `through` (checked: a transaction number from
    /// 0) in `store`; the OK line's JSON, `{"deleted":n,"prunedThrough":T}` (T: `through`, or the
    /// last transaction when `through` is past it).
    public static func pruneHistory(_ arguments: OrderedDictionary<String, JSON>, in store: ObjectStore) throws(KeelError) -> JSON {
        guard let through = arguments["through"]?.intValue, through >= 0 else {
            throw KeelError(.badRequest, "HISTORY.PRUNE: \"through\" must be a transaction number from 0")
        }
        let (deleted, bound) = try store.deleteHistory(through: SaveID(rawValue: UInt64(through)))
        return ["deleted": .int(Int64(deleted)), "prunedThrough": .int(Int64(bound.rawValue))]
    }

    /// A HISTORY row's JSON for `record`: every object, and when it committed.
    public static func historyRow(_ record: HistoryRecord, model: Model) -> JSON {
        let objects = objects(record, model: model)
        return [
            "txn": .int(Int64(record.saveID.rawValue)),
            "time": .string(WireDate.format(record.time)),
            "inserted": .array(objects.inserted.map(JSON.string)),
            "updated": .array(objects.updated.map(JSON.string)),
            "deleted": .array(objects.deleted.map(JSON.string)),
        ]
    }
}
