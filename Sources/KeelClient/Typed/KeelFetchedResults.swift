// Live results (Core Data's NSFetchedResultsController): a fetch kept up to date as saves land.
//
//     for try await snapshot in store.fetchedResults(Employee.self, where: Employee.age > 30, sortedBy: .ascending(\.name)) {
//         snapshot.ids          // [KeelID<Employee>]: the fetch's result, in its order
//         snapshot.difference   // what changed since the last snapshot (removals and insertions, by offset)
//         snapshot.updated      // objects still in the result that a save changed (reload them)
//     }
//
// The first snapshot is the fetch as it is (every ID an insertion). Then, for every committed
// transaction that may change the result, the fetch runs again and a snapshot comes when its IDs,
// their order or one of its objects changed — a save that changes nothing the fetch shows gives
// none. Transactions whose events have all come by then (a burst of saves) are one fetch and one
// snapshot, named by the last of them. Which transactions: those touching the fetched entity (and its sub-entities) when the
// predicate and the sorts read only the object's own attributes; those touching anything when
// they follow a key path (`department.name`, `employees.@count`, SUBQUERY), since a change to
// another object can then move an object in or out (Core Data's controller misses those).
//
// How: the sequence has a context of its own (the saves of every context and process show in it
// at each `refresh()`; nothing pending in the application's contexts does) and follows the
// store's change events (`KeelStore.changes`), subscribed before the first fetch so that no save
// between the two is missed. Its context is closed when the iterator goes away; closing the store
// ends the sequence with DISCONNECTED. One consumer, as every stream of the client.

/// A fetch kept up to date: a sequence of snapshots of its IDs, one now and one after each save
/// that changes them (`KeelStore.fetchedResults`).
public struct KeelFetchedResults<E: KeelObject>: AsyncSequence, Sendable {
    public typealias Failure = KeelError

    /// The fetch's result at one point: its IDs in order, and what changed since the last snapshot.
    public struct Snapshot: Sendable {
        /// The IDs the fetch gives, in its order.
        public let ids: [KeelID<E>]
        /// From the previous snapshot's `ids` to these (all insertions in the first): apply it to a
        /// list shown to the user, or read its removals and insertions by offset.
        public let difference: CollectionDifference<KeelID<E>>
        /// IDs shown before and still in `ids` whose objects the transaction changed (their values
        /// may differ on screen); one that has just come in is an insertion of `difference` only.
        public let updated: [KeelID<E>]
        /// The (last) transaction whose event led to this snapshot; nil for the first (and after
        /// an overflow). The fetch reads the store as it is then, so saves whose events were still
        /// on their way may show in it too (their events then give no snapshot of their own).
        public let transaction: Int64?
    }

    let store: KeelStore
    let request: KeelFetchRequest<E>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(store: store, request: request)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let store: KeelStore
        let request: KeelFetchRequest<E>
        private var live: Live?
        private var events: KeelStream<ChangeEvent>.AsyncIterator?
        private var ids: [KeelID<E>] = []

        init(store: KeelStore, request: KeelFetchRequest<E>) {
            self.store = store
            self.request = request
        }

        /// The next snapshot: the first at once, then one per save that changes the result.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(KeelError) -> Snapshot? {
            guard let live, var events else {
                // Subscribed first, then fetched: a save between the two comes as an event.
                let context = try await store.newContext(name: store.core.nextContextName("fetched-results"))
                self.live = Live(context)
                self.events = try await store.changes(of: Self.followsKeyPaths(request) ? nil : [E.self]).makeAsyncIterator()
                ids = try await Self.fetch(request, in: context, isolation: actor)
                return Snapshot(ids: ids, difference: ids.difference(from: []), updated: [], transaction: nil)
            }
            defer { self.events = events }
            while let event = try await events.next(isolation: actor) {
                // The events that have come meanwhile (a burst of saves) are one refetch.
                let burst = [event] + events.buffered()
                let overflow = burst.contains { $0.overflow }
                let changed = Set(burst.flatMap(\.updated))
                try await live.context.refresh()
                let fresh = try await Self.fetch(request, in: live.context, isolation: actor)
                let difference = fresh.difference(from: ids)
                // Updated: shown before and still shown (one that has just come in is an insertion).
                let before = Set(ids)
                let updated = fresh.filter { changed.contains($0.text) && before.contains($0) }
                guard !difference.isEmpty || !updated.isEmpty || overflow else { continue }
                ids = fresh
                return Snapshot(ids: fresh, difference: difference, updated: updated, transaction: overflow ? nil : burst.last?.txn)
            }
            return nil
        }

        public mutating func next() async throws(KeelError) -> Snapshot? {
            try await next(isolation: nil)
        }

        /// Whether the predicate or a sort reads another object than the fetched one (a key path,
        /// an aggregate over a to-many, a SUBQUERY): then any transaction may change the result.
        static func followsKeyPaths(_ request: KeelFetchRequest<E>) -> Bool {
            let format = request.predicate?.format ?? ""
            return format.contains(".") || format.uppercased().contains("SUBQUERY")
                || request.sortedBy.contains { $0.key.contains(".") }
        }

        /// The request's IDs, as the context sees the store now.
        static func fetch(
            _ request: KeelFetchRequest<E>, in context: KeelContext, isolation actor: isolated (any Actor)?
        ) async throws(KeelError) -> [KeelID<E>] {
            try await context.fetchIDs(request).collect(isolation: actor)
        }
    }

    /// The sequence's own context, closed when its iterator goes away.
    final class Live: Sendable {
        let context: KeelContext
        init(_ context: KeelContext) { self.context = context }
        deinit {
            let context = self.context
            Task { await context.close() }
        }
    }
}

extension KeelStore {
    /// A fetch kept up to date (Core Data's `NSFetchedResultsController`): its IDs now, then again
    /// after every save — of any context or process — that changes them, with the difference.
    public func fetchedResults<E: KeelObject>(
        _ type: E.Type, where predicate: TypedPredicate<E>? = nil, sortedBy sorts: TypedSort<E>..., limit: Int? = nil,
        offset: Int = 0, includesSubentities: Bool = true
    ) -> KeelFetchedResults<E> {
        fetchedResults(
            KeelFetchRequest(type, where: predicate, sortedBy: sorts, limit: limit, offset: offset, includesSubentities: includesSubentities))
    }

    /// A request kept up to date.
    public func fetchedResults<E: KeelObject>(_ request: KeelFetchRequest<E>) -> KeelFetchedResults<E> {
        KeelFetchedResults(store: self, request: request)
    }
}
