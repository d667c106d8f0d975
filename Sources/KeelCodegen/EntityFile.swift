// One generated file: the class of one entity (spec/cli.md, `codegen`: "typed Swift for the
// client library, one file per entity"). In order: the header (what generated it, from which
// model), the class (stored attributes and to-ones, computed to-manys, the initializer for new
// objects with the model's defaults, `init(row:)`, `encode(into:)`, the metadata and the
// sub-entity lookup), the to-many accessors (`addToEmployees`…), and the typed keys. Every line
// comes from the model, in the model's order, so the same model always gives the same bytes.

import KeelModel

struct EntityFile {
    let model: Model
    let entity: Entity
    let header: String

    private var name: String { entity.name }
    private var parentName: String? { entity.parent.map { model[$0].name } }
    private var hasChildren: Bool { model.entities.contains { $0.parent == entity.id } }

    /// The properties this entity declares (inherited ones come from the parent class).
    private var own: [Property] { entity.properties.filter { $0.declaredIn == entity.id } }
    private var ownFetched: [FetchedProperty] { entity.fetchedProperties.filter { $0.declaredIn == entity.id } }

    func render() -> String {
        var out = header
        // Foundation only when a property (inherited ones too: the initializer takes them) has
        // one of its types.
        let foundation: Set<AttributeType> = [.decimal, .date, .binary, .uuid, .uri]
        let needsFoundation = entity.attributes.contains { foundation.contains($0.attribute.type) }
        out += needsFoundation ? "\npublic import Foundation\npublic import KeelClient\n\n" : "\npublic import KeelClient\n\n"
        out += classDeclaration()
        out += accessors()
        out += keys()
        return out
    }

    // MARK: The class

    private func classDeclaration() -> String {
        let kind = hasChildren ? "public class" : "public final class"
        var lines: [String] = []
        lines.append(docComment())
        lines.append("\(kind) \(name): \(parentName ?? "KeelObject") {")
        for property in own {
            lines.append(contentsOf: storedProperty(property).map { "    " + $0 })
        }
        lines.append("")
        lines.append(contentsOf: newObjectInit().map { "    " + $0 })
        lines.append("")
        lines.append(contentsOf: rowInit().map { "    " + $0 })
        lines.append("")
        lines.append(contentsOf: encode().map { "    " + $0 })
        lines.append("")
        lines.append("    public override class var entity: KeelEntityDescription { entityDescription }")
        lines.append("")
        lines.append(contentsOf: concreteType().map { "    " + $0 })
        lines.append("}")
        lines.append("")
        lines.append(contentsOf: metadata())
        return lines.joined(separator: "\n") + "\n"
    }

    private func docComment() -> String {
        var words = "/// The `\(name)` entity"
        var facts: [String] = []
        if entity.isAbstract { facts.append("abstract") }
        if let parentName { facts.append("parent `\(parentName)`") }
        let children = model.entities.filter { $0.parent == entity.id }.map { "`\($0.name)`" }
        if !children.isEmpty { facts.append("sub-entities \(children.joined(separator: ", "))") }
        facts.append("store `\(entity.configuration)`")
        words += " (" + facts.joined(separator: "; ") + ")."
        return words
    }

    private func storedProperty(_ property: Property) -> [String] {
        let member = SwiftNames.written(property.name)
        switch property {
        case .attribute(let a):
            return ["/// \(describe(a))", "public var \(member): \(swiftType(a))"]
        case .relationship(let r) where !r.isToMany:
            return ["/// \(describe(r))", "public var \(member): KeelID<\(model[r.destination].name)>?"]
        case .relationship(let r):
            let target = model[r.destination].name
            return [
                "/// \(describe(r))",
                "public var \(member): [KeelID<\(target)>] {",
                "    get { memberIDs(\(SwiftLiterals.string(r.name)), as: \(target).self) }",
                "    set { setMembers(\(SwiftLiterals.string(r.name)), newValue) }",
                "}",
            ]
        }
    }

