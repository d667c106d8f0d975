// Pass 2 of the loader: the rules that relate entities to each other (spec/model.md):
// unique entity names; parents that exist, without cycles; property names unique along the
// inheritance chain; relationship destinations and mutual inverses; fetched-property
// destinations and sort keys; index and unique-constraint columns; configurations (every entity in
// exactly one, a hierarchy in one, no relationship across two). Works on what pass 1 could read;
// what it could not read was already reported and is skipped here.

extension ModelLoader {
    /// What pass 2 resolved, for pass 3.
    struct Resolution {
        /// Index in `raw.entities` of each entity's parent (nil: none, or part of a cycle).
        var parent: [Int?]
        /// Configuration name of each entity.
        var configuration: [String]
        /// Configurations in declaration order with their entities' indexes.
        var configurations: [(name: String, members: [Int])]
    }

    /// A property as seen from an entity (own or inherited).
    enum Seen {
        case attribute(RawAttribute)
        case relationship(RawRelationship, declaredIn: Int)
        case fetched(RawFetchedProperty)
    }

    static func check(_ raw: RawModel, _ problems: inout ProblemList) -> Resolution {
        let entities = raw.entities
        var index: [String: Int] = [:]
        for (i, e) in entities.enumerated() {
            if let first = index[e.name] {
                problems.add("\(e.path).name", "\(quoted(e.name)) is already the name of \(entities[first].path)")
            } else {
                index[e.name] = i
            }
        }

        // Parents, then cycles.
        var parent = [Int?](repeating: nil, count: entities.count)
        for (i, e) in entities.enumerated() {
            guard let p = e.parent else { continue }
            if p == e.name {
                problems.add("\(e.path).parent", "an entity cannot be its own parent")
            } else if let j = index[p] {
                parent[i] = j
            } else {
                problems.add("\(e.path).parent", "\(quoted(p)) is not an entity of the model")
            }
        }
        for i in entities.indices {
            var chain = [i]
            var cursor = parent[i]
            while let c = cursor, chain.count <= entities.count {
                chain.append(c)
                if c == i {
                    let names = chain.map { entities[$0].name }.joined(separator: " → ")
                    problems.add("\(entities[i].path).parent", "the parents form a cycle: \(names)")
                    break
                }
                cursor = parent[c]
            }
        }
        // Cut every cycle so the passes below terminate.
        for i in entities.indices where inCycle(i, parent) { parent[i] = nil }

        func ancestors(_ i: Int) -> [Int] {
            var out: [Int] = []
            var cursor = parent[i]
            while let c = cursor {
                out.append(c)
                cursor = parent[c]
            }
            return out
        }

        // Property names along the chain; everything each entity sees.
        var seen = [[String: Seen]](repeating: [:], count: entities.count)
        for (i, e) in entities.enumerated() {
            var own: [String: String] = [:]
            for (name, path) in e.ownPropertyNames {
                if let other = own[name] {
                    problems.add("\(path).name", "\(quoted(name)) is already a property of \(e.name) (\(other))")
                }
                own[name] = own[name] ?? path
            }
            for a in ancestors(i) {
                for (name, path) in e.ownPropertyNames where entities[a].ownPropertyNames.contains(where: { $0.name == name }) {
                    problems.add("\(path).name", "\(quoted(name)) is already a property of \(entities[a].name), which \(e.name) inherits from")
                }
            }
            for a in ([i] + ancestors(i)).reversed() {
                for attr in entities[a].attributes { seen[i][attr.name] = .attribute(attr) }
                for rel in entities[a].relationships { seen[i][rel.name] = .relationship(rel, declaredIn: a) }
                for f in entities[a].fetchedProperties { seen[i][f.name] = .fetched(f) }
            }
        }

        // Configurations.
        var configuration = [String?](repeating: nil, count: entities.count)
        var configurations: [(name: String, members: [Int])] = []
        if let declared = raw.configurations {
            var placedAt: [Int: String] = [:]
            for config in declared {
                var members: [Int] = []
                for (name, path) in config.entities {
                    guard let i = index[name] else {
                        problems.add(path, "\(quoted(name)) is not an entity of the model")
                        continue
                    }
                    if let first = placedAt[i] {
                        problems.add(path, "\(name) is already in \(first); an entity belongs to exactly one configuration")
                        continue
                    }
                    placedAt[i] = path
                    configuration[i] = config.name
                    members.append(i)
                }
                configurations.append((config.name, members.sorted()))
            }
            for (i, e) in entities.enumerated() where configuration[i] == nil {
                problems.add("configurations", "\(e.name) is in no configuration; every entity belongs to exactly one")
            }
            for (i, e) in entities.enumerated() {
                guard let p = parent[i], let mine = configuration[i], let theirs = configuration[p], mine != theirs else { continue }
                problems.add(
                    placedAt[i] ?? "configurations",
                    "\(e.name) is in \(mine) but its parent \(entities[p].name) is in \(theirs); an inheritance hierarchy stays in one configuration")
            }
        } else {
            configuration = entities.map { _ in "Default" }
            configurations = [("Default", Array(entities.indices))]
        }

        // Relationships, fetched properties, index columns.
        for (i, e) in entities.enumerated() {
            for r in e.relationships {
                checkRelationship(r, of: i, entities, index, seen, configuration, &problems)
            }
            for f in e.fetchedProperties {
                guard let d = index[f.destination] else {
                    problems.add("\(f.path).destination", "\(quoted(f.destination)) is not an entity of the model")
                    continue
                }
                for (s, path) in f.sort {
                    guard case .attribute = seen[d][s.key] else {
                        problems.add("\(path).key", "\(quoted(s.key)) is not an attribute of \(entities[d].name)")
                        continue
                    }
                }
            }
            for (lists, what) in [(e.uniqueConstraints, "a unique constraint"), (e.indexes, "an index")] {
                for (k, list) in lists.enumerated() {
                    if let same = lists[..<k].first(where: { $0.names == list.names }) {
                        problems.add(list.path, "the same as \(same.path)")
                    }
                    for (j, name) in list.names.enumerated() {
                        checkColumn(name, path: "\(list.path)[\(j)]", entity: e.name, seen[i][name], what: what, &problems)
                    }
                }
            }
            if e.isAbstract && !parent.contains(where: { $0 == i }) {
                problems.warn(e.path, "\(e.name) is abstract and has no sub-entities, so no object can ever be one")
            }
        }
        return Resolution(parent: parent, configuration: configuration.map { $0 ?? "Default" }, configurations: configurations)
    }

