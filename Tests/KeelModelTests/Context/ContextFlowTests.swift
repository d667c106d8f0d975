// The tutorials' flows (seeds 000–003) through a context: import, link, list with counts,
// unlink, inheritance, and the object shape of spec/protocol.md "Values and objects".

import Testing

@testable import KeelModel

@Suite("Context flows")
struct ContextFlowTests {
    @Test("import departments and employees from JSON, then list departments with employee counts")
    func importAndList() throws {
        let fixture = ContextFixture()
        let (departments, employees) = try fixture.importCompany()
        #expect(fixture.store.state.rows.count == 16)
        let context = fixture.context()
        var counts: [String: Int] = [:]
        for department in try context.fetch(entity: "Department") {
            guard case .string(let name)? = department["name"], case .objects(let members)? = department["employees"] else {
                Issue.record("bad department \(department)")
                continue
            }
            counts[name] = members.count
        }
        #expect(counts == [
            "Management": 1, "Design": 1, "Development": 3, "HR": 0, "Planning": 0, "Finance": 1, "Sales": 1,
            "Public Relation": 0,
        ])
        #expect(try context.count(entity: "Employee") == 8)
        let cho = try context.get(employees[6])
        #expect(cho["department"] == .null)
        let development = try #require(departments[3])
        #expect(try context.get(employees[0])["department"] == .object(development))
    }

    @Test("an object reads as the protocol's JSON: $id, $entity, $version, every property, IDs for relationships")
    func objectShape() throws {
        let fixture = ContextFixture()
        let context = fixture.context()
        let d = try context.insert(entity: "Department", values: ["name": "Design"])
        let e = try context.insert(
            entity: "Employee",
            values: ["name": "Kim", "age": 30, "salary": "5200.5", "hired": "2026-11-21T09:30:00.000Z", "department": "Department/1"])
        #expect(e.text(in: fixture.model) == "Employee/1")
        #expect(
            try context.get(e).json(in: fixture.model).serialized()
                == #"{"$id":"Employee/1","$entity":"Employee","$version":0,"name":"Kim","age":30,"address":null,"mood":"calm","salary":"5200.5","hired":"2026-11-21T09:30:00.000Z","badge":null,"department":"Department/1"}"#
        )
        #expect(
            try context.get(d).json(in: fixture.model).serialized()
                == #"{"$id":"Department/1","$entity":"Department","$version":0,"name":"Design","employees":["Employee/1"],"budget":null}"#)
        try context.save()
        let embedded = try context.get(d, include: ["employees"]).json(in: fixture.model)
        #expect(embedded["$version"] == 1)
        #expect(embedded["employees"]?.arrayValue?.first?["name"] == "Kim")
        #expect(try context.get(e, include: ["department"]).json(in: fixture.model)["department"]?["name"] == "Design")
        expectKeelError(.noSuchProperty) { _ = try context.get(e, include: ["boss"]) }
    }

    @Test("removing an employee from a department updates both sides, in the context and in the store")
    func removeEmployee() throws {
        let fixture = ContextFixture()
        let (departments, employees) = try fixture.importCompany()
        let development = try #require(departments[3])
        let context = fixture.context()
        try context.relate(development, relationship: "employees", remove: [employees[1]])
        #expect(try context.get(employees[1])["department"] == .null)
        #expect(try context.get(development)["employees"] == .objects([employees[0], employees[4]]))
        #expect(context.changes().updated == [employees[1], development].sorted())
        try context.save()
        let fresh = fixture.context()
        #expect(try fresh.get(employees[1])["department"] == .null)
        #expect(try fresh.get(development)["employees"] == .objects([employees[0], employees[4]]))
    }

    @Test("setting an employee's department moves it from the old department's employees to the new one's")
    func moveEmployee() throws {
        let fixture = ContextFixture()
        let (departments, employees) = try fixture.importCompany()
        let (development, hr) = (try #require(departments[3]), try #require(departments[4]))
        let context = fixture.context()
        try context.update(employees[0], values: ["department": .string(hr.text(in: fixture.model))])
        #expect(try context.get(hr)["employees"] == .objects([employees[0]]))
        #expect(try context.get(development)["employees"] == .objects([employees[1], employees[4]]))
        try context.save()
        #expect(try fixture.context().get(hr)["employees"] == .objects([employees[0]]))
    }

    @Test("fetching Person returns employees and students; includeSubentities false does not; Person cannot be inserted")
    func inheritance() throws {
        let fixture = ContextFixture()
        let context = fixture.context()
        let e1 = try context.insert(entity: "Employee", values: ["name": "Kim", "salary": "1"])
        let s1 = try context.insert(entity: "Student", values: ["name": "Han", "grade": 2, "course": "Math"])
        let e2 = try context.insert(entity: "Employee", values: ["name": "Lee", "salary": "2"])
        #expect(try context.fetch(entity: "Person").map(\.id) == [e1, e2, s1])
        #expect(try context.fetch(entity: "Person", includeSubentities: false).isEmpty)
        #expect(try context.count(entity: "Person") == 3)
        try context.save()
        #expect(try fixture.context().fetch(entity: "Person").map(\.id) == [e1, e2, s1])
        #expect(try fixture.context().count(entity: "Person", includeSubentities: false) == 0)
        #expect(try fixture.context().fetch(entity: "Student").map { $0["course"] } == [.string("Math")])
        let before = try ContextFixture.fingerprint(context)
        let error = expectKeelError(.badRequest) { try context.insert(entity: "Person", values: ["name": "X"]) }
        #expect(error?.message.contains("abstract") == true)
        #expect(try ContextFixture.fingerprint(context) == before)
    }

    @Test("a fetch sees pending changes: inserted objects match, deleted ones do not, updates match by new values")
    func fetchOverlay() throws {
        let fixture = ContextFixture(employeesRule: .nullify)
        let (_, employees) = try fixture.importCompany()
        let context = fixture.context()
        try context.delete(employees[0])
        try context.update(employees[2], values: ["age": 60])
        let new = try context.insert(entity: "Employee", values: ["name": "Ahn", "age": 45, "salary": "1"])
        let over40 = try context.fetch(entity: "Employee", filter: { (o) throws(KeelError) in
            if case .int(let age)? = o["age"] { return age > 40 }
            return false
        })
        #expect(over40.map(\.id) == [employees[1], employees[2], employees[5], new])
        #expect(try context.count(entity: "Employee") == 8)
        #expect(try context.count(entity: "Employee", filter: { (o) throws(KeelError) in o["name"] == .string("Kim") }) == 0)
        let page = try context.fetch(entity: "Employee", limit: 3, offset: 2).map(\.id)
        #expect(page == [employees[3], employees[4], employees[5]])
        #expect(try context.fetchIDs(entity: "Person").count == 8)
        var streamed = 0
        try context.fetch(entity: "Employee") { _ in
            streamed += 1
            return streamed < 2
        }
        #expect(streamed == 2)
        let inDevelopment = try context.fetch(entity: "Employee", filter: { (o) throws(KeelError) in
            try o.related("department")?["name"] == .string("Development")
        })
        #expect(inDevelopment.map(\.id) == [employees[1], employees[4]])
    }

    @Test("CHANGES lists inserted, updated and deleted objects; an object inserted and deleted appears in none")
    func changes() throws {
        let fixture = ContextFixture(employeesRule: .nullify)
        let (departments, employees) = try fixture.importCompany()
        let context = fixture.context()
        #expect(context.changes() == ContextChanges(hasChanges: false, inserted: [], updated: [], deleted: []))
        let temp = try context.insert(entity: "Employee", values: ["name": "Tmp", "salary": "1"])
        let kept = try context.insert(entity: "Employee", values: ["name": "New", "salary": "1"])
        try context.delete(temp)
        try context.update(employees[3], values: ["address": "Jeju"])
        let deleted = try context.delete(employees[5])
        #expect(deleted == [employees[5]])
        let finance = try #require(departments[6])
        let changes = context.changes()
        #expect(changes.hasChanges)
        #expect(changes.inserted == [kept])
        #expect(changes.updated == [employees[3], finance].sorted())
        #expect(changes.deleted == [employees[5]])
        #expect(context.pendingObjectCount == 4)
        #expect(
            changes.json(in: fixture.model).serialized()
                == #"{"hasChanges":true,"inserted":["Employee/10"],"updated":["Employee/4","Department/6"],"deleted":["Employee/6"]}"#)
        let result = try context.save()
        #expect(result.inserted == [kept])
        #expect(result.deleted == [employees[5]])
        #expect(fixture.store.state.rows[temp] == nil)
    }
}
