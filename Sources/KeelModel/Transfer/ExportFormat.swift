// What `keelctl export` writes, one JSON object per line, and `keelctl import` reads back
// (Docs/Operations.md, "Import and export"): the object as FETCH returns it (ManagedObject.json:
// `$id`, `$entity`, then every property in field order, relationships as `Entity/N` IDs), less
// `$version` and transient attributes, which an import does not take:
//
//   {"$id":"Employee/3","$entity":"Employee","name":"Kim","age":41,…,"department":"Department/1","computers":[]}
//
// `$id` is the key an import finds the object by, so relationships between exported objects come
// back as they were; the objects get new IDs.

public enum ExportFormat {
    /// The export line of an object, from its wire form (a FETCH row, or `ManagedObject.json`).
    public static func line(_ row: JSON, model: Model) -> JSON {
        guard case .object(var members) = row else { return row }
        members.removeValue(forKey: "$version")
        if let name = members["$entity"]?.stringValue, let entity = model.entity(named: name) {
            for (_, a) in entity.attributes where a.isTransient { members.removeValue(forKey: a.name) }
            for f in entity.fetchedProperties { members.removeValue(forKey: f.name) }
        }
        return .object(members)
    }

    /// The concrete entities an export of `entity` (every entity when nil) covers, in model order.
    public static func entities(_ entity: String?, in model: Model) throws(KeelError) -> [Entity] {
        guard let entity else { return model.entities.filter { !$0.isAbstract } }
        guard let e = model.entity(named: entity) else { throw KeelError(.noSuchEntity, "the model has no entity \"\(entity)\"") }
        return model.entities.filter { !$0.isAbstract && e.includes($0.id) }
    }
}
