// Request JSON to the object store's shapes, for the commands that go to the store directly
// (BATCH.*, BatchCommands.swift): `{"name": wire value}` → field → Value, by the wire encoding of
// spec/model.md (ValueCodec); relationships as `Entity/N` IDs (to-one: an ID or null; to-many: an
// array).

public import Collections
public import KeelModel

public enum WireValues {
    /// The entity a request's `entity` names, or NO_SUCH_ENTITY.
    public static func entity(_ arguments: OrderedDictionary<String, JSON>, in model: Model) throws(KeelError) -> Entity {
        let name = arguments["entity"]?.stringValue ?? ""
        guard let entity = model.entity(named: name) else {
            throw KeelError(.noSuchEntity, "no entity \(name) in model \(model.name)")
        }
        return entity
    }

    /// Decodes one object's values for `entity`. Transient attributes are dropped (they are
    /// never stored).
    public static func decode(_ json: JSON, for entity: Entity, in model: Model) throws(KeelError) -> [Int: Value] {
        guard let members = json.objectValue else {
            throw KeelError(.badRequest, "values must be a JSON object, not \(json.kindName)")
        }
        var out: [Int: Value] = [:]
        for (name, item) in members {
            guard let field = entity.field(named: name) else {
                throw KeelError(.noSuchProperty, "\(entity.name) has no property \"\(name)\"")
            }
            switch entity.properties[field] {
            case .attribute(let attribute):
                let value = try attribute.decode(item, entity: entity.name)
                if !attribute.isTransient { out[field] = value }
            case .relationship(let relationship):
                out[field] = try relationshipValue(item, relationship, of: entity, in: model)
            }
        }
        return out
    }

    private static func relationshipValue(
        _ json: JSON, _ relationship: Relationship, of entity: Entity, in model: Model
    ) throws(KeelError) -> Value {
        let owner = "\(entity.name).\(relationship.name)"
        func id(_ item: JSON) throws(KeelError) -> ObjectID {
            guard let text = item.stringValue else {
                throw KeelError(.type, "\(owner) takes object IDs like \"\(model[relationship.destination].name)/1\", not \(item.kindName)")
            }
            guard let id = model.objectID(text) else {
                throw KeelError(.type, "\(owner): \"\(text)\" is not an object ID of this model (Entity/N)")
            }
            guard model[relationship.destination].includes(id.entity) else {
                throw KeelError(.type, "\(owner) takes \(model[relationship.destination].name) objects, not \(text)")
            }
            return id
        }
        if relationship.isToMany {
            if json.isNull { return .objects([]) }
            guard let items = json.arrayValue else {
                throw KeelError(.type, "\(owner) takes an array of object IDs, not \(json.kindName)")
            }
            var ids: [ObjectID] = []
            for item in items { ids.append(try id(item)) }
            return .objects(ids)
        }
        if json.isNull { return .null }
        return .object(try id(json))
    }
}
