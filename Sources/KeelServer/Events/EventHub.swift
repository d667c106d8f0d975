// The daemon's one observer of the object store: after every commit it offers the save's
// history record to each subscribed connection (Subscription), in commit order. Runs on the
// saving thread under the store's save lock, so it only appends and signals.

import KeelModel
import Synchronization

final class EventHub: Sendable {
    private let store: ObjectStore
    /// Guards the subscriptions, by connection id.
    private let subscribers = Mutex<[Int: Subscription]>([:])
    /// Guards the store observer's registration.
    private let token = Mutex<ObserverToken?>(nil)

    init(store: ObjectStore) {
        self.store = store
    }

    /// Starts listening to the store's commits.
    func attach() {
        let observer = store.addObserver { [weak self] record in self?.publish(record) }
        token.withLock { $0 = observer }
    }

    /// Stops listening (shutdown).
    func detach() {
        if let observer = token.withLock({ t -> ObserverToken? in defer { t = nil }; return t }) {
            store.removeObserver(observer)
        }
    }

    func subscribe(connection: Int, _ subscription: Subscription) {
        subscribers.withLock { $0[connection] = subscription }
    }

    func unsubscribe(connection: Int) {
        _ = subscribers.withLock { $0.removeValue(forKey: connection) }
    }

    private func publish(_ record: HistoryRecord) {
        let list = subscribers.withLock { Array($0.values) }
        for subscription in list { subscription.offer(record) }
    }
}
