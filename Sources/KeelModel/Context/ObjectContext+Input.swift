// Decoding and checking the values of INSERT and UPDATE before anything changes, so that a bad
// value (unknown property, wrong type, out of range, malformed, a relationship to the wrong
// entity or to a missing object) fails the command with its specific error and no effect.

import Foundation

extension ObjectContext {
    /// Decodes a JSON object of wire values (spec/model.md) for `entity`.
    func inputs(_ values: JSON, for entity: Entity, state: ContextOverlay) throws(KeelError) -> [PropertyInput] {
        guard case .object(let members) = values else {
            throw KeelError(.badRequest, "values must be a JSON object, not \(values.kindName)")
        }
        var out: [PropertyInput] = []
        out.reserveCapacity(members.count)
        for (name, json) in members {
            let (field, property) = try property(name, of: entity)
            switch property {
            case .attribute(let a):
                let value = try ValueCodec.decode(json, as: a.type, owner: "\(entity.name).\(a.name)")
                out.append(a.isTransient ? .transient(field: field, value) : .attribute(field: field, value))
            case .relationship(let r):
                out.append(try relationshipInput(r, field: field, of: entity, json: json, state: state))
            }
        }
        return out
    }

    /// Checks typed values for `entity`: attributes must fit their type, relationships are
    /// `.object`/`.null` (to-one) or `.objects` (to-many).
    func inputs(_ values: [String: Value], for entity: Entity, state: ContextOverlay) throws(KeelError) -> [PropertyInput] {
        var out: [PropertyInput] = []
        out.reserveCapacity(values.count)
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            let (field, property) = try property(name, of: entity)
            switch property {
            case .attribute(let a):
                let checked = try ValueFit.check(value, for: a, entity: entity)
                out.append(a.isTransient ? .transient(field: field, checked) : .attribute(field: field, checked))
            case .relationship(let r):
                let targets: [ObjectID?]
                switch value {
                case .null where !r.isToMany: targets = [nil]
                case .object(let id) where !r.isToMany: targets = [id]
                case .objects(let ids) where r.isToMany: targets = ids
                default:
                    throw KeelError(
                        .type,
                        "\(entity.name).\(r.name) takes \(r.isToMany ? "a list of object IDs" : "an object ID or null")")
                }
                for case let target? in targets { try checkTarget(target, of: r, in: entity, state: state) }
                out.append(r.isToMany ? .toMany(field: field, targets.compactMap { $0 }) : .toOne(field: field, targets[0]))
            }
        }
        return out
    }

    func property(_ name: String, of entity: Entity) throws(KeelError) -> (Int, Property) {
        guard let field = entity.field(named: name) else {
            throw KeelError(.noSuchProperty, "\(entity.name) has no property \"\(name)\"")
        }
        return (field, entity.properties[field])
    }

    func entity(named name: String) throws(KeelError) -> Entity {
        guard let entity = model.entity(named: name) else {
            throw KeelError(.noSuchEntity, "the model has no entity \"\(name)\"")
        }
        return entity
    }

    /// Parses `Entity/N`.
    func objectID(_ text: String, for what: String) throws(KeelError) -> ObjectID {
        guard let id = model.objectID(text) else {
            throw KeelError(.type, "\(what) takes object IDs like \"Department/2\", not \"\(text)\"")
        }
        return id
    }

    private func relationshipInput(
        _ r: Relationship, field: Int, of entity: Entity, json: JSON, state: ContextOverlay
    ) throws(KeelError) -> PropertyInput {
        let what = "\(entity.name).\(r.name)"
        if r.isToMany {
            guard case .array(let items) = json else {
                throw KeelError(.type, "\(what) is to-many: it takes an array of object IDs, not \(json.kindName)")
            }
            var ids: [ObjectID] = []
            ids.reserveCapacity(items.count)
            for item in items {
                guard case .string(let text) = item else {
                    throw KeelError(.type, "\(what) takes object IDs like \"Department/2\", not \(item.kindName)")
                }
                let id = try objectID(text, for: what)
                try checkTarget(id, of: r, in: entity, state: state)
                ids.append(id)
            }
            return .toMany(field: field, ids)
        }
        switch json {
        case .null: return .toOne(field: field, nil)
        case .string(let text):
            let id = try objectID(text, for: what)
            try checkTarget(id, of: r, in: entity, state: state)
            return .toOne(field: field, id)
        default:
            throw KeelError(.type, "\(what) is to-one: it takes an object ID or null, not \(json.kindName)")
        }
    }

    func checkTarget(_ id: ObjectID, of r: Relationship, in entity: Entity, state: ContextOverlay) throws(KeelError) {
        guard model[r.destination].includes(id.entity) else {
            throw KeelError(
                .type, "\(entity.name).\(r.name) takes \(model[r.destination].name) objects, not \(id.text(in: model))")
        }
        guard try state.exists(id) else {
            throw KeelError(.notFound, "no object \(id.text(in: model)) (it does not exist or is deleted)")
        }
    }
}

/// Checks a typed value against an attribute (the embedded API's counterpart of the wire decoding).
enum ValueFit {
    static func check(_ value: Value, for a: Attribute, entity: Entity) throws(KeelError) -> Value {
        func refuse(_ why: String) -> KeelError {
            KeelError(.type, "\(entity.name).\(a.name) (\(a.type.rawValue)): \(why)")
        }
        switch (a.type, value) {
        case (_, .null): return .null
        case (.int16, .int(let i)) where Int16(exactly: i) == nil: throw refuse("\(i) is out of range (-32768…32767)")
        case (.int32, .int(let i)) where Int32(exactly: i) == nil:
            throw refuse("\(i) is out of range (-2147483648…2147483647)")
        case (.int16, .int), (.int32, .int), (.int64, .int): return value
        case (.float, .double(let d)) where d.isFinite && abs(d) > Double(Float.greatestFiniteMagnitude):
            throw refuse("\(d) is out of range for a float")
        case (.double, .double), (.float, .double): return value
        case (.double, .int(let i)), (.float, .int(let i)): return .double(Double(i))
        case (.decimal, .decimal): return value
        case (.decimal, .int(let i)): return .decimal(Decimal(i))
        case (.string, .string), (.bool, .bool), (.date, .date), (.binary, .binary), (.uuid, .uuid), (.uri, .uri),
            (.json, .json):
            return value
        case (.uri, .string(let s)): return .uri(s)
        default: throw refuse("a \(kind(value)) value does not fit")
        }
    }

    static func kind(_ value: Value) -> String {
        switch value {
        case .null: "null"
        case .int: "int"
        case .double: "double"
        case .decimal: "decimal"
        case .string: "string"
        case .bool: "bool"
        case .date: "date"
        case .binary: "binary"
        case .uuid: "uuid"
        case .uri: "uri"
        case .json: "json"
        case .object: "object ID"
        case .objects: "object ID list"
        }
    }
}