    /// `init(name:age:…)` for a new object: every property, inherited first, defaults from the model.
    private func newObjectInit() -> [String] {
        let parameters = entity.properties.map { property -> String in
            let label = SwiftNames.written(property.name)
            switch property {
            case .attribute(let a):
                if let literal = a.defaultValue.flatMap({ SwiftLiterals.value($0, as: a.type) }) {
                    return "\(label): \(swiftType(a)) = \(literal)"
                }
                return a.isOptional ? "\(label): \(swiftType(a)) = nil" : "\(label): \(swiftType(a))"
            case .relationship(let r) where !r.isToMany:
                return "\(label): KeelID<\(model[r.destination].name)>? = nil"
            case .relationship(let r):
                return "\(label): [KeelID<\(model[r.destination].name)>] = []"
            }
        }
        let access = entity.isAbstract ? "" : "public "
        var lines = [
            entity.isAbstract
                ? "/// For sub-entities' initializers (\(name) is abstract: insert one of its sub-entities)."
                : "/// A new \(name), not inserted yet (`context.insert(_:)`); properties start at the model's defaults.",
            "\(access)init(",
        ]
        lines.append(contentsOf: parameters.enumerated().map { i, p in "    " + p + (i == parameters.count - 1 ? "" : ",") })
        lines.append(") {")
        for property in own where !property.isToMany {
            lines.append("    self.\(SwiftNames.written(property.name)) = \(SwiftNames.written(property.name))")
        }
        if let parent = entity.parent {
            let inherited = model[parent].properties.map { "\(SwiftNames.label($0.name)): \(SwiftNames.written($0.name))" }
            lines.append("    super.init(\(inherited.joined(separator: ", ")))")
        } else {
            lines.append("    super.init()")
        }
        for case .relationship(let r) in own where r.isToMany {
            lines.append("    self.\(SwiftNames.written(r.name)) = \(SwiftNames.written(r.name))")
        }
        lines.append("}")
        return lines
    }

    private func rowInit() -> [String] {
        var lines = ["public required init(row: KeelRow) throws(KeelError) {"]
        for property in own {
            let member = SwiftNames.written(property.name)
            let key = SwiftLiterals.string(property.name)
            switch property {
            case .attribute: lines.append("    \(member) = try row.value(\(key))")
            case .relationship(let r) where !r.isToMany: lines.append("    \(member) = try row.toOne(\(key))")
            case .relationship: continue
            }
        }
        lines.append("    try super.init(row: row)")
        lines.append("}")
        return lines
    }

    private func encode() -> [String] {
        var lines = ["public override func encode(into values: inout KeelValues) {", "    super.encode(into: &values)"]
        for property in own where !property.isToMany {
            lines.append("    values[\(SwiftLiterals.string(property.name))] = \(SwiftNames.written(property.name)).wire")
        }
        lines.append("}")
        return lines
    }

    private func concreteType() -> [String] {
        var lines = ["public override class func concreteType(forEntity name: String) -> KeelObject.Type? {", "    switch name {"]
        for member in entity.family where !model[member].isAbstract {
            lines.append("    case \(SwiftLiterals.string(model[member].name)): \(model[member].name).self")
        }
        lines.append("    default: nil")
        lines.append("    }")
        lines.append("}")
        return lines
    }

    private func metadata() -> [String] {
        var lines = ["private let entityDescription = KeelEntityDescription("]
        lines.append("    name: \(SwiftLiterals.string(name)), isAbstract: \(entity.isAbstract), parent: \(parentName.map(SwiftLiterals.string) ?? "nil"),")
        lines.append("    family: [\(entity.family.map { SwiftLiterals.string(model[$0].name) }.joined(separator: ", "))],")
        lines.append("    properties: [")
        for property in entity.properties {
            lines.append("        \(propertyDescription(property)),")
        }
        lines.append("    ],")
        if !entity.fetchedProperties.isEmpty {
            lines.append("    fetchedProperties: [")
            for fetched in entity.fetchedProperties {
                lines.append(
                    "        KeelFetchedPropertyDescription(name: \(SwiftLiterals.string(fetched.name)), destination: \(SwiftLiterals.string(model[fetched.destination].name)), predicate: \(SwiftLiterals.string(fetched.predicate))),")
            }
            lines.append("    ],")
        }
        lines.append("    configuration: \(SwiftLiterals.string(entity.configuration)))")
        return lines
    }

    private func propertyDescription(_ property: Property) -> String {
        let declaredIn = SwiftLiterals.string(model[property.declaredIn].name)
        let name = SwiftLiterals.string(property.name)
        switch property {
        case .attribute(let a):
            let kind = ".attribute(.\(a.type.rawValue), optional: \(a.isOptional), transient: \(a.isTransient))"
            let defaultValue = a.defaultValue.map { ", defaultValue: \(SwiftLiterals.json(ValueCodec.encode($0, as: a.type)))" } ?? ""
            return "KeelPropertyDescription(name: \(name), kind: \(kind), declaredIn: \(declaredIn)\(defaultValue))"
        case .relationship(let r):
            let destination = SwiftLiterals.string(model[r.destination].name)
            let inverse = r.inverse.map(SwiftLiterals.string) ?? "nil"
            let kind =
                r.isToMany
                ? ".toMany(destination: \(destination), ordered: \(r.isOrdered), inverse: \(inverse), deleteRule: .\(r.deleteRule.rawValue))"
                : ".toOne(destination: \(destination), inverse: \(inverse), deleteRule: .\(r.deleteRule.rawValue))"
            return "KeelPropertyDescription(name: \(name), kind: \(kind), declaredIn: \(declaredIn))"
        }
    }

    // MARK: To-many accessors

