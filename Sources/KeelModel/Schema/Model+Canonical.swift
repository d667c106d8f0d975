// The canonical form of a model: the model file's meaning as one JSON value with every key
// written out (defaults included, `null` for "none"), keys in a fixed order, entities and
// properties in file order, configurations listing their entities in entity order, values in the
// value codec's canonical encoding ("5200.00" → "5200", dates with milliseconds, uuids lowercase),
// one-column `indexes` over an own attribute folded into `"indexed": true`, and `userInfo`
// objects with their keys sorted. It loads back to the same model.
//
// `Model.hash` is the lowercase hex SHA-256 of the compact serialization of this form, so key
// order, whitespace, number spelling and writing a default explicitly never change it, and every
// change of meaning does (including order of entities and properties: they decide entity ids and
// field numbers). This is what the store keeps to recognise its model.
//
// Key order:
//   model:        name, version, entities, configurations
//   entity:       name, abstract, parent, attributes, relationships, fetchedProperties,
//                 uniqueConstraints, indexes, userInfo
//   attribute:    name, type, optional, defaultValue, transient, indexed, minValue, maxValue,
//                 regex, renamingIdentifier
//   relationship: name, destination, toMany, ordered, inverse, deleteRule, optional, minCount,
//                 maxCount, renamingIdentifier
//   fetched:      name, destination, predicate, sort [{key, ascending, caseInsensitive}]

import Collections

extension Model {
    /// The canonical JSON of a resolved model (see the file comment).
    static func canonicalForm(
        name: String, version: Int, entities: [Entity], configurations: OrderedDictionary<String, [EntityID]>
    ) -> JSON {
        func text(_ s: String?) -> JSON { s.map(JSON.string) ?? .null }
        var list: [JSON] = []
        for e in entities {
            var attributes: [JSON] = []
            var relationships: [JSON] = []
            var ownIndexed: Set<String> = []
            for p in e.properties where p.declaredIn == e.id {
                switch p {
                case .attribute(let a):
                    if a.isIndexed { ownIndexed.insert(a.name) }
                    attributes.append(canonical(a))
                case .relationship(let r):
                    relationships.append(
                        .object([
                            "name": .string(r.name), "destination": .string(entities[r.destination.index].name),
                            "toMany": .bool(r.isToMany), "ordered": .bool(r.isOrdered), "inverse": text(r.inverse),
                            "deleteRule": .string(r.deleteRule.rawValue), "optional": .bool(r.isOptional),
                            "minCount": .int(Int64(r.minCount)), "maxCount": .int(Int64(r.maxCount)),
                            "renamingIdentifier": text(r.renamingIdentifier),
                        ]))
                }
            }
            let fetched: [JSON] = e.fetchedProperties.filter { $0.declaredIn == e.id }.map { f in
                .object([
                    "name": .string(f.name), "destination": .string(entities[f.destination.index].name),
                    "predicate": .string(f.predicate),
                    "sort": .array(
                        f.sort.map {
                            .object(["key": .string($0.key), "ascending": .bool($0.ascending), "caseInsensitive": .bool($0.caseInsensitive)])
                        }),
                ])
            }
            func lists(_ indexes: [Index]) -> JSON {
                .array(indexes.filter { $0.declaredIn == e.id }.map { .array($0.propertyNames.map(JSON.string)) })
            }
            let indexes = e.indexes.filter { !($0.propertyNames.count == 1 && ownIndexed.contains($0.propertyNames[0])) }
            list.append(
                .object([
                    "name": .string(e.name), "abstract": .bool(e.isAbstract),
                    "parent": e.parent.map { .string(entities[$0.index].name) } ?? .null,
                    "attributes": .array(attributes), "relationships": .array(relationships),
                    "fetchedProperties": .array(fetched), "uniqueConstraints": lists(e.uniqueConstraints),
                    "indexes": lists(indexes), "userInfo": e.userInfo.map(sortedKeys) ?? .null,
                ]))
        }
        var configs = OrderedDictionary<String, JSON>()
        for (config, members) in configurations {
            configs[config] = .array(members.sorted().map { .string(entities[$0.index].name) })
        }
        return .object([
            "name": .string(name), "version": .int(Int64(version)), "entities": .array(list), "configurations": .object(configs),
        ])
    }

    private static func canonical(_ a: Attribute) -> JSON {
        func value(_ v: Value?) -> JSON { v.map { ValueCodec.encode($0, as: a.type) } ?? .null }
        func bound(_ v: Value?) -> JSON {
            // Lengths for strings and binary are plain integers.
            if a.type == .string || a.type == .binary { return v.map { ValueCodec.encode($0) } ?? .null }
            return value(v)
        }
        return .object([
            "name": .string(a.name), "type": .string(a.type.rawValue), "optional": .bool(a.isOptional),
            "defaultValue": value(a.defaultValue), "transient": .bool(a.isTransient), "indexed": .bool(a.isIndexed),
            "minValue": bound(a.minValue), "maxValue": bound(a.maxValue), "regex": a.regex.map(JSON.string) ?? .null,
            "renamingIdentifier": a.renamingIdentifier.map(JSON.string) ?? .null,
        ])
    }

    /// `json` with every object's keys sorted (by UTF-8 bytes), recursively.
    static func sortedKeys(_ json: JSON) -> JSON {
        switch json {
        case .array(let items): return .array(items.map(sortedKeys))
        case .object(let members):
            var sorted = OrderedDictionary<String, JSON>()
            for key in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                sorted[key] = members[key].map(sortedKeys)
            }
            return .object(sorted)
        default: return json
        }
    }
}
