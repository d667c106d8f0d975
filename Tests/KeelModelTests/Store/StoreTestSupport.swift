// Test models built with the Schema initializers (until ModelLoader lands on main), and
// fixtures for object stores on the in-memory file system.

import Collections
import Foundation
import KeelStorage
import Testing

@testable import KeelModel

struct AttributeSpec {
    var name: String
    var type: AttributeType
    var optional = true
    var defaultValue: Value? = nil
    var indexed = false
    var min: Value? = nil
    var max: Value? = nil
    var regex: String? = nil
}

struct RelationshipSpec {
    var name: String
    var destination: String
    var inverse: String?
    var toMany = false
    var ordered = false
    var deleteRule: DeleteRule = .nullify
    var optional = true
    var minCount = 0
    var maxCount = 0
}

struct EntitySpec {
    var name: String
    var parent: String? = nil
    var abstract = false
    var attributes: [AttributeSpec] = []
    var relationships: [RelationshipSpec] = []
    var unique: [[String]] = []
    var indexes: [[String]] = []
}

enum TestModels {
    /// Builds a model the way ModelLoader would resolve it: inherited properties first, fields
    /// numbered along the hierarchy, indexes and unique keys inherited.
    static func build(name: String, _ specs: [EntitySpec], configurations: [(String, [String])]? = nil) -> Model {
        let ids = Dictionary(uniqueKeysWithValues: specs.enumerated().map { ($1.name, EntityID($0)) })
        let configOf: [String: String] = {
            guard let configurations else { return [:] }
            var out: [String: String] = [:]
            for (c, names) in configurations { for n in names { out[n] = c } }
            return out
        }()
        func chain(_ i: Int) -> [Int] {  // root first
            var out = [i]
            var p = specs[i].parent
            while let name = p, let j = ids[name]?.index {
                out.insert(j, at: 0)
                p = specs[j].parent
            }
            return out
        }
        var entities: [Entity] = []
        for (i, spec) in specs.enumerated() {
            let line = chain(i)
            var properties: [Property] = []
            var uniques: [Index] = []
            var indexes: [Index] = []
            for j in line {
                let s = specs[j]
                let declared = EntityID(j)
                for a in s.attributes {
                    properties.append(.attribute(Attribute(
                        name: a.name, type: a.type, isOptional: a.optional, defaultValue: a.defaultValue, isIndexed: a.indexed,
                        minValue: a.min, maxValue: a.max, regex: a.regex, declaredIn: declared)))
                }
                for r in s.relationships {
                    properties.append(.relationship(Relationship(
                        name: r.name, destination: ids[r.destination] ?? EntityID(0), isToMany: r.toMany, isOrdered: r.ordered,
                        inverse: r.inverse, deleteRule: r.deleteRule, isOptional: r.optional, minCount: r.minCount,
                        maxCount: r.maxCount, declaredIn: declared)))
                }
            }
            func field(_ n: String) -> Int { properties.firstIndex { $0.name == n } ?? -1 }
            for j in line {
                let s = specs[j]
                for u in s.unique {
                    uniques.append(Index(name: "\(s.name).\(u.joined(separator: ","))", fields: u.map(field), propertyNames: u,
                                         isUnique: true, declaredIn: EntityID(j)))
                }
                for x in s.indexes + s.attributes.filter(\.indexed).map({ [$0.name] }) {
                    indexes.append(Index(name: "\(s.name).\(x.joined(separator: ","))", fields: x.map(field), propertyNames: x,
                                         isUnique: false, declaredIn: EntityID(j)))
                }
            }
            let family = specs.indices.filter { chain($0).contains(i) }.sorted { a, b in a == i ? true : b == i ? false : a < b }
            entities.append(Entity(
                id: EntityID(i), name: spec.name, isAbstract: spec.abstract, parent: spec.parent.flatMap { ids[$0] },
                root: EntityID(line[0]), family: family.map { EntityID($0) }, properties: properties, fetchedProperties: [],
                uniqueConstraints: uniques, indexes: indexes, configuration: configOf[specs[line[0]].name] ?? "Default"))
        }
        var configs: OrderedDictionary<String, [EntityID]> = [:]
        if let configurations {
            for (c, names) in configurations { configs[c] = names.compactMap { ids[$0] } }
        } else {
            configs["Default"] = entities.map(\.id)
        }
        let shape = specs.map { s in
            "\(s.name)|\(s.parent ?? "")|\(s.abstract)|" + s.attributes.map { "\($0.name):\($0.type):\($0.optional):\($0.min.map { "\($0)" } ?? ""):\($0.max.map { "\($0)" } ?? ""):\($0.regex ?? "")" }.joined(separator: ",")
                + "|" + s.relationships.map { "\($0.name):\($0.destination):\($0.toMany):\($0.deleteRule)" }.joined(separator: ",")
                + "|\(s.unique)|\(s.indexes)"
        }.joined(separator: "\n") + "\(configurations.map { "\($0)" } ?? "")"
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in shape.utf8 { hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3 }
        return Model(name: name, version: 1, entities: entities, configurations: configs, hash: String(hash, radix: 16),
                     canonical: ["name": .string(name)], warnings: [])
    }

