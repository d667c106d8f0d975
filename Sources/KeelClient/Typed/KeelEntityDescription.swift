// Entity metadata in generated code: what the model says about an entity (Core Data's
// `NSEntityDescription`), written out by `keelctl codegen` so a program can read it without the
// model file: name, abstract, parent and sub-entities, and every property (inherited ones first,
// as the model orders fields) with its type, optionality, default, destination, inverse and delete
// rule. The typed layer checks it against the model the store serves before an entity's first
// use (`check(against:)`), so code generated from another model version fails clearly.

public struct KeelEntityDescription: Sendable {
    public let name: String
    public let isAbstract: Bool
    /// The parent entity's name.
    public let parent: String?
    /// This entity and every entity below it (what a fetch with sub-entities covers), self first.
    public let family: [String]
    /// Attributes and relationships, inherited first, in the model's field order.
    public let properties: [KeelPropertyDescription]
    /// Fetched properties (inherited first).
    public let fetchedProperties: [KeelFetchedPropertyDescription]
    /// The store configuration the entity lives in.
    public let configuration: String

    public init(
        name: String, isAbstract: Bool, parent: String?, family: [String], properties: [KeelPropertyDescription],
        fetchedProperties: [KeelFetchedPropertyDescription] = [], configuration: String
    ) {
        self.name = name
        self.isAbstract = isAbstract
        self.parent = parent
        self.family = family
        self.properties = properties
        self.fetchedProperties = fetchedProperties
        self.configuration = configuration
    }

    /// Whether an object of entity `name` is one of this entity's (itself or a sub-entity).
    public func covers(_ name: String) -> Bool { family.contains(name) }

    public func property(named name: String) -> KeelPropertyDescription? {
        properties.first { $0.name == name }
    }

    /// Checks the description against the model a store serves: the entity exists with the
    /// same parent and abstractness, and each property exists there with the same kind, type and
    /// destination (the model may have more). `MODEL_MISMATCH` lists every difference.
    public func check(against model: Model) throws(KeelError) {
        guard let served = model.entity(named: name) else {
            throw KeelError(
                .modelMismatch,
                "the generated \(name) is not an entity of the model \(model.name) the store serves: regenerate with keelctl codegen")
        }
        var problems = ProblemReport()
        let servedParent = served.parent.map { model[$0].name }
        if servedParent != parent { problems.add("parent is \(servedParent ?? "none") there, \(parent ?? "none") here") }
        if served.isAbstract != isAbstract { problems.add("abstract is \(served.isAbstract) there, \(isAbstract) here") }
        for property in properties {
            guard let there = served.property(named: property.name) else {
                problems.add("\(property.name) is not a property there")
                continue
            }
            let theirs = KeelPropertyDescription(property: there, in: model)
            if !property.kind.accepts(theirs.kind) {
                problems.add("\(property.name) is \(theirs.kind) there, \(property.kind) here")
            }
        }
        for fetched in fetchedProperties {
            guard let there = served.fetchedProperty(named: fetched.name) else {
                problems.add("\(fetched.name) is not a fetched property there")
                continue
            }
            if model[there.destination].name != fetched.destination {
                problems.add("\(fetched.name) fetches \(model[there.destination].name) there, \(fetched.destination) here")
            }
        }
        guard problems.isEmpty else {
            throw KeelError(
                .modelMismatch,
                "the generated \(name) does not match the model \(model.name) the store serves (\(problems.listing())): regenerate with keelctl codegen",
                details: problems.details())
        }
    }
}

/// An attribute or relationship of an entity.
public struct KeelPropertyDescription: Sendable, Hashable {
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        case attribute(AttributeType, optional: Bool, transient: Bool)
        case toOne(destination: String, inverse: String?, deleteRule: DeleteRule)
        case toMany(destination: String, ordered: Bool, inverse: String?, deleteRule: DeleteRule)

        /// Whether generated code of this kind reads and writes a property of kind `served`
        /// correctly: same attribute type (and optional there only if optional here), same
        /// relationship shape and destination. Inverses and delete rules may differ.
        public func accepts(_ served: Kind) -> Bool {
            switch (self, served) {
            case (.attribute(let a, let optional, _), .attribute(let b, let servedOptional, _)):
                a == b && (optional || !servedOptional)
            case (.toOne(let a, _, _), .toOne(let b, _, _)): a == b
            case (.toMany(let a, let ordered, _, _), .toMany(let b, let servedOrdered, _, _)): a == b && ordered == servedOrdered
            default: false
            }
        }

        public var description: String {
            switch self {
            case .attribute(let type, let optional, let transient):
                "\(transient ? "transient " : "")\(optional ? "optional " : "")\(type.rawValue)"
            case .toOne(let destination, _, _): "to-one \(destination)"
            case .toMany(let destination, let ordered, _, _): "\(ordered ? "ordered " : "")to-many \(destination)"
            }
        }
    }

    public let name: String
    public let kind: Kind
    /// The entity that declares it (an ancestor for inherited properties).
    public let declaredIn: String
    /// The model's default value, in wire JSON (attributes only).
    public let defaultValue: JSON?

    public init(name: String, kind: Kind, declaredIn: String, defaultValue: JSON? = nil) {
        self.name = name
        self.kind = kind
        self.declaredIn = declaredIn
        self.defaultValue = defaultValue
    }

    /// The description of a model property (what codegen writes out).
    public init(property: Property, in model: Model) {
        switch property {
        case .attribute(let a):
            self.init(
                name: a.name, kind: .attribute(a.type, optional: a.isOptional, transient: a.isTransient),
                declaredIn: model[a.declaredIn].name, defaultValue: a.defaultValue.map { ValueCodec.encode($0, as: a.type) })
        case .relationship(let r):
            let destination = model[r.destination].name
            self.init(
                name: r.name,
                kind: r.isToMany
                    ? .toMany(destination: destination, ordered: r.isOrdered, inverse: r.inverse, deleteRule: r.deleteRule)
                    : .toOne(destination: destination, inverse: r.inverse, deleteRule: r.deleteRule),
                declaredIn: model[r.declaredIn].name)
        }
    }

    public var isAttribute: Bool {
        if case .attribute = kind { return true }
        return false
    }
}

/// A fetched property: a fetch evaluated when asked (spec/model.md, "Fetched properties").
public struct KeelFetchedPropertyDescription: Sendable, Hashable {
    public let name: String
    public let destination: String
    public let predicate: String

    public init(name: String, destination: String, predicate: String) {
        self.name = name
        self.destination = destination
        self.predicate = predicate
    }
}
