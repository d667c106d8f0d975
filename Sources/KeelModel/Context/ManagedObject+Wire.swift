// The wire form of an object (spec/protocol.md, "Values and objects"), decided in one place for
// two outputs: `wireMembers` says which keys come, in which order, with which value — `$id`,
// `$entity`, `$version`, every property in field order (only `fields` when given), included
// relationships as embedded objects, evaluated fetched properties last — and the outputs only
// render it: `json(in:fields:)` builds the `JSON` tree (what the embedded client and keelctl hand
// on), `write(to:in:fields:)` writes the same text straight into a reply's bytes (what keeld
// sends for GET and every FETCH row: no tree, no `String`). Keys are unique within an entity
// (the model loader refuses a property or fetched property named twice) and need no escaping
// (entity names match [A-Z][A-Za-z0-9_]*, property names [a-z][A-Za-z0-9_]*), so the text
// writer copies them as they are. ManagedObjectWireTests checks that both outputs give the same
// text for values of every attribute type.

import Collections

/// One member's value of an object's wire form, before it is rendered.
enum WireValue {
    /// An attribute's JSON (ValueCodec's canonical form).
    case json(JSON)
    /// A to-one's target as `"Entity/N"`, or null.
    case reference(ObjectID?)
    /// A to-many's targets as an array of `"Entity/N"`.
    case references([ObjectID])
    /// Included objects: an array when `many` (a to-many or a fetched property), else the one
    /// object or null.
    case embedded([ManagedObject], many: Bool)

    /// The value as a `JSON` tree.
    func json(in model: Model) -> JSON {
        switch self {
        case .json(let json): return json
        case .reference(let target): return target.map { .string($0.text(in: model)) } ?? .null
        case .references(let targets): return .array(targets.map { .string($0.text(in: model)) })
        case .embedded(let objects, let many):
            let trees = objects.map { $0.json(in: model) }
            return many ? .array(trees) : trees.first ?? .null
        }
    }

    /// The value's compact text, appended to `out`.
    func writeText<Output: JSONTextOutput>(to out: inout Output, in model: Model) {
        switch self {
        case .json(let json):
            json.writeText(to: &out)
        case .reference(let target):
            if let target { target.writeText(to: &out, in: model) } else { out.appendText("null") }
        case .references(let targets):
            out.appendText("[")
            for (i, target) in targets.enumerated() {
                if i > 0 { out.appendText(",") }
                target.writeText(to: &out, in: model)
            }
            out.appendText("]")
        case .embedded(let objects, let many):
            guard many else {
                if let object = objects.first { object.writeText(to: &out, in: model, fields: nil) } else { out.appendText("null") }
                return
            }
            out.appendText("[")
            for (i, object) in objects.enumerated() {
                if i > 0 { out.appendText(",") }
                object.writeText(to: &out, in: model, fields: nil)
            }
            out.appendText("]")
        }
    }
}

extension ManagedObject {
    /// Calls `body` with each member of the wire form, in order.
    func wireMembers(fields: [Int]?, _ body: (String, WireValue) -> Void) {
        body("$id", .reference(id))
        body("$entity", .json(.string(entity.name)))
        body("$version", .json(.int(Int64(version))))
        var selected: [Bool]?
        if let fields {
            var marks = [Bool](repeating: false, count: entity.properties.count)
            for field in fields where marks.indices.contains(field) { marks[field] = true }
            selected = marks
        }
        for (field, property) in entity.properties.enumerated() {
            let embedded = included.isEmpty ? nil : included[property.name]
            if let selected, !selected[field], embedded == nil { continue }
            if case .relationship(let r) = property, let embedded {
                body(r.name, .embedded(embedded, many: r.isToMany))
            } else {
                body(property.name, property.wireValue(values[field]))
            }
        }
        guard !included.isEmpty else { return }
        for fetched in entity.fetchedProperties {
            if let objects = included[fetched.name] { body(fetched.name, .embedded(objects, many: true)) }
        }
    }

    /// The wire form as a `JSON` tree: `$id`, `$entity`, `$version`, then every property in
    /// field order (only `fields` when given); included relationships embed objects instead of
    /// IDs, and evaluated fetched properties follow as arrays of objects.
    public func json(in model: Model, fields: [Int]? = nil) -> JSON {
        var members = OrderedDictionary<String, JSON>(minimumCapacity: values.count + 3)
        wireMembers(fields: fields) { key, value in members[key] = value.json(in: model) }
        return .object(members)
    }

    /// Appends the wire form's compact text to `out` as UTF-8: the text of
    /// `json(in:fields:).serialized()`, written without building either.
    public func write(to out: inout [UInt8], in model: Model, fields: [Int]? = nil) {
        writeText(to: &out, in: model, fields: fields)
    }

    func writeText<Output: JSONTextOutput>(to out: inout Output, in model: Model, fields: [Int]?) {
        out.appendText("{")
        var first = true
        wireMembers(fields: fields) { key, value in
            out.appendText(first ? "\"" : ",\"")
            first = false
            out.appendText(key)
            out.appendText("\":")
            value.writeText(to: &out, in: model)
        }
        out.appendText("}")
    }
}

extension Property {
    /// A value of this property before it is rendered: an attribute's JSON, a to-one's target,
    /// a to-many's targets.
    func wireValue(_ value: Value) -> WireValue {
        switch self {
        case .attribute(let a):
            return .json(ValueCodec.encode(value, as: a.type))
        case .relationship(let r):
            switch value {
            case .object(let target): return .reference(target)
            case .objects(let targets): return .references(targets)
            default: return r.isToMany ? .references([]) : .reference(nil)
            }
        }
    }

    /// A value of this property in the wire form (spec/model.md): an attribute's JSON, a to-one
    /// as `"Entity/N"` or null, a to-many as an array of those.
    public func wire(_ value: Value, in model: Model) -> JSON {
        wireValue(value).json(in: model)
    }
}

extension ObjectID {
    /// `"Entity/N"` as a JSON string, the text of `text(in:)` quoted (an entity name needs no
    /// escaping).
    func writeText<Output: JSONTextOutput>(to out: inout Output, in model: Model) {
        out.appendText("\"")
        out.appendText(model[entity].name)
        out.appendText("/")
        out.appendInteger(number)
        out.appendText("\"")
    }
}
