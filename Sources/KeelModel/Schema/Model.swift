// A loaded, validated model (spec/model.md): what every other part of the object layer reads.
// Built only by `ModelLoader` (ModelLoader.swift), which checks every rule of the spec first,
// so code holding a `Model` may rely on: names unique and well-formed, parents acyclic,
// destinations and inverses resolved and mutual, every entity in exactly one configuration with
// its whole hierarchy and every relationship inside one configuration.

public import Collections

public struct Model: Sendable {
    /// The fields live in one immutable box, so copying a `Model` (every editor, session and
    /// context holds one, and hot paths read `editor.model`) costs one retain, not one per field.
    private final class Box: Sendable {
        let name: String
        let version: Int
        let entities: [Entity]
        let configurations: OrderedDictionary<String, [EntityID]>
        let hash: String
        let canonical: JSON
        let warnings: [String]
        let byName: [String: EntityID]
        /// `RowShape` per entity (FetchMaterializer.swift), by entity index.
        let rowShapes: [RowShape]

        init(name: String, version: Int, entities: [Entity], configurations: OrderedDictionary<String, [EntityID]>,
             hash: String, canonical: JSON, warnings: [String]) {
            self.name = name
            self.version = version
            self.entities = entities
            self.configurations = configurations
            self.hash = hash
            self.canonical = canonical
            self.warnings = warnings
            self.byName = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.id) })
            self.rowShapes = entities.map { RowShape($0, entities: entities) }
        }
    }

    private let box: Box

    public var name: String { box.name }
    public var version: Int { box.version }
    /// Every entity; `entities[i].id == EntityID(i)`. Order: as declared in the file.
    public var entities: [Entity] { box.entities }
    /// Configuration name → the entities it holds, in declaration order. A model without
    /// `configurations` has one, `Default`, holding every entity. The first is the primary store
    /// (it keeps the save counter and the history).
    public var configurations: OrderedDictionary<String, [EntityID]> { box.configurations }
    /// Lowercase hex SHA-256 of the canonical form (meaning, not bytes: key order, whitespace,
    /// defaults written out or left out do not change it).
    public var hash: String { box.hash }
    /// The canonical JSON form (every default written out, keys in a fixed order) — what `MODEL`
    /// returns and what the hash is taken over.
    public var canonical: JSON { box.canonical }
    /// Problems that do not refuse the model (a relationship without an inverse), by JSON path.
    public var warnings: [String] { box.warnings }

    private var byName: [String: EntityID] { box.byName }

    /// One per loaded model (its fields' box): what a cache of work done against a model keys
    /// by (PreparedFetchCache.swift). Copies share it; a model loaded or migrated again has another.
    var identity: ObjectIdentifier { ObjectIdentifier(box) }

    public init(
        name: String, version: Int, entities: [Entity], configurations: OrderedDictionary<String, [EntityID]>,
        hash: String, canonical: JSON, warnings: [String]
    ) {
        box = Box(name: name, version: version, entities: entities, configurations: configurations, hash: hash,
                  canonical: canonical, warnings: warnings)
    }

    public subscript(id: EntityID) -> Entity { entities[id.index] }

    /// What materializing a row of `entity` needs (FetchMaterializer.swift).
    func rowShape(of entity: EntityID) -> RowShape { box.rowShapes[entity.index] }

    public func entity(named name: String) -> Entity? {
        byName[name].map { entities[$0.index] }
    }

    /// The configuration (store) an entity lives in.
    public func configuration(of entity: EntityID) -> String {
        entities[entity.index].configuration
    }

    /// Parses `Entity/N` against this model; nil when malformed or the entity is unknown.
    public func objectID(_ text: String) -> ObjectID? {
        guard let slash = text.lastIndex(of: "/"), let entity = entity(named: String(text[..<slash])),
            let number = Self.objectNumber(text[text.index(after: slash)...])
        else { return nil }
        return ObjectID(entity: entity.id, number: number)
    }

    /// The N of an `Entity/N` ID: decimal digits without a sign or a leading zero, from 1 (so
    /// one object has one spelling: `Employee/01` and `Employee/+1` are not IDs).
    public static func objectNumber(_ digits: Substring) -> UInt64? {
        guard let first = digits.utf8.first, first >= UInt8(ascii: "1"), first <= UInt8(ascii: "9"),
            digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return UInt64(digits)
    }
}

