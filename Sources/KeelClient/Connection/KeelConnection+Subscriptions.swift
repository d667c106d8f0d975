// `subscribe(entities:)`: change events as an asynchronous sequence. The connection holds one
// SUBSCRIBE (to every entity) for all its subscribers and restricts each one's events to what
// it follows (ConnectionCore+Events.swift says why); ending the sequence — dropping it, or
// cancelling the task that iterates it — unsubscribes, and the last one out sends UNSUBSCRIBE.

public import KeelModel
import KeelProtocol

extension KeelConnection {
    /// Change events of every transaction committed from now on that touches `entities` (each
    /// with its sub-entities; nil: all), restricted to objects of those entities. A consumer
    /// that falls more than `options.eventBufferLength` events behind gets one event with
    /// `overflow` set in place of those it missed (so does every subscriber when the daemon's
    /// own queue for this connection overflows): refetch what you show. Throws
    /// `NO_SUCH_ENTITY` for a name the model lacks. The stream throws `DISCONNECTED` when the
    /// connection goes.
    public func subscribe(entities: [String]? = nil) async throws(KeelError) -> KeelStream<ChangeEvent> {
        let model = self.model
        let followed = try EventTerms.followed(entities, in: model).map { Set($0.map { model[$0].name }) }
        let core = self.core
        let id = core.makeSubscriberID()
        let buffer = ChangeBuffer(
            policy: .dropOnOverflow(limit: max(1, options.eventBufferLength), marker: { ChangeEvent(txn: $0.txn, overflow: true) }),
            onCancel: { [weak core] in core?.removeSubscriber(id) })
        let stream = KeelStream(buffer)
        let role = await withCheckedContinuation { (continuation: SubscribeContinuation) in
            core.addSubscriber(id, buffer, entities: followed, continuation: continuation)
        }
        switch role {
        case .active:
            return stream
        case .failed(let error):
            core.removeSubscriber(id)
            throw error
        case .first:
            do {
                _ = try await request("SUBSCRIBE")
                core.subscribed(nil)
                return stream
            } catch {
                core.subscribed(error)
                core.removeSubscriber(id)
                throw error
            }
        }
    }
}
