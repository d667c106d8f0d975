// An import, checked and planned before anything is written (Docs/Operations.md, "Import and
// export"). Each object of the file is a JSON object:
//
//   {"$entity":"Employee", "$id":"e1", "name":"Kim", "salary":"5200.00", "department":"d1"}
//
// - `$entity` names its entity (else the import's default entity); abstract entities are refused.
// - The key field (`$id` unless the import names an attribute instead) holds the object's key, a
//   string or an integer, unique within its entity hierarchy. `$id` is not stored; an attribute
//   used as the key is stored like any other. `$version` is ignored (rows of FETCH carry it).
// - Attributes take their wire values (spec/model.md); transient ones are ignored; those left
//   out take their `defaultValue`, as INSERT does (an explicit null stays null).
// - A to-one relationship takes the key of an object of this import, or null; a to-many an array
//   of keys. Either side of a link, or both, may be written; the plan completes the other side,
//   and refuses a to-one given two different values by the two sides.
//
// The plan: every check that needs no store (entities, members, value types, keys, references,
// shapes, to-one conflicts) with every problem named by its line and field; then the insertion
// order — objects that others require (a non-optional to-one, a to-many with a minimum count)
// come before them (Kahn's algorithm, file order otherwise); objects on a cycle of required
// relationships, and those that need them, form one group at the end that must be saved whole.
// An object is inserted with its links to objects earlier in the order; a link to a later object
// is made by the later object's insert, through the inverse. What that cannot get right — links
// of a relationship without an inverse to later objects, and the order of an ordered to-many
// with later members — is set afterwards (`fixUps`).

/// How an import's objects name their entity and key.
public struct ImportOptions: Sendable {
    /// The entity of objects without `$entity`.
    public var entity: String?
    /// The member holding each object's key: `$id` (not stored), or an attribute's name.
    public var keyField: String

    public init(entity: String? = nil, keyField: String = "$id") {
        self.entity = entity
        self.keyField = keyField
    }
}

/// One object of an import plan.
public struct PlannedObject: Sendable {
    /// The line of the file it starts on.
    public let line: Int
    public let entity: EntityID
    /// The values to store for its attributes, by field.
    public var attributes: [Int: Value]
    /// Its relationships, by field: the objects (indexes into the plan) it is linked to, in
    /// order — both sides of every link.
    public var links: [Int: [Int]]
}

public struct ImportPlan: Sendable {
    public let model: Model
    public private(set) var objects: [PlannedObject] = []
    /// Indexes of `objects`, in the order they are inserted.
    public private(set) var order: [Int] = []
    /// Each object's place in `order`.
    public private(set) var position: [Int] = []
    /// Objects from this place in `order` on must be inserted in one save (a cycle of required
    /// relationships); `order.count` when there is no such group.
    public private(set) var groupStart = 0

    /// At most this many problems are listed before the check stops.
    public static let problemLimit = 20

    /// Checks and plans `items`. Throws `BAD_REQUEST` (`PARSE`, `TYPE`… when there is one
    /// problem of that kind) listing the problems, each "line N: Entity.field: what is wrong",
    /// with `details.problems` ({line, message}).
    public init(model: Model, items: [ImportItem], options: ImportOptions) throws(KeelError) {
        self.model = model
        var problems = Problems()
        var keyOf: [(key: String, root: EntityID)?] = []
        var raw: [[(field: Int, keys: [String])]] = []
        let defaultEntity: Entity?
        if let name = options.entity {
            guard let e = model.entity(named: name) else { throw KeelError(.noSuchEntity, "the model has no entity \"\(name)\"") }
            defaultEntity = e
        } else {
            defaultEntity = nil
        }
        for item in items {
            guard problems.count < Self.problemLimit else { break }
            guard let (object, key, references) = Self.read(item, model: model, defaultEntity: defaultEntity, options: options, &problems)
            else { continue }
            objects.append(object)
            keyOf.append(key.map { ($0, model[object.entity].root) })
            raw.append(references)
        }
        try problems.throwIfAny()
        // Keys, unique per entity hierarchy.
        var index: [EntityID: [String: Int]] = [:]
        for (i, key) in keyOf.enumerated() {
            guard let (key, root) = key else { continue }
            if let other = index[root]?[key] {
                problems.add(objects[i].line, "the key \(JSON.string(key).serialized()) is also the key of line \(objects[other].line)")
            } else {
                index[root, default: [:]][key] = i
            }
        }
        try problems.throwIfAny()
        // References.
        for i in objects.indices {
            let entity = model[objects[i].entity]
            for (field, keys) in raw[i] {
                guard case .relationship(let r) = entity.properties[field] else { continue }
                var targets: [Int] = []
                for key in keys {
                    guard let j = index[model[r.destination].root]?[key] else {
                        problems.add(objects[i].line, "\(entity.name).\(r.name): no \(model[r.destination].name) with the key \(JSON.string(key).serialized()) in this import")
                        continue
                    }
                    guard model[r.destination].includes(objects[j].entity) else {
                        problems.add(objects[i].line, "\(entity.name).\(r.name) takes \(model[r.destination].name) objects; the key \(JSON.string(key).serialized()) is a \(model[objects[j].entity].name) (line \(objects[j].line))")
                        continue
                    }
                    if !targets.contains(j) { targets.append(j) }
                }
                objects[i].links[field] = targets
            }
        }
        try problems.throwIfAny()
        completeInverses(&problems)
        try problems.throwIfAny()
        planOrder()
    }

