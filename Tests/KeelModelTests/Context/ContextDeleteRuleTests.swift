// Delete rules take effect in the context at DELETE (cascades and nullified inverses visible to
// the next read); `deny` is checked at SAVE (spec/protocol.md, "Contexts"; seeds 000 and 003).

import Testing

@testable import KeelModel

@Suite("Context delete rules")
struct ContextDeleteRuleTests {
    @Test("deleting a department under cascade deletes its employees, in the context at once and in the store")
    func cascade() throws {
        let fixture = ContextFixture(employeesRule: .cascade)
        let (departments, employees) = try fixture.importCompany()
        let development = try #require(departments[3])
        let context = fixture.context()
        let deleted = try context.delete(development)
        #expect(deleted.first == development)
        #expect(Set(deleted) == [development, employees[0], employees[1], employees[4]])
        expectKeelError(.notFound) { _ = try context.get(employees[0]) }
        #expect(try context.count(entity: "Employee") == 5)
        #expect(context.changes().deleted == [employees[0], employees[1], employees[4], development].sorted())
        try context.save()
        let rows = fixture.store.state.rows
        #expect(rows[development] == nil && rows[employees[0]] == nil && rows[employees[1]] == nil && rows[employees[4]] == nil)
        #expect(try fixture.context().count(entity: "Employee") == 5)
    }

    @Test("deleting a department under nullify leaves its employees with no department")
    func nullify() throws {
        let fixture = ContextFixture(employeesRule: .nullify)
        let (departments, employees) = try fixture.importCompany()
        let development = try #require(departments[3])
        let context = fixture.context()
        #expect(try context.delete(development) == [development])
        #expect(try context.get(employees[0])["department"] == .null)
        #expect(context.changes().updated == [employees[0], employees[1], employees[4]])
        try context.save()
        #expect(fixture.store.state.rows[employees[0]]?.values[CompanyModel.employeeDepartment] == .null)
        #expect(try fixture.context().get(employees[1])["department"] == .null)
        #expect(try fixture.context().count(entity: "Employee") == 8)
    }

    @Test("deleting a department under deny succeeds in the context but fails the save with DENY, writing nothing")
    func deny() throws {
        let fixture = ContextFixture(employeesRule: .deny)
        let (departments, employees) = try fixture.importCompany()
        let development = try #require(departments[3])
        let context = fixture.context()
        #expect(try context.delete(development) == [development])
        expectKeelError(.deny) { try context.save() }
        #expect(fixture.store.state.rows[development] != nil)
        #expect(try fixture.context().get(employees[0])["department"] == .object(development))
        #expect(context.changes().deleted == [development])
        // Empty the department first, then the delete is allowed.
        context.rollback()
        try context.relate(development, relationship: "employees", remove: [employees[0], employees[1], employees[4]])
        try context.delete(development)
        try context.save()
        #expect(fixture.store.state.rows[development] == nil)
        // An empty department under deny deletes at once.
        let hr = try #require(departments[4])
        try context.delete(hr)
        try context.save()
        #expect(fixture.store.state.rows[hr] == nil)
    }

    @Test("deny is judged at the end of the save: members deleted later in the same save do not block it")
    func denyAtEndOfSave() throws {
        let fixture = ContextFixture(employeesRule: .deny)
        let (departments, employees) = try fixture.importCompany()
        let development = try #require(departments[3])
        let context = fixture.context()
        // The department first, then its employees: the save is allowed, as the other order is.
        try context.delete(development)
        for employee in [employees[0], employees[1]] { try context.delete(employee) }
        expectKeelError(.deny) { try context.save() }
        try context.delete(employees[4])
        try context.save()
        #expect(fixture.store.state.rows[development] == nil)
        #expect(fixture.store.state.rows[employees[4]] == nil)
    }

    @Test("deleting a department under noAction leaves a dangling reference that reads as missing")
    func noAction() throws {
        let fixture = ContextFixture(employeesRule: .noAction)
        let (departments, employees) = try fixture.importCompany()
        let development = try #require(departments[3])
        let context = fixture.context()
        #expect(try context.delete(development) == [development])
        #expect(try context.get(employees[0])["department"] == .null)
        #expect(context.changes().updated.isEmpty)
        try context.save()
        #expect(fixture.store.state.rows[employees[0]]?.values[CompanyModel.employeeDepartment] == .object(development))
        let fresh = fixture.context()
        #expect(try fresh.get(employees[0])["department"] == .null)
        #expect(try fresh.get(employees[0]).json(in: fixture.model)["department"] == .null)
        let filtered = try fresh.fetch(entity: "Employee", filter: { (o) throws(KeelError) in o["department"] == .null })
        #expect(filtered.count == 4)
    }

    @Test("deleting an employee nullifies it out of its department's employees; deleting twice is NOT_FOUND")
    func deleteEmployee() throws {
        let fixture = ContextFixture()
        let (departments, employees) = try fixture.importCompany()
        let development = try #require(departments[3])
        let context = fixture.context()
        try context.delete(employees[1])
        #expect(try context.get(development)["employees"] == .objects([employees[0], employees[4]]))
        expectKeelError(.notFound) { try context.delete(employees[1]) }
        try context.save()
        #expect(try fixture.context().get(development)["employees"] == .objects([employees[0], employees[4]]))
    }
}
