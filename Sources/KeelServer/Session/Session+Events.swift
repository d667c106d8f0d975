// SUBSCRIBE, UNSUBSCRIBE and HISTORY, and moving queued events to the connection.
//
// Events go out only between replies: the connection's thread drains them after each job (a
// burst of requests) and in drain jobs of their own when the connection is idle, and only while
// the connection's unwritten output is under its cap; what does not fit waits in the bounded
// queue (Subscription), and the gate calls back when the client has read enough.

import KeelModel
import KeelProtocol

extension Session {
    func subscribe(_ request: Request) throws(KeelError) -> JSON? {
        let followed = try EventTerms.followed(request.arguments["entities"]?.arrayValue?.compactMap(\.stringValue), in: server.model)
        let worker = link.worker
        let replacing = subscription != nil
        let subscription = Subscription(entities: followed, limit: server.limits.subscriberQueueLength) {
            worker.submit(.drainEvents)
        }
        self.subscription = subscription
        server.events.subscribe(connection: link.id, subscription)
        logger.debug("subscribed", metadata: ["events.replacing": "\(replacing)"])
        return nil
    }

    func unsubscribe(_ request: Request) throws(KeelError) -> JSON? {
        server.events.unsubscribe(connection: link.id)
        subscription = nil
        return nil
    }

    /// Moves queued events into the output while the connection has room.
    func drainEvents() {
        guard let subscription else { return }
        let gate = link.gate
        while gate.bufferedBytes + pendingBytes < gate.limit {
            guard let item = subscription.next() else { return }
            switch item {
            case .overflow(let through):
                append(.event(EventTerms.overflow(through: through)))
            case .record(let record):
                append(.event(subscription.event(record, model: server.model)))
            }
            if pendingBytes >= Self.chunkBytes { flush() }
        }
        // No room: the queue holds the rest (bounded); drain again once the client has read.
        gate.whenRoom { subscription.requestDrain() }
    }

    func history(_ request: Request) throws(KeelError) -> JSON? {
        let range = try EventTerms.historyRange(request.arguments)
        var remaining = range.limit ?? .max
        var last = range.after
        let model = server.model
        // In pages, streamed: a long history is never held whole.
        while remaining > 0 {
            let want = min(remaining, 512)
            let page = try server.store.history(after: last, limit: want)
            for record in page {
                try stream(.row(tag: request.tag, EventTerms.historyRow(record, model: model)))
            }
            remaining -= page.count
            guard page.count == want, let newest = page.last else { break }
            last = newest.saveID
        }
        return nil
    }
}
