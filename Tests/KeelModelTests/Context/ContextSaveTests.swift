// SAVE, ROLLBACK, REFRESH and the snapshot a context reads.

import Testing

@testable import KeelModel

@Suite("Context saves")
struct ContextSaveTests {
    @Test("two contexts change the same object: under error the second save fails with both versions, writing nothing")
    func conflict() throws {
        let fixture = ContextFixture()
        let (_, employees) = try fixture.importCompany()
        let first = fixture.context()
        let second = fixture.context()
        try first.update(employees[0], values: ["salary": "9000"])
        try second.update(employees[0], values: ["age": 31])
        try first.save()
        let error = expectKeelError(.conflict) { try second.save() }
        let conflict = error?.details?["conflicts"]?.arrayValue?.first
        #expect(conflict?["object"] == "Employee/1")
        #expect(conflict?["snapshotVersion"] == 1)
        #expect(conflict?["storeVersion"] == 2)
        #expect(fixture.store.state.rows[employees[0]]?.values[CompanyModel.age] == .int(30))
        #expect(second.changes().updated == [employees[0]])
        #expect(fixture.store.received.last?.1 == .error)
        // Under another policy the store gets the policy and the context's originals.
        second.mergePolicy = .objectTrumps
        try second.save()
        #expect(fixture.store.received.last?.1 == .objectTrumps)
        #expect(fixture.store.received.last?.0.originals[employees[0]]?.version == 1)
    }

