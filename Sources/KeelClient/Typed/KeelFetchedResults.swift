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
// Sections (Core Data's `sectionNameKeyPath`): `sectionedBy: Employee.department.name` splits the
// IDs into runs of equal values of that key — the first sort must be by it, as Core Data requires —
// and a snapshot comes also when only the sections changed (a department renamed). A sectioned
// fetch is one `dictionaries` fetch of each object's ID (`"$id"`, `KeelSelf`) and the key's value.
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
        /// The runs of equal values of the `sectionedBy` key, in order; nil without one.
        public let sections: [Section]?
    }

    /// A run of `ids` with one value of the section key (Core Data's `NSFetchedResultsSectionInfo`).
    public struct Section: Sendable, Hashable {
        /// The key's value for the section's objects, in wire form (null: none).
        public let value: JSON
        /// Where the section's objects are in the snapshot's `ids`.
        public let range: Range<Int>

        /// The section's name: a text value as it is, another as its wire text (an ID
        /// `Department/2`, a number, a date…); nil for null.
        public var name: String? {
            switch value {
            case .null: nil
            case .string(let s): s
            default: value.serialized()
            }
        }
    }

    let store: KeelStore
    let request: KeelFetchRequest<E>
    let sectionKey: (any GroupableKey<E>)?

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(store: store, request: request, sectionKey: sectionKey)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let store: KeelStore
        let request: KeelFetchRequest<E>
        let sectionKey: (any GroupableKey<E>)?
        private var live: Live?
        private var events: KeelStream<ChangeEvent>.AsyncIterator?
        private var ids: [KeelID<E>] = []
        private var sections: [Section]?

        init(store: KeelStore, request: KeelFetchRequest<E>, sectionKey: (any GroupableKey<E>)?) {
            self.store = store
            self.request = request
            self.sectionKey = sectionKey
        }

        /// The next snapshot: the first at once, then one per save that changes the result.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(KeelError) -> Snapshot? {
            guard let live, var events else {
                if let sectionKey, request.sortedBy.first?.key != sectionKey.propertyName {
                    throw KeelError(
                        .badRequest,
                        "live results sectioned by \(sectionKey.propertyName) must be sorted by it first (sortedBy: .ascending(…) of the same key), as Core Data's sectionNameKeyPath")
                }
                // Subscribed first, then fetched: a save between the two comes as an event.
                let context = try await store.newContext(name: store.core.nextContextName("fetched-results"))
                self.live = Live(context)
                let followsAll = Self.followsKeyPaths(request, sectionKey, model: store.model)
                self.events = try await store.changes(of: followsAll ? nil : [E.self]).makeAsyncIterator()
                (ids, sections) = try await Self.fetch(request, sectionKey, in: context, isolation: actor)
                return Snapshot(ids: ids, difference: ids.difference(from: []), updated: [], transaction: nil, sections: sections)
            }
            defer { self.events = events }
            while let event = try await events.next(isolation: actor) {
                // The events that have come meanwhile (a burst of saves) are one refetch.
                let burst = [event] + events.buffered()
                let overflow = burst.contains { $0.overflow }
                let changed = Set(burst.flatMap(\.updated))
                try await live.context.refresh()
                let (fresh, freshSections) = try await Self.fetch(request, sectionKey, in: live.context, isolation: actor)
                let difference = fresh.difference(from: ids)
                // Updated: shown before and still shown (one that has just come in is an insertion).
                let before = Set(ids)
                let updated = fresh.filter { changed.contains($0.text) && before.contains($0) }
                guard !difference.isEmpty || !updated.isEmpty || overflow || freshSections != sections else { continue }
                ids = fresh
                sections = freshSections
                return Snapshot(
                    ids: fresh, difference: difference, updated: updated, transaction: overflow ? nil : burst.last?.txn,
                    sections: freshSections)
            }
            return nil
        }

        public mutating func next() async throws(KeelError) -> Snapshot? {
            try await next(isolation: nil)
        }

        /// Whether the predicate, a sort or the section key reads another object than the fetched
        /// one (a key path, an aggregate over a to-many, a SUBQUERY), or the predicate compares a
        /// relationship whose targets may be deleted without the object recording it
        /// (`owner == nil` holds, and `owner == %@` no longer does, once a noAction delete
        /// leaves `owner` dangling): then any transaction may change the result.
        static func followsKeyPaths(_ request: KeelFetchRequest<E>, _ sectionKey: (any GroupableKey<E>)? = nil, model: Model) -> Bool {
            if request.sortedBy.contains(where: { $0.key.contains(".") }) || sectionKey?.propertyName.contains(".") == true { return true }
            guard let format = request.predicate?.format else { return false }
            // Read from the predicate's syntax tree, so a literal with a dot (`name == 'a.b'`, 3.5)
            // does not count; one that does not parse follows everything (the fetch reports it).
            guard let tree = try? KeelPredicate.parse(format) else { return true }
            if tree.readsOtherObjects { return true }
            guard let entity = model.entity(named: E.entity.name) else { return true }
            return tree.comparedKeys.contains { model.relationshipMayDangle($0, of: entity) }
        }

        /// The request's IDs, as the context sees the store now, and with a section key their
        /// sections: one dictionaries fetch of each object's ID (`KeelSelf`) and the key's value.
        static func fetch(
            _ request: KeelFetchRequest<E>, _ sectionKey: (any GroupableKey<E>)?, in context: KeelContext,
            isolation actor: isolated (any Actor)?
        ) async throws(KeelError) -> ([KeelID<E>], [Section]?) {
            guard let sectionKey else { return (try await context.fetchIDs(request).collect(isolation: actor), nil) }
            var plain = request
            plain.including = []
            let rows = try await context.fetchProperties([KeelSelf<E>(), sectionKey], of: plain).collect(isolation: actor)
            var ids: [KeelID<E>] = []
            ids.reserveCapacity(rows.count)
            var sections: [Section] = []
            var start = 0
            for (i, row) in rows.enumerated() {
                ids.append(try row[KeelSelf<E>()])
                let value = row.values[sectionKey.propertyName] ?? .null
                if i > start, let last = rows[i - 1].values[sectionKey.propertyName], last != value {
                    sections.append(Section(value: last, range: start..<i))
                    start = i
                }
            }
            if let last = rows.last { sections.append(Section(value: last.values[sectionKey.propertyName] ?? .null, range: start..<rows.count)) }
            return (ids, sections)
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
    /// `sectionedBy` (Core Data's `sectionNameKeyPath`): snapshots also split the IDs into
    /// sections of equal values of that key, which the first sort must be by (else `BAD_REQUEST`).
    public func fetchedResults<E: KeelObject>(
        _ type: E.Type, where predicate: TypedPredicate<E>? = nil, sortedBy sorts: TypedSort<E>..., limit: Int? = nil,
        offset: Int = 0, includesSubentities: Bool = true, sectionedBy sectionKey: (any GroupableKey<E>)? = nil
    ) -> KeelFetchedResults<E> {
        fetchedResults(
            KeelFetchRequest(type, where: predicate, sortedBy: sorts, limit: limit, offset: offset, includesSubentities: includesSubentities),
            sectionedBy: sectionKey)
    }

    /// A request kept up to date.
    public func fetchedResults<E: KeelObject>(
        _ request: KeelFetchRequest<E>, sectionedBy sectionKey: (any GroupableKey<E>)? = nil
    ) -> KeelFetchedResults<E> {
        KeelFetchedResults(store: self, request: request, sectionKey: sectionKey)
    }
}