/// An entity with everything it inherits resolved.
public struct Entity: Sendable {
    /// One immutable box, as for `Model`: `model[id]` copies an `Entity` on every hot path.
    private final class Box: Sendable {
        let id: EntityID
        let name: String
        let isAbstract: Bool
        let parent: EntityID?
        let root: EntityID
        let family: [EntityID]
        let familySet: Set<EntityID>
        let properties: [Property]
        let fetchedProperties: [FetchedProperty]
        let uniqueConstraints: [Index]
        let indexes: [Index]
        let configuration: String
        let userInfo: JSON?
        let fieldByName: [String: Int]
        let toManyFields: [Int]

        init(id: EntityID, name: String, isAbstract: Bool, parent: EntityID?, root: EntityID, family: [EntityID],
             properties: [Property], fetchedProperties: [FetchedProperty], uniqueConstraints: [Index], indexes: [Index],
             configuration: String, userInfo: JSON?) {
            self.id = id
            self.name = name
            self.isAbstract = isAbstract
            self.parent = parent
            self.root = root
            self.family = family
            self.familySet = Set(family)
            self.properties = properties
            self.fetchedProperties = fetchedProperties
            self.uniqueConstraints = uniqueConstraints
            self.indexes = indexes
            self.configuration = configuration
            self.userInfo = userInfo
            self.fieldByName = Dictionary(uniqueKeysWithValues: properties.enumerated().map { ($1.name, $0) })
            self.toManyFields = properties.indices.filter {
                if case .relationship(let r) = properties[$0] { r.isToMany } else { false }
            }
        }
    }

    private let box: Box

    public var id: EntityID { box.id }
    public var name: String { box.name }
    public var isAbstract: Bool { box.isAbstract }
    public var parent: EntityID? { box.parent }
    /// The top of this entity's inheritance hierarchy (itself when it has no parent).
    public var root: EntityID { box.root }
    /// This entity and every entity below it, self first (what a fetch with sub-entities covers).
    public var family: [EntityID] { box.family }
    /// `family` as a set, built once with the model (fetches ask for it per request).
    public var familySet: Set<EntityID> { box.familySet }
    /// Attributes then relationships, inherited first, in declaration order. A property's
    /// position here is its `field`: the same in every entity of the hierarchy that has it, so
    /// the row codec can number fields once per hierarchy.
    public var properties: [Property] { box.properties }
    public var fetchedProperties: [FetchedProperty] { box.fetchedProperties }
    /// Unique keys over this entity and its sub-entities, inherited ones included.
    public var uniqueConstraints: [Index] { box.uniqueConstraints }
    /// Secondary indexes (`indexes` plus every `"indexed": true` attribute), inherited included.
    public var indexes: [Index] { box.indexes }
    public var configuration: String { box.configuration }
    /// Entity-level keys the spec does not define, kept for tools (codegen) and the canonical form.
    public var userInfo: JSON? { box.userInfo }

    private var fieldByName: [String: Int] { box.fieldByName }
    /// The fields of the to-many relationships, in field order.
    public var toManyFields: [Int] { box.toManyFields }

    public init(
        id: EntityID, name: String, isAbstract: Bool, parent: EntityID?, root: EntityID, family: [EntityID],
        properties: [Property], fetchedProperties: [FetchedProperty], uniqueConstraints: [Index], indexes: [Index],
        configuration: String, userInfo: JSON? = nil
    ) {
        box = Box(id: id, name: name, isAbstract: isAbstract, parent: parent, root: root, family: family,
                  properties: properties, fetchedProperties: fetchedProperties, uniqueConstraints: uniqueConstraints,
                  indexes: indexes, configuration: configuration, userInfo: userInfo)
    }

    /// The position of a property in `properties`.
    public func field(named name: String) -> Int? { fieldByName[name] }

    public func property(named name: String) -> Property? { fieldByName[name].map { properties[$0] } }

    public func fetchedProperty(named name: String) -> FetchedProperty? {
        fetchedProperties.first { $0.name == name }
    }

    public var attributes: some Sequence<(field: Int, attribute: Attribute)> {
        properties.enumerated().lazy.compactMap { i, p in
            if case .attribute(let a) = p { return (i, a) }
            return nil
        }
    }

    public var relationships: some Sequence<(field: Int, relationship: Relationship)> {
        properties.enumerated().lazy.compactMap { i, p in
            if case .relationship(let r) = p { return (i, r) }
            return nil
        }
    }

    /// True when `other` is this entity or one of its sub-entities.
    public func includes(_ other: EntityID) -> Bool { family.contains(other) }
}

