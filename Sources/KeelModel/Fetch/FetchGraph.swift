// The state a fetch evaluates predicates and sort keys on: the context's state with a small
// cache of the objects reached through to-one relationships (`department.name` on a million
// employees reads each department once, not once per employee). The state is a copy taken at the
// start of the fetch and never changes under it, so the cache cannot go stale. A class, so that
// handing it to an evaluator per row costs one retain, not a copy of the overlay.

final class FetchGraph: ObjectGraphReading {
    static let capacity = 4096

    let state: ContextOverlay
    private var objects: [ObjectID: StoredObject?] = [:]

    init(_ state: ContextOverlay) {
        self.state = state
    }

    var model: Model { state.model }

    func object(_ id: ObjectID) throws(KeelError) -> StoredObject? {
        if let hit = objects[id] { return hit }
        let object = try state.object(id)
        if objects.count >= Self.capacity { objects.removeAll(keepingCapacity: true) }
        objects[id] = .some(object)
        return object
    }

    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID] {
        try state.members(of: id, field: field)
    }
}
