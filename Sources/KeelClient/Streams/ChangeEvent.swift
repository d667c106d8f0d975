// What a subscription delivers (`* EVENT` lines, spec/protocol.md "SUBSCRIBE") and what HISTORY
// streams (its ROW lines), as values.

import KeelModel
import KeelProtocol

/// The objects one committed transaction inserted, updated and deleted (`Entity/N` texts), and
/// the same as typed IDs: `inserted(of: Employee.self)` — a change event's, a history entry's.
public protocol TransactionObjects {
    var inserted: [String] { get }
    var updated: [String] { get }
    var deleted: [String] { get }
}

extension TransactionObjects {
    /// The IDs of the objects of `type` (or its sub-entities) the transaction inserted.
    public func inserted<E: KeelObject>(of type: E.Type) -> [KeelID<E>] { inserted.compactMap { KeelID<E>($0) } }
    /// The IDs of the objects of `type` (or its sub-entities) the transaction updated.
    public func updated<E: KeelObject>(of type: E.Type) -> [KeelID<E>] { updated.compactMap { KeelID<E>($0) } }
    /// The IDs of the objects of `type` (or its sub-entities) the transaction deleted.
    public func deleted<E: KeelObject>(of type: E.Type) -> [KeelID<E>] { deleted.compactMap { KeelID<E>($0) } }
}

/// One committed transaction that touched the entities a subscription follows, or the notice
/// that events were dropped.
public struct ChangeEvent: TransactionObjects, Sendable, Equatable {
    /// The transaction (for an overflow: the newest one dropped).
    public var txn: Int64
    /// IDs (`Entity/N`) of the objects the transaction inserted, updated and deleted, limited
    /// to the entities the subscription follows.
    public var inserted: [String]
    public var updated: [String]
    public var deleted: [String]
    /// Events were dropped (by the daemon, or by this client for a consumer that fell behind):
    /// what the application shows may be stale; refetch it. The ID lists are empty.
    public var overflow: Bool

    public init(txn: Int64, inserted: [String] = [], updated: [String] = [], deleted: [String] = [], overflow: Bool = false) {
        self.txn = txn
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.overflow = overflow
    }

    /// An `* EVENT` line's JSON.
    init(event json: JSON) {
        self.init(
            txn: json["txn"]?.intValue ?? 0, inserted: Self.ids(json["inserted"]), updated: Self.ids(json["updated"]),
            deleted: Self.ids(json["deleted"]), overflow: json["overflow"]?.boolValue ?? false)
    }

    /// A save's history record (an embedded store's observer) as the event keeld's `* EVENT` line
    /// gives for it: restricted to objects of `entities` (nil: all); nil when none is of them.
    init?(record: HistoryRecord, model: Model, entities: Set<EntityID>?) {
        let objects = EventTerms.objects(record, model: model, entities: entities)
        if objects.isEmpty { return nil }
        self.init(txn: Int64(record.saveID.rawValue), inserted: objects.inserted, updated: objects.updated, deleted: objects.deleted)
    }

    /// The event restricted to objects of `entities` (concrete entity names); nil when none of
    /// its objects is of them. Overflow notices concern every subscription.
    func restricted(to entities: Set<String>?) -> ChangeEvent? {
        guard let entities, !overflow else { return self }
        func keep(_ ids: [String]) -> [String] {
            ids.filter { id in entities.contains(String(id.prefix { $0 != "/" })) }
        }
        let event = ChangeEvent(txn: txn, inserted: keep(inserted), updated: keep(updated), deleted: keep(deleted))
        return event.inserted.isEmpty && event.updated.isEmpty && event.deleted.isEmpty ? nil : event
    }

    static func ids(_ json: JSON?) -> [String] {
        (json?.arrayValue ?? []).compactMap(\.stringValue)
    }
}

/// One transaction of the store's history (a HISTORY row).
public struct HistoryEntry: TransactionObjects, Sendable, Equatable {
    public var txn: Int64
    /// When it committed, as the daemon wrote it (ISO 8601, UTC).
    public var time: String
    public var inserted: [String]
    public var updated: [String]
    public var deleted: [String]

    init(row json: JSON) throws(KeelError) {
        guard let txn = json["txn"]?.intValue else {
            throw KeelError(.internal, "a HISTORY row without a transaction number: \(json.serialized())")
        }
        self.txn = txn
        self.time = json["time"]?.stringValue ?? ""
        self.inserted = ChangeEvent.ids(json["inserted"])
        self.updated = ChangeEvent.ids(json["updated"])
        self.deleted = ChangeEvent.ids(json["deleted"])
    }
}