    /// One item read: its entity, attributes, key and references (by key, not yet resolved).
    private static func read(
        _ item: ImportItem, model: Model, defaultEntity: Entity?, options: ImportOptions, _ problems: inout Problems
    ) -> (PlannedObject, String?, [(field: Int, keys: [String])])? {
        guard case .object(let members) = item.json else { return nil }
        let entity: Entity
        if let name = members["$entity"] {
            guard let text = name.stringValue, let e = model.entity(named: text) else {
                problems.add(item.line, "$entity: the model has no entity \(name.serialized())")
                return nil
            }
            entity = e
        } else if let defaultEntity {
            entity = defaultEntity
        } else {
            problems.add(item.line, "no $entity, and the import names no default entity")
            return nil
        }
        guard !entity.isAbstract else {
            problems.add(item.line, "\(entity.name) is abstract: import objects of one of its sub-entities")
            return nil
        }
        var object = PlannedObject(line: item.line, entity: entity.id, attributes: [:], links: [:])
        var key: String?
        var references: [(field: Int, keys: [String])] = []
        let before = problems.count
        for (name, json) in members {
            if name == options.keyField {
                if let k = Self.key(json) {
                    key = k
                } else if !json.isNull {
                    problems.add(item.line, "\(name): a key is a string or an integer, not \(json.kindName)")
                }
                if name.hasPrefix("$") { continue }
            }
            if name == "$entity" || name == "$version" { continue }
            if name.hasPrefix("$") {
                problems.add(item.line, "\(name): not a member an import takes ($entity, $version, and the key field \(options.keyField))")
                continue
            }
            guard let field = entity.field(named: name) else {
                let fetched = entity.fetchedProperties.contains { $0.name == name }
                problems.add(item.line, "\(entity.name).\(name): " + (fetched ? "a fetched property is not imported" : "no such property"))
                continue
            }
            switch entity.properties[field] {
            case .attribute(let a):
                do throws(KeelError) {
                    let value = try a.decode(json, entity: entity.name)
                    if !a.isTransient { object.attributes[field] = value }
                } catch {
                    problems.add(item.line, error.message)
                }
            case .relationship(let r):
                if r.isToMany {
                    guard let array = json.arrayValue else {
                        if !json.isNull { problems.add(item.line, "\(entity.name).\(r.name) takes an array of keys, not \(json.kindName)") }
                        continue
                    }
                    var keys: [String] = []
                    for element in array {
                        guard let k = Self.key(element) else {
                            problems.add(item.line, "\(entity.name).\(r.name): a key is a string or an integer, not \(element.kindName)")
                            continue
                        }
                        keys.append(k)
                    }
                    references.append((field, keys))
                } else if let k = Self.key(json) {
                    references.append((field, [k]))
                } else if !json.isNull {
                    problems.add(item.line, "\(entity.name).\(r.name) takes a key (a string or an integer) or null, not \(json.kindName)")
                }
            }
        }
        // As INSERT does: attributes left out take their default.
        for (field, a) in entity.attributes where !a.isTransient && members[a.name] == nil {
            if let value = a.defaultValue { object.attributes[field] = value }
        }
        return problems.count == before ? (object, key, references) : nil
    }

    private static func key(_ json: JSON) -> String? {
        switch json {
        case .string(let s): s
        case .int(let i): String(i)
        default: nil
        }
    }

    /// Adds the other side of every link; a to-one given two different values is a problem.
    private mutating func completeInverses(_ problems: inout Problems) {
        for i in objects.indices {
            let entity = model[objects[i].entity]
            for (field, targets) in objects[i].links.sorted(by: { $0.key < $1.key }) {
                guard case .relationship(let r) = entity.properties[field], let inverseName = r.inverse else { continue }
                for j in targets {
                    let other = model[objects[j].entity]
                    guard let inverseField = other.field(named: inverseName), case .relationship(let inverse) = other.properties[inverseField]
                    else { continue }
                    var list = objects[j].links[inverseField] ?? []
                    if list.contains(i) { continue }
                    if !inverse.isToMany, let holder = list.first {
                        problems.add(
                            objects[i].line,
                            "\(entity.name).\(r.name) links it to the object of line \(objects[j].line), whose \(other.name).\(inverseName) is the object of line \(objects[holder].line)")
                        continue
                    }
                    list.append(i)
                    objects[j].links[inverseField] = list
                }
            }
        }
    }

