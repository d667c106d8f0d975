// Import plans (Transfer/ImportPlan.swift) and their runs against an object store: the order puts
// required targets first, a cycle of required relationships becomes one save, the other side of
// each link is completed, conflicts and bad keys are problems named by line; the migration
// classifier (Schema/Model+Migration.swift) on the spec's cases.

import Testing

@testable import KeelModel

@Suite("Import plans and runs")
struct ImportPlanTests {
    /// Pairs that require each other (a one-to-one, required on both sides), and notes that
    /// require a pair.
    static let model: Model = {
        let text = """
            { "name": "Pairs", "version": 1, "entities": [
              { "name": "Left", "attributes": [ { "name": "name", "type": "string" } ], "relationships": [
                  { "name": "right", "destination": "Right", "inverse": "left", "optional": false },
                  { "name": "notes", "destination": "Note", "inverse": "left", "toMany": true, "ordered": true } ] },
              { "name": "Right", "attributes": [ { "name": "name", "type": "string" } ], "relationships": [
                  { "name": "left", "destination": "Left", "inverse": "right", "optional": false } ] },
              { "name": "Note", "attributes": [ { "name": "text", "type": "string" } ], "relationships": [
                  { "name": "left", "destination": "Left", "inverse": "notes", "optional": false } ] } ] }
            """
        return try! ModelLoader.load(text: text)  // safe: a fixed, valid model
    }()

    static func items(_ lines: [String]) throws -> [ImportItem] {
        try ImportSource.read(Array(lines.joined(separator: "\n").utf8))
    }

    @Test("required targets come first; a cycle of required relationships and what needs it form the final group")
    func order() throws {
        let plan = try ImportPlan(model: Self.model, items: try Self.items([
            #"{"$entity":"Note","$id":"n1","text":"x","left":"l1"}"#,
            #"{"$entity":"Left","$id":"l1","right":"r1","notes":["n2","n1"]}"#,
            #"{"$entity":"Right","$id":"r1"}"#,
            #"{"$entity":"Note","$id":"n2","text":"y"}"#,
        ]), options: ImportOptions())
        #expect(plan.groupStart == 0, "everything hangs on the Left–Right cycle")
        #expect(plan.order.count == 4)
        // Both sides of every link.
        let left = plan.objects[1]
        #expect(left.links[Self.model.entity(named: "Left")!.field(named: "notes")!] == [3, 0])
        #expect(plan.objects[2].links.values.first == [1], "Right.left completed from Left.right")
        #expect(plan.objects[3].links.values.first == [1], "n2's left completed from the list")
    }

    @Test("a plan with a required cycle imports offline in one save, ordered lists in their order")
    func cycleImports() throws {
        let fixture = try StoreFixture(model: Self.model)
        let store = fixture.store
        defer { try? store.close() }
        let plan = try ImportPlan(model: Self.model, items: try Self.items([
            #"{"$entity":"Left","$id":"l1","name":"L","right":"r1","notes":["n2","n1"]}"#,
            #"{"$entity":"Right","$id":"r1","name":"R"}"#,
            #"{"$entity":"Note","$id":"n1","text":"first in the file"}"#,
            #"{"$entity":"Note","$id":"n2","text":"first in the list"}"#,
        ]), options: ImportOptions())
        let result = try store.importObjects(plan, chunkSize: 1)
        #expect(result.total == 4)
        #expect(try store.verifyAll().isEmpty)
        let snapshot = try store.snapshot()
        defer { snapshot.close() }
        let leftEntity = Self.model.entity(named: "Left")!
        var lefts: [StoredObject] = []
        try snapshot.scan(leftEntity.id, includeSubentities: false) { (o) throws(KeelError) -> Bool in
            lefts.append(o)
            return true
        }
        let notes = try snapshot.members(of: try #require(lefts.first).id, field: leftEntity.field(named: "notes")!)
        let texts = try notes.map { try snapshot.object($0)?.values[Self.model.entity(named: "Note")!.field(named: "text")!] }
        #expect(texts == [.string("first in the list"), .string("first in the file")])
    }

    @Test("problems are named by line: duplicate keys, unknown keys, a to-one given two values, wrong shapes")
    func problems() throws {
        func problem(_ lines: [String]) -> String {
            do {
                _ = try ImportPlan(model: Self.model, items: try Self.items(lines), options: ImportOptions())
                return "no problem"
            } catch {
                return (error as? KeelError)?.message ?? "\(error)"
            }
        }
        #expect(problem([#"{"$entity":"Right","$id":"r"}"#, #"{"$entity":"Right","$id":"r"}"#]) == #"line 2: the key "r" is also the key of line 1"#)
        #expect(problem([#"{"$entity":"Note","$id":"n","left":"nobody"}"#]) == #"line 1: Note.left: no Left with the key "nobody" in this import"#)
        #expect(problem([
            #"{"$entity":"Left","$id":"l1","right":"r1"}"#, #"{"$entity":"Left","$id":"l2"}"#, #"{"$entity":"Right","$id":"r1","left":"l2"}"#,
        ]).contains("whose Right.left is"))
        #expect(problem([#"{"$entity":"Left","$id":"l","notes":"n"}"#]) == "line 1: Left.notes takes an array of keys, not a string")
        #expect(problem([#"{"$id":"x"}"#]) == "line 1: no $entity, and the import names no default entity")
    }

    @Test("model diff: the spec's lightweight changes are lightweight, a type change is not")
    func migration() throws {
        let old = try ModelLoader.load(text: #"{"name":"M","version":1,"entities":[{"name":"A","attributes":[{"name":"x","type":"int16"},{"name":"y","type":"string"}]}]}"#)
        func diff(_ text: String) throws -> ModelMigration { try ModelLoader.load(text: text).migration(from: old) }
        let light = try diff(#"{"name":"M","version":2,"entities":[{"name":"A","attributes":[{"name":"x","type":"int16","optional":false,"defaultValue":0},{"name":"z","type":"string","renamingIdentifier":"y"}],"uniqueConstraints":[["x"]]},{"name":"B"}]}"#)
        #expect(light.isLightweight, "\(light.changes)")
        #expect(light.changes.map(\.description).contains("A.y is renamed z (renamingIdentifier)"))
        let heavy = try diff(#"{"name":"M","version":1,"entities":[{"name":"A","attributes":[{"name":"x","type":"int32"},{"name":"y","type":"string"}]}]}"#)
        #expect(!heavy.isLightweight && heavy.changes.count == 1)
        let required = try diff(#"{"name":"M","version":1,"entities":[{"name":"A","attributes":[{"name":"x","type":"int16","optional":false},{"name":"y","type":"string"}]}]}"#)
        #expect(!required.isLightweight, "made non-optional without a default")
        #expect(try diff(#"{"name":"M","version":1,"entities":[{"name":"A","attributes":[{"name":"x","type":"int16"},{"name":"y","type":"string"}]}]}"#).isEmpty)
    }
}
