// Relationship shapes in a context: ordered to-many with positions, many-to-many kept in step on
// both sides, and a failing RELATE that leaves an ordered list as it was.

import Testing

@testable import KeelModel

@Suite("Context relationships")
struct ContextRelationshipTests {
    let model = ProjectModel.make()

    func titles(_ context: ObjectContext, _ project: ObjectID) throws -> [String] {
        guard case .objects(let ids)? = try context.get(project)["tasks"] else { return [] }
        var out: [String] = []
        for id in ids {
            if case .string(let title)? = try context.get(id)["title"] { out.append(title) }
        }
        return out
    }

    @Test("an ordered to-many keeps the order of adds, places objects at a position, and moves a member")
    func ordered() throws {
        let context = ObjectContext(store: MemoryStore(model: model))
        let p = try context.insert(entity: "Project", values: ["title": "Keel"])
        var tasks: [ObjectID] = []
        for title in ["c", "a", "b"] { tasks.append(try context.insert(entity: "Task", values: ["title": .string(title)])) }
        try context.relate(p, relationship: "tasks", add: tasks)
        #expect(try titles(context, p) == ["c", "a", "b"])
        let first = try context.insert(entity: "Task", values: ["title": "first"])
        try context.relate(p, relationship: "tasks", add: [first], at: 0)
        #expect(try titles(context, p) == ["first", "c", "a", "b"])
        try context.relate(p, relationship: "tasks", add: [tasks[2]], at: 1)
        #expect(try titles(context, p) == ["first", "b", "c", "a"])
        #expect(try context.get(tasks[2])["project"] == .object(p))
        // A task inserted with its project goes at the end.
        let last = try context.insert(entity: "Task", values: ["title": "last", "project": .string(p.text(in: model))])
        #expect(try titles(context, p).last == "last")
        // A failing RELATE leaves the list as it was.
        let before = try titles(context, p)
        let gone = try context.insert(entity: "Task", values: ["title": "gone"])
        try context.delete(gone)
        expectKeelError(.notFound) { try context.relate(p, relationship: "tasks", add: [gone], remove: [last]) }
        #expect(try titles(context, p) == before)
        // UPDATE with a list replaces the members, in the given order.
        try context.update(p, values: ["tasks": .array([tasks[1], tasks[0]].map { .string($0.text(in: model)) })])
        #expect(try titles(context, p) == ["a", "c"])
        #expect(try context.get(first)["project"] == .null)
        // A RELATE that fails half-way (over the pending limit) is undone, ordered list included.
        try context.save()
        context.pendingObjectLimit = 2
        let saved = try titles(context, p)
        let fingerprint = try ContextFixture.fingerprint(context, entities: ["Project", "Task"])
        expectKeelError(.limit) { try context.relate(p, relationship: "tasks", add: [first, last], remove: [tasks[0]], at: 0) }
        #expect(try titles(context, p) == saved)
        #expect(try ContextFixture.fingerprint(context, entities: ["Project", "Task"]) == fingerprint)
        #expect(!context.changes().hasChanges)
    }

    @Test("a many-to-many is kept in step on both sides, in the context and after a save")
    func manyToMany() throws {
        let store = MemoryStore(model: model)
        let context = ObjectContext(store: store)
        let keel = try context.insert(entity: "Project", values: ["title": "Keel"])
        let raft = try context.insert(entity: "Project", values: ["title": "Raft"])
        let swift = try context.insert(entity: "Tag", values: ["label": "swift", "projects": .array([.string(keel.text(in: model))])])
        let db = try context.insert(entity: "Tag", typedValues: ["label": .string("db"), "projects": .objects([keel, raft])])
        #expect(try context.get(keel)["tags"] == .objects([swift, db]))
        #expect(try context.get(raft)["tags"] == .objects([db]))
        try context.save()
        try context.relate(keel, relationship: "tags", remove: [db])
        #expect(try context.get(db)["projects"] == .objects([raft]))
        try context.delete(raft)
        #expect(try context.get(db)["projects"] == .objects([]))
        #expect(context.changes().updated == [keel, swift, db].sorted().filter { $0 != swift })
        try context.save()
        let fresh = ObjectContext(store: store)
        #expect(try fresh.get(db)["projects"] == .objects([]))
        #expect(try fresh.get(keel)["tags"] == .objects([swift]))
    }
}