    /// Whether a relationship must hold something when its object is saved.
    private static func isRequired(_ r: Relationship) -> Bool {
        r.isToMany ? r.minCount > 0 : !r.isOptional
    }

    /// Kahn's algorithm over the required links, in file order otherwise.
    private mutating func planOrder() {
        var waiting = [Int](repeating: 0, count: objects.count)
        var dependents = [[Int]](repeating: [], count: objects.count)
        for i in objects.indices {
            let entity = model[objects[i].entity]
            for (field, targets) in objects[i].links {
                guard case .relationship(let r) = entity.properties[field], Self.isRequired(r) else { continue }
                for j in targets where j != i {
                    waiting[i] += 1
                    dependents[j].append(i)
                }
                if targets.contains(i) { waiting[i] += 1 }  // requires itself: only the group can hold it
            }
        }
        var ready = objects.indices.filter { waiting[$0] == 0 }
        var next = 0
        order.reserveCapacity(objects.count)
        while next < ready.count {
            let i = ready[next]
            next += 1
            order.append(i)
            for d in dependents[i] {
                waiting[d] -= 1
                if waiting[d] == 0 { ready.append(d) }
            }
        }
        groupStart = order.count
        var placed = [Bool](repeating: false, count: objects.count)
        for i in order { placed[i] = true }
        for i in objects.indices where !placed[i] { order.append(i) }
        position = [Int](repeating: 0, count: objects.count)
        for (p, i) in order.enumerated() { position[i] = p }
    }

    /// The values object `i` is inserted with: its attributes, and its links to objects
    /// inserted before it (`id` gives their IDs).
    public func insertValues(_ i: Int, id: (Int) -> ObjectID) -> [Int: Value] {
        var values = objects[i].attributes
        let entity = model[objects[i].entity]
        for (field, targets) in objects[i].links {
            guard case .relationship(let r) = entity.properties[field] else { continue }
            let earlier = targets.filter { position[$0] < position[i] }
            if r.isToMany {
                if !earlier.isEmpty { values[field] = .objects(earlier.map(id)) }
            } else if let target = earlier.first {
                values[field] = .object(id(target))
            }
        }
        return values
    }

    /// What the inserts leave to set afterwards, in order: links without an inverse to later
    /// objects, and every ordered to-many whose order the inserts do not give by themselves
    /// (they give the members before the owner in the list's order, then the later ones in the
    /// order they are inserted, each appended by its own insert through the inverse).
    public var fixUps: [(object: Int, field: Int)] {
        var out: [(Int, Int)] = []
        for i in order {
            let entity = model[objects[i].entity]
            for (field, targets) in objects[i].links.sorted(by: { $0.key < $1.key }) {
                guard case .relationship(let r) = entity.properties[field] else { continue }
                let later = targets.filter { position[$0] > position[i] }
                guard !later.isEmpty else { continue }
                if r.inverse == nil {
                    out.append((i, field))
                } else if r.isOrdered {
                    let given = targets.filter { position[$0] < position[i] } + later.sorted { position[$0] < position[$1] }
                    if given != targets { out.append((i, field)) }
                }
            }
        }
        return out
    }

    /// The whole value of a relationship of object `i`, for a fix-up.
    public func value(of i: Int, field: Int, id: (Int) -> ObjectID) -> Value {
        let targets = objects[i].links[field] ?? []
        guard case .relationship(let r) = model[objects[i].entity].properties[field], !r.isToMany else {
            return .objects(targets.map(id))
        }
        return targets.first.map { .object(id($0)) } ?? .null
    }
}

/// Problems found while planning, each with its line.
struct Problems {
    private(set) var list: [(line: Int, message: String)] = []
    var count: Int { list.count }

    mutating func add(_ line: Int, _ message: String) {
        if list.count < ImportPlan.problemLimit { list.append((line, message)) }
    }

    func throwIfAny() throws(KeelError) {
        guard !list.isEmpty else { return }
        var report = ProblemReport()
        for p in list.sorted(by: { $0.line < $1.line }) {
            report.add { (["line": .int(Int64(p.line)), "message": .string(p.message)], "line \(p.line): \(p.message)") }
        }
        let more = list.count >= ImportPlan.problemLimit ? " (the check stopped after \(ImportPlan.problemLimit))" : ""
        throw KeelError(.badRequest, (list.count == 1 ? "" : "\(list.count) problems\(more): ") + report.listing(), details: report.details())
    }
}
