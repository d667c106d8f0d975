// What GET and FETCH hand to client code: an immutable value, a snapshot of one object as its
// context saw it (DESIGN.md: "objects handed to client code are values"). It never changes after
// it is made and can cross threads; to change the object, call the context.

/// One object as a context reads it (spec/protocol.md, "Values and objects").
public struct ManagedObject: Sendable {
    public let id: ObjectID
    public let entity: Entity
    /// Saved changes of the object (0 for one inserted and not yet saved).
    public let version: UInt64
    /// One value per field (`entity.properties`): attributes (transient ones as the context holds
    /// them; unset as `.null`), a to-one as `.object`/`.null`, a to-many as `.objects` (in order
    /// when ordered). References to objects that are missing (deleted, or dangling after a
    /// `noAction` delete) read as missing: `.null`, or left out of the list.
    public let values: [Value]
    /// Objects embedded by `include`, by relationship name (one for a to-one, none when null), and
    /// the objects of evaluated fetched properties, by their name.
    public let included: [String: [ManagedObject]]

    public init(id: ObjectID, entity: Entity, version: UInt64, values: [Value], included: [String: [ManagedObject]] = [:]) {
        self.id = id
        self.entity = entity
        self.version = version
        self.values = values
        self.included = included
    }

    /// The value of a property by name; nil when the entity has no such property.
    public subscript(name: String) -> Value? {
        entity.field(named: name).map { values[$0] }
    }

    /// `Entity/N`.
    public var idText: String { "\(entity.name)/\(id.number)" }
}

extension ManagedObject: Equatable {
    public static func == (a: ManagedObject, b: ManagedObject) -> Bool {
        a.id == b.id && a.version == b.version && a.values == b.values && a.included == b.included
    }
}
