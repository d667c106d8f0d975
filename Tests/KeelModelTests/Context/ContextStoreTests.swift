// Contexts on the real ObjectStore (in-memory file system) with the project's model,
// config/model.json: the tutorials' flows end to end, delete rules, conflicts and every merge
// policy property by property, validation, transients, child contexts. Every test ends with the
// store's verifier.

import Foundation
import Testing

@testable import KeelModel

@Suite("Contexts on the object store")
struct ContextStoreTests {
    /// config/model.json, with `Department.employees`'s delete rule replaced when asked.
    static func model(employeesRule: DeleteRule? = nil) throws -> Model {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        var text = try String(contentsOfFile: root.appendingPathComponent("config/model.json").path, encoding: .utf8)
        if let rule = employeesRule {
            let declared = #""toMany": true, "ordered": true, "deleteRule": "deny" }"#
            #expect(text.contains(declared), "config/model.json changed: Department.employees")
            text = text.replacingOccurrences(of: declared, with: #""toMany": true, "ordered": true, "deleteRule": "\#(rule.rawValue)" }"#)
        }
        return try ModelLoader.load(text: text)
    }

    struct Company {
        let company: ObjectID
        let departments: [Int: ObjectID]
        let employees: [ObjectID]
    }

    /// The tutorial import: a company, its departments and employees (department 0 = none).
    @discardableResult
    static func importCompany(_ store: ObjectStore) throws -> Company {
        let context = ObjectContext(store: store)
        let company = try context.insert(entity: "Company", values: ["name": "Keel Inc."])
        let companyText = JSON.string(company.text(in: store.model))
        var departments: [Int: ObjectID] = [:]
        for (number, name) in ContextFixture.departments {
            departments[number] = try context.insert(
                entity: "Department", values: ["name": .string(name), "code": .int(Int64(number)), "companies": [companyText]])
        }
        var employees: [ObjectID] = []
        for (name, age, address, salary, department) in ContextFixture.employees {
            var values: [String: JSON] = [
                "name": .string(name), "age": .int(age), "address": .string(address), "salary": .string(salary),
                "company": companyText,
            ]
            if let id = departments[department] { values["department"] = .string(id.text(in: store.model)) }
            employees.append(try context.insert(entity: "Employee", values: .object(.init(uniqueKeysWithValues: values.sorted { $0.key < $1.key }))))
        }
        let result = try context.save()
        #expect(result.inserted.count == 17)
        return Company(company: company, departments: departments, employees: employees)
    }

    func employeeCount(_ object: ManagedObject) -> Int {
        if case .objects(let ids)? = object["employees"] { return ids.count }
        return -1
    }

    @Test("the tutorial import: departments with employee counts, read back after the store reopens")
    func importAndList() throws {
        var fixture = try StoreFixture(model: Self.model())
        let imported = try Self.importCompany(fixture.store)
        try fixture.reopen()
        let context = ObjectContext(store: fixture.store)
        var counts: [String: Int] = [:]
        for department in try context.fetch(entity: "Department") {
            if case .string(let name)? = department["name"] { counts[name] = employeeCount(department) }
        }
        #expect(counts == [
            "Management": 1, "Design": 1, "Development": 3, "HR": 0, "Planning": 0, "Finance": 1, "Sales": 1,
            "Public Relation": 0,
        ])
        let development = try #require(imported.departments[3])
        #expect(try context.get(development)["employees"] == .objects([imported.employees[0], imported.employees[1], imported.employees[4]]))
        #expect(try context.get(imported.employees[0]).json(in: fixture.model)["$version"] == 1)
        #expect(try context.count(entity: "Person") == 8)
        try fixture.expectConsistent()
    }

    @Test("an insert of attributes alone takes no snapshot, so it pins nothing; one naming a relationship, and any read, does")
    func snapshotAtFirstRead() throws {
        let fixture = try StoreFixture(model: Self.model())
        let company = try Self.importCompany(fixture.store)
        let context = ObjectContext(store: fixture.store)
        let uuid = "6f1c2a8e-3b7d-4e59-9a0c-1d2e3f405162"
        try context.insert(entity: "Computer", values: ["id": .string(uuid), "model": "X1"])
        try context.insert(entity: "Computer", typedValues: ["id": .uuid(UUID(uuidString: uuid)!), "model": .string("X2")])
        #expect(!context.hasSnapshot)
        try context.save()
        #expect(!context.hasSnapshot)
        try context.insert(entity: "Computer", values: ["id": .string(uuid), "owner": .string(company.employees[0].text(in: fixture.model))])
        #expect(context.hasSnapshot, "naming a relationship reads its target")
        try context.save()
        _ = try context.get(company.company)
        #expect(context.hasSnapshot)
        // The saves wrote all three.
        #expect(try context.count(entity: "Computer") == 3)
        try fixture.expectConsistent()
    }

    @Test("removing an employee from a department updates both sides in the store")
    func removeEmployee() throws {
        let fixture = try StoreFixture(model: Self.model())
        let imported = try Self.importCompany(fixture.store)
        let development = try #require(imported.departments[3])
        let context = ObjectContext(store: fixture.store)
        try context.relate(development, relationship: "employees", remove: [imported.employees[1]])
        try context.save()
        let fresh = ObjectContext(store: fixture.store)
        #expect(try fresh.get(imported.employees[1])["department"] == .null)
        #expect(try fresh.get(development)["employees"] == .objects([imported.employees[0], imported.employees[4]]))
        try fixture.expectConsistent()
    }

    @Test("deleting a department under each delete rule", arguments: DeleteRule.allCases)
    func deleteRules(_ rule: DeleteRule) throws {
        let fixture = try StoreFixture(model: Self.model(employeesRule: rule))
        let imported = try Self.importCompany(fixture.store)
        let development = try #require(imported.departments[3])
        let staff = [imported.employees[0], imported.employees[1], imported.employees[4]]
        let context = ObjectContext(store: fixture.store)
        let deleted = try context.delete(development)
        switch rule {
        case .cascade:
            #expect(Set(deleted) == Set(staff + [development]))
            try context.save()
            let fresh = ObjectContext(store: fixture.store)
            for id in staff { #expect(throws: KeelError.self) { try fresh.get(id) } }
            #expect(try fresh.count(entity: "Employee") == 5)
        case .nullify:
            #expect(deleted == [development])
            try context.save()
            let fresh = ObjectContext(store: fixture.store)
            for id in staff { #expect(try fresh.get(id)["department"] == .null) }
        case .deny:
            #expect(deleted == [development])
            expectKeelError(.deny) { try context.save() }
            let fresh = ObjectContext(store: fixture.store)
            #expect(try fresh.get(development)["name"] == .string("Development"))
            #expect(try fresh.get(staff[0])["department"] == .object(development))
            #expect(context.changes().deleted == [development])
        case .noAction:
            #expect(deleted == [development])
            #expect(try context.get(staff[0])["department"] == .null)
            try context.save()
            let fresh = ObjectContext(store: fixture.store)
            #expect(try fixture.value(staff[0], "department") == .object(development))
            #expect(try fresh.get(staff[0])["department"] == .null)
            #expect(try fresh.get(staff[0]).json(in: fixture.model)["department"] == .null)
        }
        if rule != .noAction { try fixture.expectConsistent() }
    }

    struct PolicyCase: Sendable, CustomTestStringConvertible {
        let policy: MergePolicy
        let name: String
        let age: Int64
        let salary: String
        var testDescription: String { policy.rawValue }
    }

    // Saved: (Kim, 30, 5200.5). Context B read it; context A then saved age 31 and salary 200;
    // B changed name and salary and saves under the policy (Docs/Contexts.md, "Saving").
    static let policyCases: [PolicyCase] = [
        PolicyCase(policy: .storeTrumps, name: "Lee", age: 31, salary: "200"),
        PolicyCase(policy: .objectTrumps, name: "Lee", age: 31, salary: "300"),
        PolicyCase(policy: .overwrite, name: "Lee", age: 30, salary: "300"),
        PolicyCase(policy: .rollback, name: "Kim", age: 31, salary: "200"),
    ]

    @Test("two contexts change one employee: each merge policy, property by property", arguments: policyCases)
    func policies(_ expected: PolicyCase) throws {
        let fixture = try StoreFixture(model: Self.model())
        let kim = try Self.importCompany(fixture.store).employees[0]
        let a = ObjectContext(store: fixture.store)
        let b = ObjectContext(store: fixture.store, mergePolicy: expected.policy)
        #expect(try b.get(kim)["age"] == .int(30))
        try a.update(kim, values: ["age": 31, "salary": "200"])
        try a.save()
        try b.update(kim, values: ["name": "Lee", "salary": "300"])
        try b.save()
        let object = try ObjectContext(store: fixture.store).get(kim).json(in: fixture.model)
        #expect(object["name"] == .string(expected.name))
        #expect(object["age"] == .int(expected.age))
        #expect(object["salary"] == .string(expected.salary))
        try fixture.expectConsistent()
    }

    @Test("under error the second save fails listing both versions, writes nothing, and keeps the context's changes")
    func conflict() throws {
        let fixture = try StoreFixture(model: Self.model())
        let kim = try Self.importCompany(fixture.store).employees[0]
        let a = ObjectContext(store: fixture.store)
        let b = ObjectContext(store: fixture.store)
        try a.update(kim, values: ["age": 31])
        try b.update(kim, values: ["address": "Jeju"])
        try a.save()
        let error = expectKeelError(.conflict) { try b.save() }
        let conflict = error?.details?["conflicts"]?.arrayValue?.first
        #expect(conflict?["object"] == .string(kim.text(in: fixture.model)))
        #expect(conflict?["snapshotVersion"] == 1)
        #expect(conflict?["storeVersion"] == 2)
        #expect(try fixture.value(kim, "address") == .string("Seoul"))
        #expect(b.changes().updated == [kim])
        b.refresh()
        b.mergePolicy = .objectTrumps
        try b.save()
        #expect(try fixture.value(kim, "address") == .string("Jeju"))
        #expect(try fixture.value(kim, "age") == .int(31))
    }

    @Test("five validation failures reported at once; nothing written; fix one and retry; fix all and save")
    func validation() throws {
        let fixture = try StoreFixture(model: Self.model())
        _ = try Self.importCompany(fixture.store)
        let context = ObjectContext(store: fixture.store)
        let e = try context.insert(entity: "Employee", values: ["name": "Ahn", "age": 151, "gender": "robot"])
        let s = try context.insert(entity: "Student", values: ["name": "", "grade": 13])
        let lastSave = fixture.store.lastSaveID
        let error = expectKeelError(.validation) { try context.save() }
        let failures = error?.details?["failures"]?.arrayValue ?? []
        let found = Set(failures.map { "\($0["object"]?.stringValue ?? "").\($0["property"]?.stringValue ?? "")" })
        #expect(failures.count == 5, "\(failures.map { $0.serialized() })")
        #expect(found == [
            "\(e.text(in: fixture.model)).salary", "\(e.text(in: fixture.model)).age", "\(e.text(in: fixture.model)).gender",
            "\(s.text(in: fixture.model)).name", "\(s.text(in: fixture.model)).grade",
        ])
        #expect(fixture.store.lastSaveID == lastSave)
        #expect(context.changes().inserted == [e, s])
        try context.update(e, values: ["salary": "10"])
        let again = expectKeelError(.validation) { try context.save() }
        #expect(again?.details?["failures"]?.arrayValue?.count == 4)
        try context.update(e, values: ["age": 40, "gender": "other"])
        try context.update(s, values: ["name": "Han", "grade": 3])
        try context.save()
        #expect(try fixture.value(s, "grade") == .int(3))
        try fixture.expectConsistent()
    }

    @Test("transient attributes never reach the store")
    func transients() throws {
        var fixture = try StoreFixture(model: Self.model())
        let context = ObjectContext(store: fixture.store)
        let book = try context.insert(
            entity: "Book", values: ["uuid": "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "title": "Keel", "isSelected": true])
        try context.save()
        #expect(try context.get(book)["isSelected"] == .bool(true))
        #expect(try fixture.value(book, "isSelected") == .null)
        try fixture.reopen()
        #expect(try ObjectContext(store: fixture.store).get(book)["isSelected"] == .bool(false))
    }

    @Test("inheritance: Person returns employees and students; includeSubentities false does not; Person is refused")
    func inheritance() throws {
        let fixture = try StoreFixture(model: Self.model())
        try Self.importCompany(fixture.store)
        let context = ObjectContext(store: fixture.store)
        try context.insert(entity: "Student", values: ["name": "Han", "grade": 2])
        try context.save()
        #expect(try context.fetch(entity: "Person").count == 9)
        #expect(try context.fetch(entity: "Person").filter { $0.entity.name == "Student" }.count == 1)
        #expect(try context.count(entity: "Person", includeSubentities: false) == 0)
        expectKeelError(.badRequest) { try context.insert(entity: "Person", values: ["name": "X"]) }
    }

    @Test("a child context saves into its parent, then the parent saves into the store")
    func childContext() throws {
        let fixture = try StoreFixture(model: Self.model(employeesRule: .nullify))
        let imported = try Self.importCompany(fixture.store)
        let parent = ObjectContext(store: fixture.store)
        let child = ObjectContext(parent: parent)
        let hr = try #require(imported.departments[4])
        let hire = try child.insert(
            entity: "Employee", values: ["name": "Ahn", "salary": "1", "department": .string(hr.text(in: fixture.model))])
        try child.delete(try #require(imported.departments[6]))
        let lastSave = fixture.store.lastSaveID
        try child.save()
        #expect(fixture.store.lastSaveID == lastSave)
        #expect(try parent.get(hr)["employees"] == .objects([hire]))
        try parent.save()
        let fresh = ObjectContext(store: fixture.store)
        #expect(try fresh.get(hire)["department"] == .object(hr))
        #expect(try fresh.get(imported.employees[5])["department"] == .null)
        try fixture.expectConsistent()
    }

    @Test("rollback and refresh against the store")
    func rollbackAndRefresh() throws {
        let fixture = try StoreFixture(model: Self.model())
        let imported = try Self.importCompany(fixture.store)
        let context = ObjectContext(store: fixture.store)
        #expect(try context.get(imported.employees[0])["age"] == .int(30))
        let pending = try context.insert(entity: "Student", values: ["name": "Han"])
        let other = ObjectContext(store: fixture.store)
        try other.update(imported.employees[0], values: ["age": 33])
        try other.save()
        #expect(try context.get(imported.employees[0])["age"] == .int(30))
        context.refresh()
        #expect(try context.get(imported.employees[0])["age"] == .int(33))
        #expect(try context.get(pending)["name"] == .string("Han"))
        context.rollback()
        expectKeelError(.notFound) { _ = try context.get(pending) }
        #expect(!context.changes().hasChanges)
    }
}
