// Predicate evaluation and sorting read related objects through `ObjectGraphReading`; a fetch
// in a context must read them as the context sees them (its pending changes laid over its
// snapshot). The context's public API gives exactly that view through `get`, so this adapter
// reads through it — no second copy of the context's rules in the server.

import KeelModel

struct ContextGraph: ObjectGraphReading {
    let context: ObjectContext

    var model: Model { context.model }

    /// The object as the context sees it; nil when it does not exist there (or is deleted).
    func object(_ id: ObjectID) throws(KeelError) -> StoredObject? {
        do throws(KeelError) {
            let object = try context.get(id)
            return StoredObject(id: object.id, version: object.version, values: object.values)
        } catch where error.code == .notFound {
            return nil
        }
    }

    /// The live members of a to-many, in order when ordered.
    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID] {
        guard let object = try object(id), object.values.indices.contains(field),
            case .objects(let ids) = object.values[field]
        else { return [] }
        return ids
    }
}

extension ObjectValues {
    /// The row a predicate or a sort reads: attributes (transients as the context holds them)
    /// and to-one targets; to-many slots are left `.null` (evaluation reads them through
    /// `members`).
    func storedObject() throws(KeelError) -> StoredObject {
        var values: [Value] = []
        values.reserveCapacity(entity.properties.count)
        for (field, property) in entity.properties.enumerated() {
            if case .relationship(let r) = property, r.isToMany {
                values.append(.null)
            } else {
                values.append(try value(field: field))
            }
        }
        return StoredObject(id: id, version: version, values: values)
    }
}