    private func accessors() -> String {
        var lines: [String] = []
        for case .relationship(let r) in own where r.isToMany {
            let target = model[r.destination].name
            let suffix = SwiftNames.capitalized(r.name)
            let key = SwiftLiterals.string(r.name)
            lines.append("")
            lines.append("    /// Adds to `\(r.name)` (sent by `context.insert` or `context.update`; an object not inserted yet is sent once it is).")
            lines.append("    public func addTo\(suffix)(_ value: \(target)) { addMember(value, to: \(key)) }")
            lines.append("    public func addTo\(suffix)(_ values: [\(target)]) { for value in values { addMember(value, to: \(key)) } }")
            lines.append("    public func addTo\(suffix)(_ id: KeelID<\(target)>) { addMember(id, to: \(key)) }")
            if r.isOrdered {
                lines.append("    /// Places a member at `index` of the ordered `\(r.name)`.")
                lines.append("    public func insertInto\(suffix)(_ value: \(target), at index: Int) { addMember(value, to: \(key), at: index) }")
            }
            lines.append("    /// Removes from `\(r.name)`.")
            lines.append("    public func removeFrom\(suffix)(_ value: \(target)) { removeMember(value, from: \(key)) }")
            lines.append("    public func removeFrom\(suffix)(_ values: [\(target)]) { for value in values { removeMember(value, from: \(key)) } }")
            lines.append("    public func removeFrom\(suffix)(_ id: KeelID<\(target)>) { removeMember(id, from: \(key)) }")
        }
        guard !lines.isEmpty else { return "" }
        return "\n// MARK: To-many accessors\n\nextension \(name) {" + lines.dropFirst().map { "\n" + $0 }.joined() + "\n}\n"
    }

    // MARK: Typed keys

    private func keys() -> String {
        var lines: [String] = []
        for property in own {
            let member = SwiftNames.written(property.name)
            let key = SwiftLiterals.string(property.name)
            switch property {
            case .attribute(let a):
                lines.append("    public static var \(member): AttributeKey<Self, \(baseType(a.type))> { AttributeKey(\(key)) }")
            case .relationship(let r) where !r.isToMany:
                lines.append("    public static var \(member): ToOneKey<Self, \(model[r.destination].name)> { ToOneKey(\(key)) }")
            case .relationship(let r):
                lines.append("    public static var \(member): ToManyKey<Self, \(model[r.destination].name)> { ToManyKey(\(key)) }")
            }
        }
        for fetched in ownFetched {
            let member = SwiftNames.written(fetched.name)
            lines.append(
                "    public static var \(member): FetchedPropertyKey<Self, \(model[fetched.destination].name)> { FetchedPropertyKey(\(SwiftLiterals.string(fetched.name))) }")
        }
        guard !lines.isEmpty else { return "" }
        return "\n// MARK: Typed keys, for predicates and sorts (sub-entities inherit them)\n\nextension KeelEntity where Self: \(name) {\n"
            + lines.joined(separator: "\n") + "\n}\n"
    }

    // MARK: Types and comments

    private func swiftType(_ a: Attribute) -> String {
        baseType(a.type) + (a.isOptional ? "?" : "")
    }

    func baseType(_ type: AttributeType) -> String {
        switch type {
        case .int16: "Int16"
        case .int32: "Int32"
        case .int64: "Int64"
        case .double: "Double"
        case .float: "Float"
        case .decimal: "Decimal"
        case .string: "String"
        case .bool: "Bool"
        case .date: "Date"
        case .binary: "Data"
        case .uuid: "UUID"
        case .uri: "URL"
        case .json: "JSON"
        }
    }

    private func describe(_ a: Attribute) -> String {
        var facts = [a.type.rawValue, a.isOptional ? "optional" : "required"]
        if a.isTransient { facts.append("transient") }
        if a.isIndexed { facts.append("indexed") }
        if let d = a.defaultValue { facts.append("default \(ValueCodec.encode(d, as: a.type).serialized())") }
        if let v = a.minValue { facts.append("min \(ValueCodec.encode(v).serialized())") }
        if let v = a.maxValue { facts.append("max \(ValueCodec.encode(v).serialized())") }
        if let regex = a.regex { facts.append("regex \(JSON.string(regex).serialized())") }
        return "`\(a.name)`: " + facts.joined(separator: ", ") + "."
    }

    private func describe(_ r: Relationship) -> String {
        var facts = ["\(r.isToMany ? (r.isOrdered ? "ordered to-many" : "to-many") : "to-one") \(model[r.destination].name)"]
        if let inverse = r.inverse { facts.append("inverse `\(inverse)`") }
        facts.append("delete rule \(r.deleteRule.rawValue)")
        if !r.isToMany && !r.isOptional { facts.append("required") }
        if r.minCount > 0 { facts.append("min \(r.minCount)") }
        if r.maxCount > 0 { facts.append("max \(r.maxCount)") }
        return "`\(r.name)`: " + facts.joined(separator: ", ") + "."
    }
}

extension Property {
    var isToMany: Bool {
        if case .relationship(let r) = self { return r.isToMany }
        return false
    }
}