    /// spec/model.md's example grown a little: Person (abstract) ← Employee, Manager; Department;
    /// Project (ordered many-to-many); and, in a second configuration `Sites`, Building/Room.
    static func company(twoStores: Bool = false, extraEmployeeAttribute: Bool = false) -> Model {
        var employee = EntitySpec(
            name: "Employee", parent: "Person",
            attributes: [
                AttributeSpec(name: "salary", type: .decimal),
                AttributeSpec(name: "email", type: .string, regex: "[a-z]+@[a-z]+\\.com"),
                AttributeSpec(name: "rank", type: .int32, min: .int(1), max: .int(10)),
            ],
            relationships: [
                RelationshipSpec(name: "department", destination: "Department", inverse: "employees"),
                RelationshipSpec(name: "mentor", destination: "Employee", inverse: "mentees"),
                RelationshipSpec(name: "mentees", destination: "Employee", inverse: "mentor", toMany: true),
                RelationshipSpec(name: "projects", destination: "Project", inverse: "members", toMany: true),
                RelationshipSpec(name: "desk", destination: "Desk", inverse: "owner"),
            ],
            unique: [["email"]])
        if extraEmployeeAttribute { employee.attributes.append(AttributeSpec(name: "nickname", type: .string)) }
        let specs: [EntitySpec] = [
            EntitySpec(name: "Person", abstract: true, attributes: [
                AttributeSpec(name: "name", type: .string, optional: false, indexed: true),
                AttributeSpec(name: "age", type: .int16, min: .int(0), max: .int(150)),
                AttributeSpec(name: "address", type: .string),
            ]),
            employee,
            EntitySpec(name: "Manager", parent: "Employee", attributes: [AttributeSpec(name: "level", type: .int64)]),
            EntitySpec(
                name: "Department",
                attributes: [
                    AttributeSpec(name: "name", type: .string, optional: false),
                    AttributeSpec(name: "code", type: .string, max: .int(8)),
                    AttributeSpec(name: "budget", type: .double),
                ],
                relationships: [
                    RelationshipSpec(name: "employees", destination: "Employee", inverse: "department", toMany: true, deleteRule: .cascade),
                    RelationshipSpec(name: "archive", destination: "Archive", inverse: "department", toMany: true, deleteRule: .deny),
                ],
                unique: [["name"]], indexes: [["budget", "code"]]),
            EntitySpec(name: "Project", attributes: [AttributeSpec(name: "title", type: .string)], relationships: [
                RelationshipSpec(name: "members", destination: "Employee", inverse: "projects", toMany: true, ordered: true, maxCount: 5),
            ]),
            EntitySpec(name: "Desk", attributes: [AttributeSpec(name: "number", type: .int32)], relationships: [
                RelationshipSpec(name: "owner", destination: "Employee", inverse: "desk"),
            ]),
            EntitySpec(name: "Archive", attributes: [AttributeSpec(name: "label", type: .string)], relationships: [
                RelationshipSpec(name: "department", destination: "Department", inverse: "archive", optional: false),
            ]),
            EntitySpec(name: "Building", attributes: [AttributeSpec(name: "name", type: .string)], relationships: [
                RelationshipSpec(name: "rooms", destination: "Room", inverse: "building", toMany: true, deleteRule: .cascade),
            ]),
            EntitySpec(name: "Room", attributes: [AttributeSpec(name: "number", type: .int32, indexed: true)], relationships: [
                RelationshipSpec(name: "building", destination: "Building", inverse: "rooms"),
            ]),
        ]
        let configs: [(String, [String])]? = twoStores
            ? [("Default", ["Person", "Employee", "Manager", "Department", "Project", "Desk", "Archive"]), ("Sites", ["Building", "Room"])]
            : nil
        return build(name: "Company", specs, configurations: configs)
    }
}