    @Test("five validation failures are reported together; nothing is written; fix one, still failing; fix all, saved")
    func validation() throws {
        let fixture = ContextFixture()
        let context = fixture.context()
        let d = try context.insert(entity: "Department", values: [:])
        let e1 = try context.insert(entity: "Employee", values: [:])
        let e2 = try context.insert(entity: "Employee", values: ["name": "Lee", "salary": "1", "age": 151])
        let e3 = try context.insert(entity: "Student", values: ["name": "Han"])
        try context.update(e3, values: ["age": .int(-1)])
        let changes = context.changes()
        let error = expectKeelError(.validation) { try context.save() }
        let failures = error?.details?.arrayValue ?? []
        #expect(failures.count == 5)
        let found = Set(failures.map { "\($0["$id"]?.stringValue ?? "").\($0["property"]?.stringValue ?? ""):\($0["rule"]?.stringValue ?? "")" })
        #expect(found == [
            "Department/1.name:required", "Employee/1.name:required", "Employee/1.salary:required", "Employee/2.age:maxValue",
            "Student/1.age:minValue",
        ])
        #expect(fixture.store.state.rows.isEmpty)
        #expect(context.changes() == changes)
        try context.update(d, values: ["name": "Design"])
        let again = expectKeelError(.validation) { try context.save() }
        #expect(again?.details?.arrayValue?.count == 4)
        try context.update(e1, values: ["name": "Kim", "salary": "2"])
        try context.update(e2, values: ["age": 40])
        try context.update(e3, values: ["age": 20])
        let result = try context.save()
        #expect(result.inserted == [d, e1, e2, e3].sorted())
        #expect(fixture.store.state.rows.count == 4)
        #expect(!context.changes().hasChanges)
    }

    @Test("transient attributes are kept in the context and never reach the store")
    func transients() throws {
        let fixture = ContextFixture()
        let (_, employees) = try fixture.importCompany()
        let context = fixture.context()
        let e = try context.insert(entity: "Employee", values: ["name": "Ahn", "salary": "1", "mood": "happy"])
        #expect(try context.get(e)["mood"] == .string("happy"))
        try context.update(employees[0], values: ["mood": "tired"])
        #expect(try context.get(employees[0])["mood"] == .string("tired"))
        #expect(context.changes().updated.isEmpty)
        try context.save()
        for (changes, _) in fixture.store.received {
            for change in changes.changes.map(MemoryStore.insertAsValues) {
                switch change {
                case .insert(let id, let values):
                    #expect(values[CompanyModel.mood] == nil, "transient in the insert of \(id)")
                case .set(_, let field, _): #expect(field != CompanyModel.mood)
                default: break
                }
            }
        }
        #expect(fixture.store.state.rows[e]?.values[CompanyModel.mood] == .null)
        #expect(try context.get(e)["mood"] == .string("happy"))
        #expect(try fixture.context().get(e)["mood"] == .string("calm"))
        context.rollback()
        #expect(try context.get(employees[0])["mood"] == .string("calm"))
    }

    @Test("rollback drops every pending change and the next read takes a new snapshot")
    func rollback() throws {
        let fixture = ContextFixture(employeesRule: .cascade)
        let (departments, employees) = try fixture.importCompany()
        let context = fixture.context()
        let before = try ContextFixture.fingerprint(context)
        try context.insert(entity: "Department", values: ["name": "Legal"])
        try context.update(employees[6], values: ["age": 24])
        try context.delete(try #require(departments[3]))
        #expect(context.pendingObjectCount == 6)
        let other = fixture.context()
        try other.update(employees[7], values: ["address": "Jeju"])
        try other.save()
        context.rollback()
        #expect(!context.changes().hasChanges && context.pendingObjectCount == 0)
        #expect(!context.hasSnapshot)
        let after = try ContextFixture.fingerprint(context)
        #expect(after != before)
        #expect(try context.get(employees[7])["address"] == .string("Jeju"))
        #expect(after == before.replacingOccurrences(of: #""address":"Suwon""#, with: #""address":"Jeju""#).replacingOccurrences(
            of: #"Employee/8","$entity":"Employee","$version":1"#, with: #"Employee/8","$entity":"Employee","$version":2"#))
        #expect(fixture.store.openSnapshots == 1)
    }

    @Test("a context reads one snapshot until refresh, which keeps its pending changes")
    func refresh() throws {
        let fixture = ContextFixture()
        let (_, employees) = try fixture.importCompany()
        let context = fixture.context()
        #expect(try context.get(employees[0])["age"] == .int(30))
        let mine = try context.insert(entity: "Student", values: ["name": "Han"])
        try context.update(employees[1], values: ["address": "Jeju"])
        let other = fixture.context()
        try other.update(employees[0], values: ["age": 31])
        try other.insert(entity: "Employee", values: ["name": "Ahn", "salary": "1"])
        try other.save()
        #expect(try context.get(employees[0])["age"] == .int(30))
        #expect(try context.count(entity: "Employee") == 8)
        context.refresh()
        #expect(try context.get(employees[0])["age"] == .int(31))
        #expect(try context.count(entity: "Employee") == 9)
        #expect(try context.get(mine)["name"] == .string("Han"))
        #expect(try context.get(employees[1])["address"] == .string("Jeju"))
        try context.save()
        #expect(fixture.store.state.rows[employees[1]]?.values[CompanyModel.address] == .string("Jeju"))
    }

    @Test("after a save the context is clean and its next read takes a new snapshot")
    func saveTakesNewSnapshot() throws {
        let fixture = ContextFixture()
        try fixture.importCompany()
        let context = fixture.context()
        #expect(try context.count(entity: "Department") == 8)
        let other = fixture.context()
        try other.insert(entity: "Department", values: ["name": "Legal"])
        try other.save()
        #expect(try context.count(entity: "Department") == 8)
        let result = try context.save()
        #expect(result.saveID == nil)
        #expect(try context.count(entity: "Department") == 9)
        #expect(fixture.store.openSnapshots == 1)
    }

    @Test("a command that would exceed the pending-object limit fails with LIMIT and changes nothing")
    func pendingLimit() throws {
        let fixture = ContextFixture(employeesRule: .cascade)
        let (departments, _) = try fixture.importCompany()
        let context = fixture.context()
        context.pendingObjectLimit = 3
        try context.insert(entity: "Department", values: ["name": "Legal"])
        let before = try ContextFixture.fingerprint(context)
        expectKeelError(.limit) { try context.delete(try #require(departments[3])) }
        #expect(try ContextFixture.fingerprint(context) == before)
        try context.delete(try #require(departments[4]))
        #expect(context.pendingObjectCount == 2)
    }
}
