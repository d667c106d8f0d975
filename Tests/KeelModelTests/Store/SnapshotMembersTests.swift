// A saved object's to-many lists read together (`ObjectReader.members(of:fields:)`: one engine
// read of the object's store for a snapshot) against the same lists read field by field, on
// the project model's stores; and GET through a context, which reads them together only when
// none of the fields has pending changes: the same lists with and without pending changes.

import Foundation
import Testing

@testable import KeelModel

@Suite("Snapshot: to-many lists read together")
struct SnapshotMembersTests {
    @Test("members(of:fields:) gives each field's members(of:field:), in the order asked (ordered and unordered, empty, repeated); bad fields are refused")
    func togetherAgainstOneByOne() throws {
        let model = try TestModels.projectModel()
        var f = try StoreFixture(model: model)
        let companies = try (0..<2).map { _ in try f.new("Company") }
        let departments = try (0..<3).map { _ in try f.new("Department") }
        let employees = try (0..<5).map { _ in try f.new("Employee") }
        var changes: [Change] = []
        for (i, c) in companies.enumerated() { changes.append(.insert(c, values: f.values("Company", ["name": .string("C\(i)")]))) }
        for (i, d) in departments.enumerated() { changes.append(.insert(d, values: f.values("Department", ["name": .string("D\(i)")]))) }
        for (i, e) in employees.enumerated() {
            changes.append(.insert(e, values: f.values("Employee", ["name": .string("E\(i)"), "salary": .decimal(1), "company": .object(companies[0])])))
        }
        let departmentsField = model.field("Company", "departments"), employeesField = model.field("Department", "employees")
        for d in departments { changes.append(.add(companies[0], field: departmentsField, members: [d], at: nil)) }
        // An ordered list in an order that is not the IDs' order.
        for e in [employees[3], employees[0], employees[4]] { changes.append(.add(departments[0], field: employeesField, members: [e], at: nil)) }
        _ = try f.store.save(ChangeSet(changes: changes))
        try f.reopen()

        let snapshot = try f.store.snapshot()
        defer { snapshot.close() }
        for id in companies + departments {
            let fields = model[id.entity].toManyFields
            #expect(fields.count == 2)
            for asked in [fields, fields.reversed(), [fields[0], fields[0]], [fields[1]], []] {
                var oneByOne: [[ObjectID]] = []
                for field in asked { oneByOne.append(try snapshot.members(of: id, field: field)) }
                #expect(try snapshot.members(of: id, fields: asked) == oneByOne)
            }
        }
        #expect(try snapshot.members(of: departments[0], fields: [employeesField]) == [[employees[3], employees[0], employees[4]]])
        #expect(try snapshot.members(of: companies[0], fields: model[companies[0].entity].toManyFields).map(\.count) == [3, 5])
        let notToMany = try #require(model[companies[0].entity].field(named: "name"))
        #expect(keelError { _ = try snapshot.members(of: companies[0], fields: [departmentsField, notToMany]) }?.code == .noSuchProperty)
    }

    @Test("GET through a context: the lists read together when nothing is pending, field by field when one field has pending changes, the same as the store's")
    func contextGet() throws {
        let model = try TestModels.projectModel()
        let f = try StoreFixture(model: model)
        let company = try f.insert("Company", ["name": .string("Acme")])
        let context = ObjectContext(store: f.store)
        let companies: JSON = [.string(company.text(in: model))]
        let department = try context.insert(entity: "Department", values: ["name": "R&D", "code": 1, "companies": companies])
        let hire = try context.insert(entity: "Employee", values: ["name": "Kim", "salary": "1", "company": .string(company.text(in: model))])
        try context.save()
        let fresh = ObjectContext(store: f.store)
        let saved = try fresh.get(company)
        #expect(saved["departments"] == .objects([department]) && saved["employees"] == .objects([hire]))
        #expect(try fresh.get(department)["companies"] == .objects([company]))
        // Pending on one field: that list shows it, the other is the store's.
        let second = try fresh.insert(entity: "Department", values: ["name": "Ops", "companies": companies])
        let pending = try fresh.get(company)
        #expect(pending["departments"] == .objects([department, second].sorted()) && pending["employees"] == .objects([hire]))
        try fresh.delete(hire)
        #expect(try fresh.get(company)["employees"] == .objects([]))
        fresh.rollback()
        #expect(try fresh.get(company) == saved)
    }
}
