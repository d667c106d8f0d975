// One connection's subscription (SUBSCRIBE): which entities it follows and its bounded queue of
// committed saves not yet sent (spec/protocol.md: a subscriber that falls behind is not allowed
// to grow the daemon's memory; when its queue overflows the daemon drops the queued events and
// sends `* EVENT {"overflow":true,"txn":T}`).
//
// The store's observer (EventHub) offers each record here on the saving thread, under the
// store's save lock: `offer` only appends to a deque (records are shared, copy-on-write, between
// subscribers) and asks the connection's thread to drain. The connection's thread turns records
// into EVENT lines between replies, while its output has room.

import Collections
import KeelModel
import KeelProtocol
import Synchronization

final class Subscription: Sendable {
    /// The concrete entities followed (each named entity with its sub-entities); nil: all.
    let entities: Set<EntityID>?
    let limit: Int

    struct Queue {
        var records: Deque<HistoryRecord> = []
        /// Records were dropped; the newest dropped save. Sent first, as the overflow event.
        var overflowThrough: SaveID?
        /// A drain job is queued on the connection's thread and has not started.
        var drainScheduled = false
    }

    /// Guards the queue, the overflow mark and whether a drain is scheduled.
    private let queue = Mutex(Queue())
    /// Queues a drain job on the connection's thread.
    private let scheduleDrain: @Sendable () -> Void

    init(entities: Set<EntityID>?, limit: Int, scheduleDrain: @escaping @Sendable () -> Void) {
        self.entities = entities
        self.limit = limit
        self.scheduleDrain = scheduleDrain
    }

    /// Whether a save touches a followed entity.
    func matches(_ record: HistoryRecord) -> Bool {
        guard let entities else { return true }
        return record.inserted.contains { entities.contains($0.entity) }
            || record.updated.keys.contains { entities.contains($0.entity) }
            || record.deleted.contains { entities.contains($0.entity) }
    }

    /// A committed, durable save (on a saving thread, under the store's notice lock: short).
    func offer(_ record: HistoryRecord) {
        guard matches(record) else { return }
        let schedule = queue.withLock { q -> Bool in
            if q.records.count >= limit {
                q.overflowThrough = record.saveID
                q.records.removeAll()
            } else {
                q.records.append(record)
            }
            guard !q.drainScheduled else { return false }
            q.drainScheduled = true
            return true
        }
        if schedule { scheduleDrain() }
    }

    /// Asks for a drain (the connection's output has room again).
    func requestDrain() {
        let schedule = queue.withLock { q -> Bool in
            guard !q.drainScheduled, !q.records.isEmpty || q.overflowThrough != nil else { return false }
            q.drainScheduled = true
            return true
        }
        if schedule { scheduleDrain() }
    }

    /// The drain job started: later offers schedule another.
    func drainStarted() {
        queue.withLock { $0.drainScheduled = false }
    }

    enum Item {
        case overflow(SaveID)
        case record(HistoryRecord)
    }

    /// The next thing to send: the overflow mark first, then records in commit order.
    func next() -> Item? {
        queue.withLock { q -> Item? in
            if let through = q.overflowThrough {
                q.overflowThrough = nil
                return .overflow(through)
            }
            return q.records.popFirst().map(Item.record)
        }
    }

    var hasPending: Bool { queue.withLock { !$0.records.isEmpty || $0.overflowThrough != nil } }

    /// The EVENT payload of a record: the followed objects it inserted, updated and deleted.
    func event(_ record: HistoryRecord, model: Model) -> JSON {
        EventTerms.event(record, model: model, entities: entities)
    }
}
