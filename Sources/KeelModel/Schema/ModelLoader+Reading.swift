// Pass 1 of the loader: the shape of the file. Each object's keys are checked against the keys
// the spec defines (an unknown key is a problem: a misspelt `"optinal": false` must not be
// silently ignored), each value's kind, each name's pattern, each attribute value decoded with
// the value codec for the attribute's type. `null` is accepted for every key and means "not
// given" (the canonical form writes `null` for keys without a value).

import Collections

extension ModelLoader {
    static let entityNamePattern = "[A-Z][A-Za-z0-9_]*"
    static let propertyNamePattern = "[a-z][A-Za-z0-9_]*"

    static func readModel(_ json: JSON, _ problems: inout ProblemList) -> RawModel? {
        guard var top = KeyedReader(json, path: "", &problems) else { return nil }
        let name = top.string("name", required: true, &problems) ?? ""
        if name.isEmpty, top.has("name") { problems.add("name", "the model name must not be empty") }
        var version = 1
        if let v = top.int("version", &problems) {
            if v < 1 { problems.add("version", "the version must be a positive integer, found \(v)") } else { version = v }
        }
        var entities: [RawEntity] = []
        if let list = top.array("entities", required: true, &problems) {
            if list.isEmpty { problems.add("entities", "a model needs at least one entity") }
            if list.count > Int(UInt16.max) { problems.add("entities", "at most \(UInt16.max) entities") }
            for (i, item) in list.enumerated() {
                if let entity = readEntity(item, path: "entities[\(i)]", &problems) { entities.append(entity) }
            }
        }
        var configurations: [(name: String, entities: [(name: String, path: String)], path: String)]?
        if let object = top.object("configurations", &problems) {
            configurations = []
            if object.isEmpty { problems.add("configurations", "list at least one configuration, or leave the key out") }
            for (configName, value) in object {
                let path = "configurations.\(configName)"
                if !matches(configName, "[A-Za-z][A-Za-z0-9_]*") {
                    problems.add(path, "configuration names match [A-Za-z][A-Za-z0-9_]* (they name store files)")
                }
                guard case .array(let names) = value else {
                    problems.add(path, "expected an array of entity names, found \(value.kindName)")
                    continue
                }
                if names.isEmpty { problems.add(path, "a configuration must hold at least one entity") }
                var members: [(name: String, path: String)] = []
                for (j, n) in names.enumerated() {
                    guard case .string(let s) = n else {
                        problems.add("\(path)[\(j)]", "expected an entity name, found \(n.kindName)")
                        continue
                    }
                    members.append((s, "\(path)[\(j)]"))
                }
                configurations?.append((configName, members, path))
            }
        }
        top.finish(&problems)
        return RawModel(name: name, version: version, entities: entities, configurations: configurations)
    }

    static func readEntity(_ json: JSON, path: String, _ problems: inout ProblemList) -> RawEntity? {
        guard var r = KeyedReader(json, path: path, &problems) else { return nil }
        let givenName = r.string("name", required: true, &problems)
        let name = givenName ?? ""
        if let givenName, !matches(givenName, entityNamePattern) {
            problems.add("\(path).name", "\(quoted(givenName)) is not an entity name: upper camel case, \(entityNamePattern)")
        }
        var e = RawEntity(path: path, name: name)
        e.isAbstract = r.bool("abstract", &problems) ?? false
        e.parent = r.string("parent", &problems)
        for (i, item) in (r.array("attributes", &problems) ?? []).enumerated() {
            if let a = readAttribute(item, path: "\(path).attributes[\(i)]", entity: name, &problems) { e.attributes.append(a) }
        }
        for (i, item) in (r.array("relationships", &problems) ?? []).enumerated() {
            if let rel = readRelationship(item, path: "\(path).relationships[\(i)]", &problems) { e.relationships.append(rel) }
        }
        for (i, item) in (r.array("fetchedProperties", &problems) ?? []).enumerated() {
            if let f = readFetched(item, path: "\(path).fetchedProperties[\(i)]", &problems) { e.fetchedProperties.append(f) }
        }
        e.uniqueConstraints = readColumnLists(r.array("uniqueConstraints", &problems), path: "\(path).uniqueConstraints", &problems)
        e.indexes = readColumnLists(r.array("indexes", &problems), path: "\(path).indexes", &problems)
        e.userInfo = r.any("userInfo")
        r.finish(&problems)
        return givenName == nil ? nil : e
    }

    static func readColumnLists(_ lists: [JSON]?, path: String, _ problems: inout ProblemList) -> [RawColumns] {
        var out: [RawColumns] = []
        for (i, list) in (lists ?? []).enumerated() {
            let p = "\(path)[\(i)]"
            guard case .array(let items) = list else {
                problems.add(p, "expected an array of property names, found \(list.kindName)")
                continue
            }
            if items.isEmpty { problems.add(p, "name at least one property") }
            var names: [String] = []
            for (j, item) in items.enumerated() {
                guard case .string(let s) = item else {
                    problems.add("\(p)[\(j)]", "expected a property name, found \(item.kindName)")
                    continue
                }
                if names.contains(s) { problems.add("\(p)[\(j)]", "\(quoted(s)) is listed twice") }
                names.append(s)
            }
            out.append(RawColumns(path: p, names: names))
        }
        return out
    }

