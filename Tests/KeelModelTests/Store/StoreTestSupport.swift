// Test models built with the Schema initializers (until ModelLoader lands on main), and
// fixtures for object stores on the in-memory file system.

import Collections
import Foundation
import KeelStorage
import Testing

@testable import KeelModel

enum TestModels {
    /// spec/model.md's example grown a little: Person (abstract) ← Employee ← Manager; Department
    /// (unique name, compound index, cascade to employees, deny to archives); Project (ordered
    /// many-to-many, maxCount 5); Desk (one-to-one); Archive (required to-one); and Building/Room,
    /// in a second configuration `Sites` when `twoStores`. Loaded with ModelLoader.
    static func company(twoStores: Bool = false, extraEmployeeAttribute: Bool = false) -> Model {
        let nickname = extraEmployeeAttribute ? #", { "name": "nickname", "type": "string" }"# : ""
        let configurations = twoStores
            ? #", "configurations": { "Default": ["Person", "Employee", "Manager", "Department", "Project", "Desk", "Archive"], "Sites": ["Building", "Room"] }"#
            : ""
        let text = """
            { "name": "Company", "version": 1, "entities": [
              { "name": "Person", "abstract": true, "attributes": [
                  { "name": "name", "type": "string", "optional": false, "indexed": true },
                  { "name": "age", "type": "int16", "minValue": 0, "maxValue": 150 },
                  { "name": "address", "type": "string" } ] },
              { "name": "Employee", "parent": "Person", "attributes": [
                  { "name": "salary", "type": "decimal" },
                  { "name": "email", "type": "string", "regex": "[a-z]+@[a-z]+\\\\.com" },
                  { "name": "rank", "type": "int32", "minValue": 1, "maxValue": 10 }\(nickname) ],
                "relationships": [
                  { "name": "department", "destination": "Department", "inverse": "employees" },
                  { "name": "mentor", "destination": "Employee", "inverse": "mentees" },
                  { "name": "mentees", "destination": "Employee", "inverse": "mentor", "toMany": true },
                  { "name": "projects", "destination": "Project", "inverse": "members", "toMany": true },
                  { "name": "desk", "destination": "Desk", "inverse": "owner" } ],
                "uniqueConstraints": [ ["email"] ] },
              { "name": "Manager", "parent": "Employee", "attributes": [ { "name": "level", "type": "int64" } ] },
              { "name": "Department", "attributes": [
                  { "name": "name", "type": "string", "optional": false },
                  { "name": "code", "type": "string", "maxValue": 8 },
                  { "name": "budget", "type": "double" } ],
                "relationships": [
                  { "name": "employees", "destination": "Employee", "inverse": "department", "toMany": true, "deleteRule": "cascade" },
                  { "name": "archive", "destination": "Archive", "inverse": "department", "toMany": true, "deleteRule": "deny" } ],
                "uniqueConstraints": [ ["name"] ], "indexes": [ ["budget", "code"] ] },
              { "name": "Project", "attributes": [ { "name": "title", "type": "string" } ], "relationships": [
                  { "name": "members", "destination": "Employee", "inverse": "projects", "toMany": true, "ordered": true, "maxCount": 5 } ] },
              { "name": "Desk", "attributes": [ { "name": "number", "type": "int32" } ], "relationships": [
                  { "name": "owner", "destination": "Employee", "inverse": "desk" } ] },
              { "name": "Archive", "attributes": [ { "name": "label", "type": "string" } ], "relationships": [
                  { "name": "department", "destination": "Department", "inverse": "archive", "optional": false } ] },
              { "name": "Building", "attributes": [ { "name": "name", "type": "string" } ], "relationships": [
                  { "name": "rooms", "destination": "Room", "inverse": "building", "toMany": true, "deleteRule": "cascade" } ] },
              { "name": "Room", "attributes": [ { "name": "number", "type": "int32", "indexed": true } ], "relationships": [
                  { "name": "building", "destination": "Building", "inverse": "rooms" } ] }
            ]\(configurations) }
            """
        do {
            return try ModelLoader.load(text: text)
        } catch {
            fatalError("the test model does not load: \(error)")
        }
    }

    /// Sibling sub-entities with different to-many relationships at one field number: Alpha.pets
    /// and Beta.toys are both field 1 (after the inherited `name`), kept in the link trees of
    /// different relationships; Beta's inverse is noAction, so its members may dangle, Alpha's not.
    static func siblings() throws -> Model {
        try ModelLoader.load(text: """
            { "name": "Siblings", "version": 1, "entities": [
              { "name": "Owner", "abstract": true, "attributes": [ { "name": "name", "type": "string" } ] },
              { "name": "Alpha", "parent": "Owner", "relationships": [
                  { "name": "pets", "destination": "Pet", "inverse": "alpha", "toMany": true } ] },
              { "name": "Beta", "parent": "Owner", "relationships": [
                  { "name": "toys", "destination": "Toy", "inverse": "beta", "toMany": true } ] },
              { "name": "Pet", "attributes": [ { "name": "name", "type": "string" } ], "relationships": [
                  { "name": "alpha", "destination": "Alpha", "inverse": "pets" } ] },
              { "name": "Toy", "attributes": [ { "name": "name", "type": "string" } ], "relationships": [
                  { "name": "beta", "destination": "Beta", "inverse": "toys", "deleteRule": "noAction" } ] } ] }
            """)
    }

    /// The project's example model (config/model.json).
    static func projectModel() throws -> Model {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return try ModelLoader.load(path: root.appendingPathComponent("config/model.json").path)
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
        // Checkpoints inline, where the tests can count them (the background checkpointer has
        // its own tests: BackgroundCheckpointTests, ContextCheckpointTests).
        options.storage.checkpointInBackground = false
        options.storage.cacheSizeBytes = 8 << 20
        configure(&options)
        self.options = options
        self.store = try ObjectStore.open(directory: directory, model: model, options: options)
    }

    mutating func reopen() throws { try reopen(afterClose: false) }

    /// Opens the folder again (with the current `options`); `afterClose`: the store is closed already.
    mutating func reopen(afterClose: Bool) throws {
        if !afterClose { try store.close() }
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
