// Pass 3 of the loader: the resolved `Entity` values, for a model that passed every check.
//
// Field numbering (a property's position in `Entity.properties` is its field number, which rows
// and index keys carry):
//   fields of E = fields of E's parent (all of them, in the parent's order)
//               + E's own attributes (in file order)
//               + E's own relationships (in file order).
// So a property has the same field number in the entity that declares it and in every entity
// below it; sibling entities reuse numbers after their common prefix (rows carry their concrete
// entity, so that is unambiguous). Fetched properties are not fields (they are not stored).
//
// Indexes: an entity's `indexes` are its parent's, then one per own attribute marked indexed (file
// order), then its own `indexes` lists (file order). A one-column list over an own attribute is
// the same thing as `"indexed": true` and becomes it (the attribute reads `isIndexed == true`), so
// both spellings load to the same model and hash. Unique constraints: the parent's, then its own.
// `Index.name` is `<DeclaringEntity>.<p1>,<p2>`: stable across loads and the same in every entity
// of the family.

import Collections

extension ModelLoader {
    static func build(_ raw: RawModel, _ resolution: Resolution, warnings: [String]) -> Model {
        let entities = raw.entities
        let idOf = Dictionary(uniqueKeysWithValues: entities.enumerated().map { ($1.name, EntityID($0)) })
        var built = [Entity?](repeating: nil, count: entities.count)

        func root(_ i: Int) -> Int {
            var c = i
            while let p = resolution.parent[c] { c = p }
            return c
        }
        func family(_ i: Int) -> [EntityID] {
            [EntityID(i)] + entities.indices.filter { j in
                var cursor = resolution.parent[j]
                while let c = cursor {
                    if c == i { return true }
                    cursor = resolution.parent[c]
                }
                return false
            }.map { EntityID($0) }
        }

        func make(_ i: Int) -> Entity {
            if let done = built[i] { return done }
            let e = entities[i]
            let id = EntityID(i)
            let inherited = resolution.parent[i].map(make)
            var properties = inherited?.properties ?? []
            var indexes = inherited?.indexes ?? []
            var uniques = inherited?.uniqueConstraints ?? []
            let singleIndexed = Set(e.indexes.filter { $0.names.count == 1 }.map { $0.names[0] })
            var indexedAttributes: [String] = []
            for a in e.attributes {
                let indexed = a.isIndexed || singleIndexed.contains(a.name)
                if indexed { indexedAttributes.append(a.name) }
                properties.append(
                    .attribute(
                        Attribute(
                            name: a.name, type: a.type, isOptional: a.isOptional, defaultValue: a.defaultValue,
                            isTransient: a.isTransient, isIndexed: indexed, minValue: a.minValue, maxValue: a.maxValue,
                            regex: a.regex, renamingIdentifier: a.renamingIdentifier, declaredIn: id)))
            }
            for r in e.relationships {
                properties.append(
                    .relationship(
                        Relationship(
                            name: r.name, destination: idOf[r.destination] ?? id, isToMany: r.isToMany,
                            isOrdered: r.isOrdered, inverse: r.inverse, deleteRule: r.deleteRule, isOptional: r.isOptional,
                            minCount: r.minCount, maxCount: r.maxCount, renamingIdentifier: r.renamingIdentifier,
                            declaredIn: id)))
            }
            let field = Dictionary(uniqueKeysWithValues: properties.enumerated().map { ($1.name, $0) })
            func index(_ names: [String], unique: Bool) -> Index {
                Index(
                    name: "\(e.name).\(names.joined(separator: ","))", fields: names.compactMap { field[$0] },
                    propertyNames: names, isUnique: unique, declaredIn: id)
            }
            for name in indexedAttributes { indexes.append(index([name], unique: false)) }
            for list in e.indexes where !(list.names.count == 1 && indexedAttributes.contains(list.names[0])) {
                indexes.append(index(list.names, unique: false))
            }
            for list in e.uniqueConstraints { uniques.append(index(list.names, unique: true)) }
            let fetched =
                (inherited?.fetchedProperties ?? [])
                + e.fetchedProperties.map {
                    FetchedProperty(
                        name: $0.name, destination: idOf[$0.destination] ?? id, predicate: $0.predicate,
                        sort: $0.sort.map(\.descriptor), declaredIn: id)
                }
            let entity = Entity(
                id: id, name: e.name, isAbstract: e.isAbstract, parent: resolution.parent[i].map { EntityID($0) },
                root: EntityID(root(i)), family: family(i), properties: properties, fetchedProperties: fetched,
                uniqueConstraints: uniques, indexes: indexes, configuration: resolution.configuration[i],
                userInfo: e.userInfo)
            built[i] = entity
            return entity
        }

        let all = entities.indices.map(make)
        var configurations = OrderedDictionary<String, [EntityID]>()
        for (name, members) in resolution.configurations { configurations[name] = members.map { EntityID($0) } }
        let canonical = Model.canonicalForm(name: raw.name, version: raw.version, entities: all, configurations: configurations)
        return Model(
            name: raw.name, version: raw.version, entities: all, configurations: configurations,
            hash: SHA256.hex(of: canonical.serialized().utf8), canonical: canonical, warnings: warnings)
    }
}
