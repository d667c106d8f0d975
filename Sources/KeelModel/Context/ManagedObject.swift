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

    /// The wire form: `$id`, `$entity`, `$version`, then every property in field order (only
    /// `fields` when given); included relationships embed objects instead of IDs, and evaluated
    /// fetched properties follow as arrays of objects.
    public func json(in model: Model, fields: [Int]? = nil) -> JSON {
        var members: [(String, JSON)] = [
            ("$id", .string(idText)), ("$entity", .string(entity.name)), ("$version", .int(Int64(version))),
        ]
        members.reserveCapacity(values.count + 3)
        let selected = fields.map(Set.init)
        for (field, property) in entity.properties.enumerated() {
            if let selected, !selected.contains(field), included[property.name] == nil { continue }
            if case .relationship(let r) = property, let embedded = included[r.name] {
                let objects = embedded.map { $0.json(in: model) }
                members.append((r.name, r.isToMany ? .array(objects) : objects.first ?? .null))
                continue
            }
            members.append((property.name, property.wire(values[field], in: model)))
        }
        for fetched in entity.fetchedProperties {
            if let objects = included[fetched.name] { members.append((fetched.name, .array(objects.map { $0.json(in: model) }))) }
        }
        return .object(.init(members, uniquingKeysWith: { first, _ in first }))
    }
}

extension ManagedObject: Equatable {
    public static func == (a: ManagedObject, b: ManagedObject) -> Bool {
        a.id == b.id && a.version == b.version && a.values == b.values && a.included == b.included
    }
}

extension Property {
    /// A value of this property in the wire form (spec/model.md): an attribute's JSON, a to-one
    /// as `"Entity/N"` or null, a to-many as an array of those.
    public func wire(_ value: Value, in model: Model) -> JSON {
        switch self {
        case .attribute(let a):
            return ValueCodec.encode(value, as: a.type)
        case .relationship(let r):
            switch value {
            case .object(let id): return .string(id.text(in: model))
            case .objects(let ids): return .array(ids.map { .string($0.text(in: model)) })
            default: return r.isToMany ? .array([]) : .null
            }
        }
    }
}
