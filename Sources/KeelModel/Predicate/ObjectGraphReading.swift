// What predicate evaluation needs from whoever holds the objects: a row by ID and the members of
// a to-many relationship. A store snapshot (`ObjectSnapshot`, through `ObjectReader`, which
// refines this protocol) and a context's overlay (its pending inserts, updates and deletes laid
// over its snapshot) both conform, so one evaluator gives a fetch in a context exactly the
// answers the context would read.
//
// Contract for conformers:
// - `object(_:)` returns nil for an object that does not exist *as seen by this reader*: never
//   inserted, deleted in the store, or deleted in the context. A to-one pointing at such an
//   object reads as nil in a predicate.
// - `members(of:field:)` returns only objects that exist as seen by this reader (a context drops
//   members it deleted), in order for an ordered relationship.
// - Rows carry one value per field (`Entity.properties`); to-many slots are not read.

public protocol ObjectGraphReading {
    var model: Model { get }
    /// The object's row, nil when there is no such object (or it is deleted).
    func object(_ id: ObjectID) throws(KeelError) -> StoredObject?
    /// The live targets of a to-many field, in order for an ordered relationship.
    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID]
}
