// Object IDs in the typed layer. `KeelObjectID` is the protocol's `Entity/N`, untyped;
// `KeelID<Employee>` is the same ID with the entity in its type, so `get`, relationships and
// predicates only take IDs of the right entity. IDs are values (`Sendable`): unlike objects,
// they go anywhere — to another task, another context, another process (Core Data's rule:
// pass `objectID`, not the object).

/// An object's ID as the protocol writes it: `Employee/17` (its concrete entity and number).
public struct KeelObjectID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let entityName: String
    public let number: UInt64

    public init(entityName: String, number: UInt64) {
        self.entityName = entityName
        self.number = number
    }

    /// Parses `Entity/N` (N from 1); nil when malformed.
    public init?(_ text: String) {
        guard let slash = text.lastIndex(of: "/"), slash != text.startIndex,
            let number = Model.objectNumber(text[text.index(after: slash)...])
        else { return nil }
        self.init(entityName: String(text[..<slash]), number: number)
    }

    /// Parses `Entity/N` from a reply; `TYPE` naming `what` when it is not one.
    init(parsing json: JSON, _ what: @autoclosure () -> String) throws(KeelError) {
        guard case .string(let text) = json, let id = KeelObjectID(text) else {
            throw KeelError(.type, "\(what()): expected an object ID (Entity/N), found \(json.serialized())")
        }
        self = id
    }

    /// `Employee/17`.
    public var text: String { "\(entityName)/\(number)" }
    public var description: String { text }

    public static func < (a: KeelObjectID, b: KeelObjectID) -> Bool {
        (a.entityName, a.number) < (b.entityName, b.number)
    }
}

/// The ID of an object of `Entity` (or of one of its sub-entities: a `KeelID<Person>` may name
/// an `Employee`).
public struct KeelID<Entity: KeelObject>: AnyKeelID, Hashable, Comparable, Sendable, CustomStringConvertible {
    public let objectID: KeelObjectID

    /// Used where the entity is known to fit (replies to typed requests).
    init(unchecked objectID: KeelObjectID) {
        self.objectID = objectID
    }

    /// The ID when its entity is `Entity` or one of its sub-entities; nil otherwise.
    public init?(_ objectID: KeelObjectID) {
        guard Entity.entity.covers(objectID.entityName) else { return nil }
        self.objectID = objectID
    }

    /// Parses `Entity/N`; nil when malformed or of another entity.
    public init?(_ text: String) {
        guard let id = KeelObjectID(text) else { return nil }
        self.init(id)
    }

    /// The same ID typed as an ancestor (`KeelID<Employee>` → `KeelID<Person>`, for a
    /// relationship whose destination is the parent); nil when `T` is not an ancestor.
    public func upcast<T: KeelObject>(to type: T.Type = T.self) -> KeelID<T>? {
        KeelID<T>(objectID)
    }

    public var text: String { objectID.text }
    public var description: String { objectID.text }

    public static func < (a: KeelID, b: KeelID) -> Bool { a.objectID < b.objectID }
}

/// An ID, typed or not.
public protocol AnyKeelID: Sendable {
    var objectID: KeelObjectID { get }
}

extension KeelObjectID: AnyKeelID {
    public var objectID: KeelObjectID { self }
}

extension AnyKeelID {
    /// The wire JSON: `"Entity/N"`.
    public var wire: JSON { .string(objectID.text) }
}

extension Optional where Wrapped: AnyKeelID {
    /// The wire JSON of an optional ID (a to-one): its text, or null.
    public var wire: JSON { map(\.wire) ?? .null }
}

extension Array where Element: AnyKeelID {
    /// The wire JSON of a list of IDs (a to-many).
    public var wire: JSON { .array(map(\.wire)) }
}