public enum Property: Sendable {
    case attribute(Attribute)
    case relationship(Relationship)

    public var name: String {
        switch self {
        case .attribute(let a): a.name
        case .relationship(let r): r.name
        }
    }

    /// The entity that declares the property (an ancestor for inherited ones).
    public var declaredIn: EntityID {
        switch self {
        case .attribute(let a): a.declaredIn
        case .relationship(let r): r.declaredIn
        }
    }
}

public enum AttributeType: String, Sendable, CaseIterable {
    case int16, int32, int64, double, float, decimal, string, bool, date, binary, uuid, uri, json
}

public struct Attribute: Sendable {
    public let name: String
    public let type: AttributeType
    public let isOptional: Bool
    public let defaultValue: Value?
    public let isTransient: Bool
    public let isIndexed: Bool
    /// Inclusive bounds: the value for numbers and dates, the length for strings and binary.
    public let minValue: Value?
    public let maxValue: Value?
    /// For strings: the whole value must match.
    public let regex: String?
    public let renamingIdentifier: String?
    public let declaredIn: EntityID

    public init(
        name: String, type: AttributeType, isOptional: Bool = true, defaultValue: Value? = nil,
        isTransient: Bool = false, isIndexed: Bool = false, minValue: Value? = nil, maxValue: Value? = nil,
        regex: String? = nil, renamingIdentifier: String? = nil, declaredIn: EntityID
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.isTransient = isTransient
        self.isIndexed = isIndexed
        self.minValue = minValue
        self.maxValue = maxValue
        self.regex = regex
        self.renamingIdentifier = renamingIdentifier
        self.declaredIn = declaredIn
    }
}

public enum DeleteRule: String, Sendable, CaseIterable {
    case nullify, cascade, deny, noAction
}

public struct Relationship: Sendable {
    public let name: String
    public let destination: EntityID
    public let isToMany: Bool
    public let isOrdered: Bool
    /// The mirroring relationship's name on `destination` (nil only when the model has none,
    /// which the loader warns about).
    public let inverse: String?
    public let deleteRule: DeleteRule
    /// For to-one.
    public let isOptional: Bool
    /// For to-many; 0 means no bound.
    public let minCount: Int
    public let maxCount: Int
    public let renamingIdentifier: String?
    public let declaredIn: EntityID

    public init(
        name: String, destination: EntityID, isToMany: Bool = false, isOrdered: Bool = false, inverse: String?,
        deleteRule: DeleteRule = .nullify, isOptional: Bool = true, minCount: Int = 0, maxCount: Int = 0,
        renamingIdentifier: String? = nil, declaredIn: EntityID
    ) {
        self.name = name
        self.destination = destination
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.isOptional = isOptional
        self.minCount = minCount
        self.maxCount = maxCount
        self.renamingIdentifier = renamingIdentifier
        self.declaredIn = declaredIn
    }
}

public struct KeelSortDescriptor: Sendable, Hashable {
    public let key: String
    public let ascending: Bool
    public let caseInsensitive: Bool

    public init(key: String, ascending: Bool = true, caseInsensitive: Bool = false) {
        self.key = key
        self.ascending = ascending
        self.caseInsensitive = caseInsensitive
    }
}

public struct FetchedProperty: Sendable {
    public let name: String
    public let destination: EntityID
    /// NSPredicate format; `$FETCH_SOURCE` is the object the property is read on.
    public let predicate: String
    public let sort: [KeelSortDescriptor]
    public let declaredIn: EntityID

    public init(name: String, destination: EntityID, predicate: String, sort: [KeelSortDescriptor], declaredIn: EntityID) {
        self.name = name
        self.destination = destination
        self.predicate = predicate
        self.sort = sort
        self.declaredIn = declaredIn
    }
}

/// A (compound) index or unique key: property fields in key order.
public struct Index: Sendable, Hashable {
    /// A stable name: `Entity.prop1,prop2` with the declaring entity (also the tree name's suffix).
    public let name: String
    public let fields: [Int]
    public let propertyNames: [String]
    public let isUnique: Bool
    /// The entity that declares it; it covers that entity's whole family.
    public let declaredIn: EntityID

    public init(name: String, fields: [Int], propertyNames: [String], isUnique: Bool, declaredIn: EntityID) {
        self.name = name
        self.fields = fields
        self.propertyNames = propertyNames
        self.isUnique = isUnique
        self.declaredIn = declaredIn
    }
}
