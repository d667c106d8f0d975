// Whether a model change is a lightweight migration (spec/model.md, "Versions and migration";
// `keelctl model diff`). Lightweight, as the spec lists it: an entity, attribute or relationship
// added or removed; a rename declared with `renamingIdentifier`; an optional attribute made
// non-optional with a `defaultValue`; an index or unique constraint added or removed. Keel adds
// the changes that store nothing and rewrite nothing — the model's name and version, an
// attribute or relationship rule (optional relaxed, default, bounds, regex, delete rule, counts),
// fetched properties, userInfo — since no stored byte depends on them. Anything else (a type,
// the destination, cardinality, order or inverse of a relationship, an entity's parent or
// abstractness or configuration, transience, an attribute added as non-optional without a
// default) is not lightweight, and each such change is named.
//
// This compares the models' meaning (their canonical forms); it says nothing about a store.

public struct ModelMigration: Sendable {
    /// Every difference, each with whether it is lightweight, in the order of
    /// `Model.differences(from:)` (model, entities, then entity by entity).
    public var changes: [(description: String, isLightweight: Bool)]

    /// True when there are changes and all of them are lightweight.
    public var isLightweight: Bool { !changes.isEmpty && changes.allSatisfy(\.isLightweight) }
    public var isEmpty: Bool { changes.isEmpty }
}

extension Model {
    /// How this model ("new") differs from `old`, change by change (see the top of this file).
    public func migration(from old: Model) -> ModelMigration {
        var out: [(String, Bool)] = []
        func change(_ text: String, _ lightweight: Bool) { out.append((text, lightweight)) }
        if name != old.name { change("the model's name changes from \(old.name) to \(name)", true) }
        if version != old.version { change("the version changes from \(old.version) to \(version)", true) }
        let newEntities = Model.canonicalEntities(canonical)
        let oldEntities = Model.canonicalEntities(old.canonical)
        for e in old.entities where entity(named: e.name) == nil { change("\(e.name) is removed", true) }
        for e in entities where old.entity(named: e.name) == nil { change("\(e.name) is added", true) }
        for e in entities {
            guard let o = old.entity(named: e.name), let here = newEntities[e.name], let there = oldEntities[e.name] else { continue }
            if here["abstract"] != there["abstract"] {
                change("\(e.name) becomes \(e.isAbstract ? "abstract" : "concrete")", false)
            }
            if here["parent"] != there["parent"] {
                change("\(e.name)'s parent changes from \(there["parent"]?.stringValue ?? "none") to \(here["parent"]?.stringValue ?? "none")", false)
            }
            if e.configuration != o.configuration {
                change("\(e.name) moves from configuration \(o.configuration) to \(e.configuration)", false)
            }
            for key in ["uniqueConstraints", "indexes"] {
                let was = Set(there[key]?.arrayValue ?? []), now = Set(here[key]?.arrayValue ?? [])
                let what = key == "indexes" ? "an index" : "a unique constraint"
                for list in now.subtracting(was) { change("\(e.name) gets \(what) on \(names(list))", true) }
                for list in was.subtracting(now) { change("\(e.name) loses \(what) on \(names(list))", true) }
            }
            if here["userInfo"] != there["userInfo"] { change("\(e.name)'s userInfo changes", true) }
            if here["fetchedProperties"] != there["fetchedProperties"] { change("\(e.name)'s fetched properties change", true) }
            compareProperties(e.name, "attributes", here, there, change)
            compareProperties(e.name, "relationships", here, there, change)
        }
        return ModelMigration(changes: out)
    }

    private func names(_ list: JSON) -> String {
        "(" + (list.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ") + ")"
    }

    /// An entity's own attributes or relationships, matched by name or by a new property's
    /// `renamingIdentifier`.
    private func compareProperties(
        _ entity: String, _ key: String, _ here: JSON, _ there: JSON, _ change: (String, Bool) -> Void
    ) {
        let isAttribute = key == "attributes"
        let kind = isAttribute ? "attribute" : "relationship"
        let now = here[key]?.arrayValue ?? []
        let was = there[key]?.arrayValue ?? []
        var wasByName: [String: JSON] = [:]
        for p in was { if let n = p["name"]?.stringValue { wasByName[n] = p } }
        var matched: Set<String> = []
        for p in now {
            guard let name = p["name"]?.stringValue else { continue }
            let renamed = p["renamingIdentifier"]?.stringValue
            let old: JSON?
            if let same = wasByName[name] {
                old = same
                matched.insert(name)
            } else if let renamed, let previous = wasByName[renamed] {
                old = previous
                matched.insert(renamed)
                change("\(entity).\(renamed) is renamed \(name) (renamingIdentifier)", true)
            } else {
                old = nil
            }
            guard let old else {
                let required = isAttribute && p["optional"] == false && (p["defaultValue"] ?? .null).isNull
                    && p["transient"] != true
                change(
                    "\(entity).\(name) is \(required ? "added as non-optional without a defaultValue: stored objects would have no value" : "added (\(kind))")",
                    !required)
                continue
            }
            for field in (p.objectValue ?? [:]).keys where field != "name" && field != "renamingIdentifier" {
                let a = old[field] ?? .null, b = p[field] ?? .null
                guard a != b else { continue }
                change(
                    "\(entity).\(name): \(field) changes from \(a.serialized()) to \(b.serialized())",
                    Self.isLightweight(field, from: a, to: b, defaultValue: p["defaultValue"] ?? .null, isAttribute: isAttribute))
            }
        }
        for p in was {
            guard let name = p["name"]?.stringValue, !matched.contains(name) else { continue }
            change("\(entity).\(name) is removed (\(kind))", true)
        }
    }

    /// Whether changing one key of a property from `a` to `b` rewrites nothing stored.
    private static func isLightweight(_ field: String, from a: JSON, to b: JSON, defaultValue: JSON, isAttribute: Bool) -> Bool {
        switch field {
        case "optional" where isAttribute:
            // Relaxed, or made required with a default for the objects that have no value.
            return b == true || !defaultValue.isNull
        case "indexed", "defaultValue", "minValue", "maxValue", "regex", "deleteRule", "optional", "minCount", "maxCount":
            return true
        default:
            // type, transient, destination, toMany, ordered, inverse
            return false
        }
    }
}
