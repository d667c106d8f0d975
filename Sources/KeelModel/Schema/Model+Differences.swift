// What differs between two models, in sentences a person can act on. The store calls
// `current.differences(from: stored)` when a folder was created with another model hash; "there"
// is the other (stored) model, "here" this one:
//   "Employee.salary is decimal there, double here"
//   "Feedback is an entity there, not here"
//   "Book is entity #3 there, #2 here (entity numbers are part of every stored key)"
// Order: the model's name and version, entities gone and new, entity numbers, then entity by
// entity (this model's order) its own keys, its properties (gone, new, changed, field numbers),
// and finally configurations. Built on the canonical forms, so it reports exactly the changes of
// meaning that change the hash: two models with the same hash have no differences.

extension Model {
    /// Sentences naming each difference from `other` ("there") to this model ("here"), first
    /// differences first; empty when the models mean the same.
    public func differences(from other: Model) -> [String] {
        if hash == other.hash { return [] }
        var out: [String] = []
        func show(_ j: JSON?) -> String { j.map { $0.serialized() } ?? "absent" }
        if name != other.name { out.append("the model is named \(show(.string(other.name))) there, \(show(.string(name))) here") }
        if version != other.version { out.append("the model is version \(other.version) there, \(version) here") }

        for e in other.entities where entity(named: e.name) == nil { out.append("\(e.name) is an entity there, not here") }
        for e in entities where other.entity(named: e.name) == nil { out.append("\(e.name) is an entity here, not there") }
        for e in entities {
            if let o = other.entity(named: e.name), o.id != e.id {
                out.append("\(e.name) is entity #\(o.id.rawValue) there, #\(e.id.rawValue) here (entity numbers are part of every stored key)")
            }
        }

        let mine = Model.canonicalEntities(canonical)
        let theirs = Model.canonicalEntities(other.canonical)
        for e in entities {
            guard let o = other.entity(named: e.name), let here = mine[e.name], let there = theirs[e.name] else { continue }
            for key in ["abstract", "parent", "uniqueConstraints", "indexes", "userInfo"] where here[key] != there[key] {
                out.append("\(e.name): \(key) is \(show(there[key])) there, \(show(here[key])) here")
            }
            let hereProps = Model.canonicalProperties(here)
            let thereProps = Model.canonicalProperties(there)
            for (name, p) in thereProps where hereProps[name] == nil {
                out.append("\(e.name).\(name) is \(p.kind) there, not here")
            }
            for (name, p) in hereProps where thereProps[name] == nil {
                out.append("\(e.name).\(name) is \(p.kind) here, not there")
            }
            for (name, p) in hereProps {
                guard let q = thereProps[name] else { continue }
                if p.kind != q.kind {
                    out.append("\(e.name).\(name) is \(q.kind) there, \(p.kind) here")
                    continue
                }
                if let t = q.json["type"], let h = p.json["type"], t != h {
                    out.append("\(e.name).\(name) is \(t.stringValue ?? show(t)) there, \(h.stringValue ?? show(h)) here")
                }
                for (key, value) in p.json.objectValue ?? [:] where key != "name" && key != "type" && q.json[key] != value {
                    out.append("\(e.name).\(name): \(key) is \(show(q.json[key])) there, \(show(value)) here")
                }
            }
            for (field, p) in e.properties.enumerated() {
                if let f = o.field(named: p.name), f != field {
                    out.append("\(e.name).\(p.name) is field \(f) there, \(field) here")
                }
            }
        }

        for e in entities {
            if let o = other.entity(named: e.name), o.configuration != e.configuration {
                out.append("\(e.name) is in configuration \(o.configuration) there, \(e.configuration) here")
            }
        }
        let hereConfigs = Array(configurations.keys), thereConfigs = Array(other.configurations.keys)
        if hereConfigs != thereConfigs {
            out.append(
                "the configurations are \(thereConfigs.joined(separator: ", ")) there, \(hereConfigs.joined(separator: ", ")) here")
        }
        if out.isEmpty { out.append("the canonical forms differ") }
        return out
    }

    static func canonicalEntities(_ canonical: JSON) -> [String: JSON] {
        var out: [String: JSON] = [:]
        for e in canonical["entities"]?.arrayValue ?? [] {
            if let name = e["name"]?.stringValue { out[name] = e }
        }
        return out
    }

    /// Own properties of a canonical entity, in order, with their kind.
    private static func canonicalProperties(_ entity: JSON) -> KeyValuePairsList {
        var out = KeyValuePairsList()
        for (key, kind) in [("attributes", "an attribute"), ("relationships", "a relationship"), ("fetchedProperties", "a fetched property")] {
            for p in entity[key]?.arrayValue ?? [] {
                if let name = p["name"]?.stringValue { out.append(name, (kind, p)) }
            }
        }
        return out
    }
}

/// An ordered name → (kind, canonical JSON) list with lookup, so sentences come in file order.
private struct KeyValuePairsList: Sequence {
    private var items: [(String, (kind: String, json: JSON))] = []
    private var byName: [String: Int] = [:]

    mutating func append(_ name: String, _ value: (kind: String, json: JSON)) {
        byName[name] = items.count
        items.append((name, value))
    }

    subscript(name: String) -> (kind: String, json: JSON)? { byName[name].map { items[$0].1 } }

    func makeIterator() -> some IteratorProtocol<(String, (kind: String, json: JSON))> { items.makeIterator() }
}
