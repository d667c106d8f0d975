// The state a fetch evaluates predicates and sort keys on: the context's state with a small
// cache of the objects reached through to-one relationships (`department.name` on a million
// employees reads each department once, not once per employee). The state is a copy taken at the
// start of the fetch and never changes under it, so the cache cannot go stale.

final class FetchGraphCache {
    var objects: [ObjectID: StoredObject?] = [:]
    static let capacity = 4096
}

struct FetchGraph: ObjectGraphReading {
    let state: ContextOverlay
    let cache = FetchGraphCache()

    init(_ state: ContextOverlay) {
        self.state = state
    }

    var model: Model { state.model }

    func object(_ id: ObjectID) throws(KeelError) -> StoredObject? {
        if let hit = cache.objects[id] { return hit }
        let object = try state.object(id)
        if cache.objects.count >= FetchGraphCache.capacity { cache.objects.removeAll(keepingCapacity: true) }
        cache.objects[id] = .some(object)
        return object
    }

    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID] {
        try state.members(of: id, field: field)
    }
}