    static func readPropertyName(_ r: inout KeyedReader, _ problems: inout ProblemList) -> String? {
        guard let name = r.string("name", required: true, &problems) else { return nil }
        if !matches(name, propertyNamePattern) {
            problems.add("\(r.path).name", "\(quoted(name)) is not a property name: lower camel case, \(propertyNamePattern), never starting with $")
        }
        return name
    }

    static func readFetched(_ json: JSON, path: String, _ problems: inout ProblemList) -> RawFetchedProperty? {
        guard var r = KeyedReader(json, path: path, &problems) else { return nil }
        let name = readPropertyName(&r, &problems)
        let destination = r.string("destination", required: true, &problems)
        let predicate = r.string("predicate", required: true, &problems)
        if predicate?.allSatisfy(\.isWhitespace) == true { problems.add("\(path).predicate", "the predicate must not be empty") }
        var sort: [(descriptor: KeelSortDescriptor, path: String)] = []
        for (i, item) in (r.array("sort", &problems) ?? []).enumerated() {
            guard var s = KeyedReader(item, path: "\(path).sort[\(i)]", &problems) else { continue }
            let key = s.string("key", required: true, &problems)
            let ascending = s.bool("ascending", &problems) ?? true
            let caseInsensitive = s.bool("caseInsensitive", &problems) ?? false
            s.finish(&problems)
            if let key { sort.append((KeelSortDescriptor(key: key, ascending: ascending, caseInsensitive: caseInsensitive), s.path)) }
        }
        r.finish(&problems)
        guard let name, let destination, let predicate else { return nil }
        return RawFetchedProperty(path: path, name: name, destination: destination, predicate: predicate, sort: sort)
    }

    static func matches(_ text: String, _ pattern: String) -> Bool {
        // The two name patterns: a first-character class, then [A-Za-z0-9_]*.
        let utf8 = Array(text.utf8)
        guard let first = utf8.first else { return false }
        let upperFirst = pattern.hasPrefix("[A-Z]")
        let lowerFirst = pattern.hasPrefix("[a-z]")
        let isUpper = first &- UInt8(ascii: "A") < 26
        let isLower = first &- UInt8(ascii: "a") < 26
        guard upperFirst ? isUpper : lowerFirst ? isLower : (isUpper || isLower) else { return false }
        return utf8.dropFirst().allSatisfy {
            $0 &- UInt8(ascii: "A") < 26 || $0 &- UInt8(ascii: "a") < 26 || $0 &- UInt8(ascii: "0") < 10 || $0 == UInt8(ascii: "_")
        }
    }

    static func quoted(_ s: String) -> String { JSON.string(s).serialized() }
}

/// Reads one JSON object of the model file: typed getters that report a wrong kind at the key's
/// path, and `finish` to report every key nobody asked for.
struct KeyedReader {
    let path: String
    private let members: OrderedDictionary<String, JSON>
    private var used: Set<String> = []

    init?(_ json: JSON, path: String, _ problems: inout ProblemList) {
        guard case .object(let members) = json else {
            problems.add(path, "expected an object, found \(json.kindName)")
            return nil
        }
        self.path = path
        self.members = members
    }

    func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func has(_ key: String) -> Bool { members[key] != nil }

    /// The value under `key`, nil when absent or null (and a problem when required).
    private mutating func value(_ key: String, required: Bool, _ problems: inout ProblemList) -> JSON? {
        used.insert(key)
        guard let v = members[key], v != .null else {
            if required { problems.add(keyPath(key), "is required") }
            return nil
        }
        return v
    }

    mutating func any(_ key: String) -> JSON? {
        used.insert(key)
        guard let v = members[key], v != .null else { return nil }
        return v
    }

    mutating func string(_ key: String, required: Bool = false, _ problems: inout ProblemList) -> String? {
        guard let v = value(key, required: required, &problems) else { return nil }
        guard case .string(let s) = v else {
            problems.add(keyPath(key), "expected a string, found \(v.kindName)")
            return nil
        }
        return s
    }

    mutating func bool(_ key: String, _ problems: inout ProblemList) -> Bool? {
        guard let v = value(key, required: false, &problems) else { return nil }
        guard case .bool(let b) = v else {
            problems.add(keyPath(key), "expected true or false, found \(v.kindName)")
            return nil
        }
        return b
    }

    mutating func int(_ key: String, _ problems: inout ProblemList) -> Int? {
        guard let v = value(key, required: false, &problems) else { return nil }
        guard case .int(let i) = v, let n = Int(exactly: i) else {
            problems.add(keyPath(key), "expected an integer, found \(v.kindName) \(ValueCodec.describe(v))")
            return nil
        }
        return n
    }

    mutating func array(_ key: String, required: Bool = false, _ problems: inout ProblemList) -> [JSON]? {
        guard let v = value(key, required: required, &problems) else { return nil }
        guard case .array(let a) = v else {
            problems.add(keyPath(key), "expected an array, found \(v.kindName)")
            return nil
        }
        return a
    }

    mutating func object(_ key: String, _ problems: inout ProblemList) -> OrderedDictionary<String, JSON>? {
        guard let v = value(key, required: false, &problems) else { return nil }
        guard case .object(let o) = v else {
            problems.add(keyPath(key), "expected an object, found \(v.kindName)")
            return nil
        }
        return o
    }

    /// Reports every key that was never read.
    func finish(_ problems: inout ProblemList) {
        for key in members.keys where !used.contains(key) {
            let known = used.sorted().joined(separator: ", ")
            problems.add(keyPath(key), "unknown key (known here: \(known))")
        }
    }
}