    private static func inCycle(_ i: Int, _ parent: [Int?]) -> Bool {
        var cursor = parent[i]
        var steps = 0
        while let c = cursor, steps <= parent.count {
            if c == i { return true }
            cursor = parent[c]
            steps += 1
        }
        return false
    }

    private static func checkColumn(
        _ name: String, path: String, entity: String, _ seen: Seen?, what: String, _ problems: inout ProblemList
    ) {
        switch seen {
        case nil:
            problems.add(path, "\(quoted(name)) is not a property of \(entity)")
        case .attribute(let a) where a.isTransient:
            problems.add(path, "\(entity).\(name) is transient (never stored), so it cannot be in \(what)")
        case .relationship(let r, _) where r.isToMany:
            problems.add(path, "\(entity).\(name) is a to-many relationship; \(what) takes attributes and to-one relationships")
        case .fetched:
            problems.add(path, "\(entity).\(name) is a fetched property; \(what) takes attributes and to-one relationships")
        default:
            break
        }
    }

    private static func checkRelationship(
        _ r: RawRelationship, of i: Int, _ entities: [RawEntity], _ index: [String: Int], _ seen: [[String: Seen]],
        _ configuration: [String?], _ problems: inout ProblemList
    ) {
        let e = entities[i]
        guard let d = index[r.destination] else {
            problems.add("\(r.path).destination", "\(quoted(r.destination)) is not an entity of the model")
            return
        }
        let dest = entities[d]
        if let mine = configuration[i], let theirs = configuration[d], mine != theirs {
            problems.add(
                "\(r.path).destination",
                "\(dest.name) is in configuration \(theirs) and \(e.name) in \(mine); relationships never cross configurations (use a fetched property)")
        }
        guard let inverse = r.inverse else {
            problems.warn(r.path, "\(e.name).\(r.name) has no inverse; Keel cannot keep the other side in step or check it")
            return
        }
        switch seen[d][inverse] {
        case .relationship(let s, _):
            if s.destination != e.name {
                problems.add(
                    "\(r.path).inverse",
                    "\(dest.name).\(inverse) leads to \(s.destination), not back to \(e.name)")
            } else if s.inverse != r.name {
                let names = s.inverse.map { "names \(quoted($0)) as its inverse" } ?? "names no inverse"
                problems.add("\(r.path).inverse", "\(dest.name).\(inverse) \(names), not \(quoted(r.name))")
            }
        case .attribute:
            problems.add("\(r.path).inverse", "\(quoted(inverse)) is an attribute of \(dest.name), not a relationship")
        case .fetched:
            problems.add("\(r.path).inverse", "\(quoted(inverse)) is a fetched property of \(dest.name), not a relationship")
        case nil:
            problems.add("\(r.path).inverse", "\(quoted(inverse)) is not a relationship of \(dest.name)")
        }
    }
}