extension Model {
    func id(_ entity: String) -> EntityID { self.entity(named: entity)!.id }
    func field(_ entity: String, _ property: String) -> Int { self.entity(named: entity)!.field(named: property)! }
}

/// An object store on an in-memory file system, verified (no faults) when the test asks.
struct StoreFixture {
    let model: Model
    let fs: any FileSystem
    let directory = "/data"
    var options: ObjectStoreOptions
    var store: ObjectStore

    init(model: Model = TestModels.company(), fs: any FileSystem = InMemoryFileSystem(), configure: (inout ObjectStoreOptions) -> Void = { _ in })
        throws
    {
        self.model = model
        self.fs = fs
        var options = ObjectStoreOptions()
        options.storage.fileSystem = fs
        options.storage.syncMode = .full
        options.storage.logPreallocationBytes = 256 << 10
        options.storage.checkpointThresholdBytes = 1 << 20
        options.storage.cacheSizeBytes = 8 << 20
        configure(&options)
        self.options = options
        self.store = try ObjectStore.open(directory: directory, model: model, options: options)
    }

    mutating func reopen() throws {
        try store.close()
        store = try ObjectStore.open(directory: directory, model: model, options: options)
    }

    func expectConsistent(_ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let faults = try store.verify()
        #expect(faults.isEmpty, "\(faults.prefix(10))", sourceLocation: sourceLocation)
    }

    func object(_ id: ObjectID) throws -> StoredObject? {
        let s = try store.snapshot()
        defer { s.close() }
        return try s.object(id)
    }

    func members(_ id: ObjectID, _ property: String) throws -> [ObjectID] {
        let s = try store.snapshot()
        defer { s.close() }
        return try s.members(of: id, field: model[id.entity].field(named: property)!)
    }

    func value(_ id: ObjectID, _ property: String) throws -> Value? {
        try object(id).map { $0.values[model[id.entity].field(named: property)!] }
    }

    func new(_ entity: String) throws -> ObjectID { try store.newObjectID(for: model.id(entity)) }

    /// Values by property name.
    func values(_ entity: String, _ named: [String: Value]) -> [Int: Value] {
        Dictionary(uniqueKeysWithValues: named.map { (model.field(entity, $0.key), $0.value) })
    }

    /// Inserts one object and saves; returns its ID.
    @discardableResult
    func insert(_ entity: String, _ named: [String: Value]) throws -> ObjectID {
        let id = try new(entity)
        _ = try store.save(ChangeSet(changes: [.insert(id, values: values(entity, named))]))
        return id
    }

    /// The snapshot row, for `ChangeSet.originals`.
    func original(_ ids: ObjectID...) throws -> [ObjectID: StoredObject] {
        var out: [ObjectID: StoredObject] = [:]
        for id in ids { out[id] = try object(id) }
        return out
    }

    func set(_ id: ObjectID, _ property: String, _ value: Value) -> Change {
        .set(id, field: model[id.entity].field(named: property)!, value: value)
    }
}

func keelError(_ body: () throws -> Void) -> KeelError? {
    do {
        try body()
        return nil
    } catch let e as KeelError {
        return e
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}
