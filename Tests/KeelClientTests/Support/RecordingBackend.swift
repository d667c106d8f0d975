// A backend that records each call before passing it on: what the typed layer actually sends
// (e.g. that `update` sends only the properties that changed).

import KeelClient
import Synchronization

final class RecordingBackend: ContextBackend {
    let inner: any ContextBackend
    /// Guards the calls recorded so far.
    private let recorded = Mutex<[String]>([])

    init(_ inner: any ContextBackend) { self.inner = inner }

    var calls: [String] { recorded.withLock { $0 } }
    func reset() { recorded.withLock { $0.removeAll() } }
    private func note(_ call: String) { recorded.withLock { $0.append(call) } }

    var model: Model { inner.model }
    var name: String { inner.name }

    func insert(entity: String, values: JSON) async throws(KeelError) -> String {
        note("INSERT \(entity) \(values.serialized())")
        return try await inner.insert(entity: entity, values: values)
    }

    func update(_ id: String, values: JSON) async throws(KeelError) {
        note("UPDATE \(id) \(values.serialized())")
        try await inner.update(id, values: values)
    }

    func delete(_ id: String) async throws(KeelError) -> [String] {
        note("DELETE \(id)")
        return try await inner.delete(id)
    }

    func relate(_ id: String, relationship: String, add: [String], remove: [String]) async throws(KeelError) {
        note("RELATE \(id) \(relationship) add \(add) remove \(remove)")
        try await inner.relate(id, relationship: relationship, add: add, remove: remove)
    }

    func get(_ id: String, include: [String]) async throws(KeelError) -> JSON {
        note("GET \(id)")
        return try await inner.get(id, include: include)
    }

    func fetch(_ request: JSON) -> AsyncThrowingStream<JSON, any Error> {
        note("FETCH \(request.serialized())")
        return inner.fetch(request)
    }

    func count(_ request: JSON) async throws(KeelError) -> Int {
        note("COUNT \(request.serialized())")
        return try await inner.count(request)
    }

    func explain(_ request: JSON) async throws(KeelError) -> String { try await inner.explain(request) }
    func changes() async throws(KeelError) -> JSON { try await inner.changes() }
    func save() async throws(KeelError) -> JSON { try await inner.save() }
    func rollback() async throws(KeelError) { try await inner.rollback() }
    func refresh() async throws(KeelError) { try await inner.refresh() }

    func openContext(name: String, child: Bool, mergePolicy: String) async throws(KeelError) -> any ContextBackend {
        try await inner.openContext(name: name, child: child, mergePolicy: mergePolicy)
    }

    func close() async { await inner.close() }
}
