// Child contexts: they read their parent's current state, save into the parent (which replays
// their change log through GraphRules), and resolve conflicts with the parent by their own merge
// policy, property by property.

import Testing

@testable import KeelModel

@Suite("Child contexts")
struct ChildContextTests {
    @Test("a child saves into its parent (not the store); the parent's save then writes everything")
    func saveIntoParent() throws {
        let fixture = ContextFixture(employeesRule: .cascade)
        let (departments, employees) = try fixture.importCompany()
        let parent = fixture.context()
        let parentInsert = try parent.insert(entity: "Department", values: ["name": "Legal"])
        let child = ObjectContext(parent: parent)
        #expect(try child.get(parentInsert)["name"] == .string("Legal"))
        let hire = try child.insert(
            entity: "Employee", values: ["name": "Ahn", "salary": "1", "department": .string(parentInsert.text(in: fixture.model))])
        try child.update(employees[0], values: ["age": 31, "mood": "proud"])
        try child.delete(try #require(departments[6]))
        #expect(try parent.get(parentInsert)["employees"] == .objects([]))
        expectKeelError(.notFound) { _ = try parent.get(hire) }
        let received = fixture.store.received.count
        let result = try child.save()
        #expect(result.saveID == nil)
        #expect(result.inserted == [hire])
        #expect(fixture.store.received.count == received)
        #expect(!child.changes().hasChanges)
        #expect(try parent.get(parentInsert)["employees"] == .objects([hire]))
        #expect(try parent.get(employees[0])["age"] == .int(31))
        #expect(try parent.get(employees[0])["mood"] == .string("proud"))
        expectKeelError(.notFound) { _ = try parent.get(employees[5]) }
        let changes = parent.changes()
        #expect(changes.inserted == [hire, parentInsert].sorted())
        #expect(changes.deleted == [employees[5], try #require(departments[6])].sorted())
        try parent.save()
        let fresh = fixture.context()
        #expect(try fresh.get(hire)["department"] == .object(parentInsert))
        #expect(try fresh.get(employees[0])["age"] == .int(31))
        #expect(fixture.store.state.rows[employees[5]] == nil)
        #expect(try child.get(hire)["name"] == .string("Ahn"))
    }

    @Test("a child's save that meets a parent's delete fails under error; the parent is unchanged, the child keeps its changes")
    func failedReplay() throws {
        let fixture = ContextFixture(employeesRule: .nullify)
        let (departments, employees) = try fixture.importCompany()
        let parent = fixture.context()
        let child = ObjectContext(parent: parent)
        let design = try #require(departments[2])
        try child.relate(design, relationship: "employees", add: [employees[0]])
        try child.insert(entity: "Department", values: ["name": "Legal"])
        try parent.delete(employees[0])
        let before = try ContextFixture.fingerprint(parent)
        let error = expectKeelError(.conflict) { try child.save() }
        #expect(error?.details?["conflicts"]?.arrayValue?.count == 1)
        #expect(error?.details?["conflictCount"]?.intValue == 1)
        #expect(error?.message == "1 object(s) changed in the parent context since this context read them: \(employees[0].text(in: fixture.model)) (deleted there)")
        #expect(try ContextFixture.fingerprint(parent) == before)
        #expect(child.changes().inserted.count == 1)
    }

    @Test("a child's save that meets 150 objects the parent changed: CONFLICT with the first 100, conflictCount 150 and a short message")
    func manyConflicts() throws {
        let fixture = ContextFixture(employeesRule: .nullify)
        let parent = fixture.context()
        var ids: [ObjectID] = []
        for i in 0..<150 { ids.append(try parent.insert(entity: "Department", values: ["name": .string("D\(i)")])) }
        let child = ObjectContext(parent: parent)
        for (i, id) in ids.enumerated() { try child.update(id, values: ["name": .string("child \(i)")]) }
        for (i, id) in ids.enumerated() { try parent.update(id, values: ["name": .string("parent \(i)")]) }
        let error = expectKeelError(.conflict) { try child.save() }
        let conflicts = error?.details?["conflicts"]?.arrayValue ?? []
        #expect(conflicts.count == ProblemReport.detailLimit)
        #expect(conflicts.first?["object"] == .string(ids[0].text(in: fixture.model)))
        #expect(conflicts.first?["context"]?["name"] == "child 0" && conflicts.first?["parent"]?["name"] == "parent 0")
        #expect(error?.details?["conflictCount"]?.intValue == 150)
        let message = error?.message ?? ""
        #expect(message.hasPrefix("150 object(s) changed in the parent context since this context read them: \(ids[0].text(in: fixture.model)), "), "\(message)")
        #expect(message.hasSuffix(", … and 145 more"), "\(message)")
    }

    struct PolicyCase: Sendable, CustomTestStringConvertible {
        let policy: MergePolicy
        /// name, age, salary of the employee in the parent after the child's save.
        let name: String
        let age: Int64
        let salary: String
        var testDescription: String { policy.rawValue }
    }

    // The employee is saved as (Kim, 30, 5200.5). The child changes name and salary; then the
    // parent changes age and salary; then the child saves.
    static let policyCases: [PolicyCase] = [
        PolicyCase(policy: .objectTrumps, name: "Lee", age: 31, salary: "300"),
        PolicyCase(policy: .storeTrumps, name: "Lee", age: 31, salary: "200"),
        PolicyCase(policy: .overwrite, name: "Lee", age: 30, salary: "300"),
        PolicyCase(policy: .rollback, name: "Kim", age: 31, salary: "200"),
    ]

    @Test("conflicts between a child and its parent resolve property by property per the child's policy", arguments: policyCases)
    func policies(_ expected: PolicyCase) throws {
        let fixture = ContextFixture()
        let (_, employees) = try fixture.importCompany()
        let kim = employees[0]
        let parent = fixture.context()
        let child = ObjectContext(parent: parent, mergePolicy: expected.policy)
        try child.update(kim, values: ["name": "Lee", "salary": "300"])
        try parent.update(kim, values: ["age": 31, "salary": "200"])
        #expect(try child.get(kim)["age"] == .int(30))
        try child.save()
        let merged = try parent.get(kim).json(in: fixture.model)
        #expect(merged["name"] == .string(expected.name))
        #expect(merged["age"] == .int(expected.age))
        #expect(merged["salary"] == .string(expected.salary))
        try parent.save()
        #expect(try fixture.context().get(kim).json(in: fixture.model)["name"] == .string(expected.name))
    }

    @Test("under error a conflict with the parent fails the child's save listing both versions; nothing changes")
    func errorPolicy() throws {
        let fixture = ContextFixture()
        let (_, employees) = try fixture.importCompany()
        let parent = fixture.context()
        let child = ObjectContext(parent: parent)
        try child.update(employees[0], values: ["name": "Lee"])
        try parent.update(employees[0], values: ["age": 31])
        let before = try ContextFixture.fingerprint(parent)
        let error = expectKeelError(.conflict) { try child.save() }
        let conflict = error?.details?["conflicts"]?.arrayValue?.first
        #expect(conflict?["original"]?["age"] == 30)
        #expect(conflict?["parent"]?["age"] == 31)
        #expect(conflict?["context"]?["name"] == "Lee")
        #expect(try ContextFixture.fingerprint(parent) == before)
        #expect(child.changes().updated == [employees[0]])
        // The child takes the parent's change in (rollback, redo) and saves.
        child.rollback()
        try child.update(employees[0], values: ["name": "Lee"])
        try child.save()
        #expect(try parent.get(employees[0])["age"] == .int(31))
        #expect(try parent.get(employees[0])["name"] == .string("Lee"))
    }
}
