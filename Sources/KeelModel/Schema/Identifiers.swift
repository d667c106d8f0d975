// Strong IDs of the object layer (DESIGN.md, house style): never bare integers.

/// An entity's number in its model: its position in `Model.entities`. Stable for one model hash
/// (the store refuses another model), so rows and keys may carry it.
public struct EntityID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ index: Int) { self.rawValue = UInt16(index) }
    public var index: Int { Int(rawValue) }
    public static func < (a: EntityID, b: EntityID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "entity#\(rawValue)" }
}

/// An object's permanent identity: its concrete entity and the positive number the store gave
/// it at insert (spec/protocol.md: `Entity/N`). Numbers count per concrete entity and are never
/// reused, not even after a rollback or a restart.
public struct ObjectID: Hashable, Comparable, Sendable {
    public let entity: EntityID
    public let number: UInt64

    public init(entity: EntityID, number: UInt64) {
        precondition(number > 0, "object numbers start at 1")
        self.entity = entity
        self.number = number
    }

    public static func < (a: ObjectID, b: ObjectID) -> Bool {
        (a.entity, a.number) < (b.entity, b.number)
    }

    /// One word into the hasher instead of two (the entity in the top bits, where numbers never
    /// reach): contexts and saves hash IDs several times per object.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(number ^ UInt64(entity.rawValue) << 48)
    }

    /// `Employee/17`.
    public func text(in model: Model) -> String { "\(model[entity].name)/\(number)" }
}
