// Subscriptions on one connection. The daemon keeps one subscription per connection (SUBSCRIBE
// replaces it, dropping the events it had queued), so the connection subscribes once, to every
// entity, when its first subscriber arrives, and unsubscribes when its last one ends; each
// subscriber's stream gets the events restricted to the entities it follows. Never
// re-subscribing while subscribed means no subscriber ever loses events to another one
// arriving. The wire state and the subscribers are guarded by the core's lock; a SUBSCRIBE or
// UNSUBSCRIBE line is queued under that same lock, so they reach the daemon in the order the
// state changed.

import KeelModel
import NIOCore

typealias ChangeBuffer = StreamBuffer<ChangeEvent>

/// What a new subscriber is to do.
enum SubscriberRole {
    /// The connection is subscribed: events flow.
    case active
    /// This subscriber sends SUBSCRIBE and reports the outcome (`subscribed`).
    case first
    /// The SUBSCRIBE another subscriber sent failed.
    case failed(KeelError)
}

typealias SubscribeContinuation = CheckedContinuation<SubscriberRole, Never>

struct SubscriptionState {
    enum Wire {
        case none
        /// SUBSCRIBE is on its way; these subscribers wait for its outcome.
        case subscribing([SubscribeContinuation])
        case active
    }

    var wire: Wire = .none
    var subscribers: [Int: (buffer: ChangeBuffer, entities: Set<String>?)] = [:]
    var nextID = 0

    /// Everything, for a connection that has failed.
    mutating func takeAll() -> ([ChangeBuffer], [SubscribeContinuation]) {
        let buffers = subscribers.values.map(\.buffer)
        subscribers = [:]
        var waiters: [SubscribeContinuation] = []
        if case .subscribing(let list) = wire { waiters = list }
        wire = .none
        return (buffers, waiters)
    }
}

extension ConnectionCore {
    func makeSubscriberID() -> Int {
        state.withLock { s in
            s.subscriptions.nextID += 1
            return s.subscriptions.nextID
        }
    }

    /// Adds a subscriber; `continuation` learns its role (at once, or when the SUBSCRIBE under
    /// way is answered).
    func addSubscriber(_ id: Int, _ buffer: ChangeBuffer, entities: Set<String>?, continuation: SubscribeContinuation) {
        let role = state.withLock { s -> SubscriberRole? in
            if let failure = s.failure { return .failed(failure) }
            s.subscriptions.subscribers[id] = (buffer, entities)
            switch s.subscriptions.wire {
            case .active:
                return .active
            case .none:
                s.subscriptions.wire = .subscribing([])
                return .first
            case .subscribing(var waiters):
                waiters.append(continuation)
                s.subscriptions.wire = .subscribing(waiters)
                return nil
            }
        }
        if let role { continuation.resume(returning: role) }
    }

    /// The first subscriber's SUBSCRIBE was answered (`error` nil: OK).
    func subscribed(_ error: KeelError?) {
        let (waiters, flush) = state.withLock { s -> ([SubscribeContinuation], Bool) in
            guard case .subscribing(let waiters) = s.subscriptions.wire else { return ([], false) }
            if error != nil {
                s.subscriptions.wire = .none
                return (waiters, false)
            }
            s.subscriptions.wire = .active
            // Every subscriber left while it was on its way: unsubscribe again.
            return (waiters, s.subscriptions.subscribers.isEmpty ? queueUnsubscribe(&s) : false)
        }
        if flush { self.flush() }
        for waiter in waiters { waiter.resume(returning: error.map(SubscriberRole.failed) ?? .active) }
    }

    /// A subscriber ended (its stream dropped or its task cancelled, or its SUBSCRIBE failed).
    func removeSubscriber(_ id: Int) {
        let flush = state.withLock { s -> Bool in
            guard s.subscriptions.subscribers.removeValue(forKey: id) != nil else { return false }
            guard s.subscriptions.subscribers.isEmpty, case .active = s.subscriptions.wire else { return false }
            return queueUnsubscribe(&s)
        }
        if flush { self.flush() }
    }

    /// Queues UNSUBSCRIBE (its reply discarded) under the lock; whether a flush must be scheduled.
    private func queueUnsubscribe(_ s: inout State) -> Bool {
        s.subscriptions.wire = .none
        guard s.failure == nil else { return false }
        let tag = makeTag()
        s.calls[tag] = PendingCall(kind: .discarded, deadline: nil, timeout: .zero, command: "UNSUBSCRIBE")
        s.wire.outgoing.writeString("\(tag) UNSUBSCRIBE\n")
        return Self.queued(&s)
    }

    /// An `* EVENT` line (event loop): to every subscriber, restricted to what it follows.
    func deliver(event json: JSON, bytes: Int) {
        let subscribers = state.withLock { s in Array(s.subscriptions.subscribers.values) }
        guard !subscribers.isEmpty else {
            counters.discardedLines.add(1, ordering: .relaxed)
            return
        }
        let event = ChangeEvent(event: json)
        for subscriber in subscribers {
            guard let restricted = event.restricted(to: subscriber.entities) else { continue }
            _ = subscriber.buffer.push(.value(restricted), bytes: bytes)
        }
    }
}
