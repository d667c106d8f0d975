// The typed suite, batch requests: `KeelStore.batchInsert/batchUpdate/batchDelete` — one store
// transaction each, bypassing contexts, validated, inverses kept and delete rules applied — the
// same embedded (BatchCommands on the embedded store) and against keeld (BATCH.*).

import Foundation
import KeelClient
import KeelSampleModel
import Testing

@Suite("Typed batch requests")
struct TypedBatchTests {
    static func newEmployee(_ name: String, age: Int16, department: KeelID<Department>?, company: KeelID<Company>?) -> Employee {
        Employee(name: name, age: age, salary: Decimal(1000 + Int(age)), department: department, company: company)
    }

    @Test("batchInsert: one transaction, consecutive IDs in order, relationships and inverses as an insert's; the objects are left alone", arguments: BackendKind.allCases)
    func insert(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let seed = try await CompanySeed.insert(into: context)
            let design = try #require(seed.departments["Design"])
            let objects = (0..<5).map { Self.newEmployee("Batch \($0)", age: Int16(20 + $0), department: design, company: seed.company) }
            var events = try await store.changes(of: [Employee.self]).makeAsyncIterator()
            let result = try await store.batchInsert(objects)
            #expect(result.objectIDs.count == 5)
            #expect(zip(result.objectIDs, result.objectIDs.dropFirst()).allSatisfy { $1.objectID.number == $0.objectID.number + 1 })
            let txn = try #require(result.transaction)
            #expect(objects.allSatisfy { $0.objectID == nil }, "a batch does not insert the objects into a context")
            // Each ID is the object given at its position, with its values.
            for (i, id) in result.objectIDs.enumerated() {
                let e = try await context.get(id)
                #expect(e.name == "Batch \(i)" && e.age == Int16(20 + i) && e.salary == Decimal(1020 + i) && e.department == design)
            }
            // The inverse: Design has its one employee and the five.
            let members = try await context.fetchIDs(Employee.self, where: Employee.department == design).collect()
            #expect(Set(members) == Set(result.objectIDs + [seed.employees["Choi"]!]))
            // One event for the batch, listing the five.
            let event = try #require(try await events.next())
            #expect(event.txn == txn && event.inserted(of: Employee.self) == result.objectIDs)
            // Nothing to insert: no transaction.
            let none = try await store.batchInsert([Employee]())
            #expect(none.objectIDs.isEmpty && none.transaction == nil)
        }
    }

    @Test("batchInsert refusals: mixed entities, an inserted object, an invalid object — nothing written", arguments: BackendKind.allCases)
    func insertRefusals(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let seed = try await CompanySeed.insert(into: context)
            let before = try await context.count(Person.self)
            func refused(_ objects: [Person], _ code: KeelError.Code, _ text: String) async {
                do throws(KeelError) {
                    _ = try await store.batchInsert(objects)
                    Issue.record("the batch was taken")
                } catch {
                    #expect(error.code == code && error.message.contains(text), "\(error)")
                }
            }
            // Employees and a student: one entity per batch.
            await refused(
                [Self.newEmployee("A", age: 30, department: nil, company: nil), Student(name: "S", age: 15, grade: 9, course: "art")],
                .badRequest, "one entity")
            // An object already inserted (it has an ID).
            let kim = try await context.get(seed.employees["Kim"]!)
            await refused([kim], .badRequest, "inserted already")
            // A department without a company breaks Department.companies' minimum of 1: the batch
            // fails whole, the valid first department included.
            let good = Department(name: "Ops")
            good.addToCompanies(try await context.get(seed.company))
            do throws(KeelError) {
                _ = try await store.batchInsert([good, Department(name: "Lonely")])
                Issue.record("an invalid department was inserted")
            } catch {
                #expect(error.code == .validation, "\(error)")
            }
            #expect(try await context.count(Person.self) == before)
            #expect(try await context.count(Department.self, where: Department.name == "Ops") == 0)
        }
    }

    @Test("batchUpdate: the predicate's objects, attributes and to-ones (inverses follow), count of matched; nothing matched writes nothing", arguments: BackendKind.allCases)
    func update(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let seed = try await CompanySeed.insert(into: context)
            let hr = try #require(seed.departments["HR"])
            // Everyone over 40 (Park 45, Jung 52) gets a raise and moves to HR.
            let result = try await store.batchUpdate(Employee.self, where: Employee.age > 40, set: Employee.salary.to(9999), Employee.department.to(hr))
            #expect(result.count == 2)
            #expect(result.transaction != nil)
            try await context.refresh()
            for name in ["Park", "Jung"] {
                let e = try await context.get(seed.employees[name]!)
                #expect(e.salary == 9999 && e.department == hr, "\(name)")
            }
            #expect(try await context.get(seed.employees["Kim"]!).salary == Decimal(string: "5200.50")!)
            // The inverse: HR's members are Émile and the two.
            let members = try await context.fetchIDs(Employee.self, where: Employee.department == hr).collect()
            #expect(Set(members) == Set(["Émile", "Park", "Jung"].map { seed.employees[$0]! }))
            // nil clears; a text operator's argument travels as an argument.
            let cleared = try await store.batchUpdate(Employee.self, where: Employee.name.beginsWith("P"), set: Employee.address.to(nil))
            #expect(cleared.count == 1)
            try await context.refresh()
            #expect(try await context.get(seed.employees["Park"]!).address == nil)
            // Nothing matches: no transaction.
            let none = try await store.batchUpdate(Employee.self, where: Employee.age > 200, set: Employee.age.to(1))
            #expect(none.count == 0 && none.transaction == nil)
            // A value the attribute refuses fails the batch; nothing changes.
            do throws(KeelError) {
                _ = try await store.batchUpdate(Employee.self, set: Employee.name.to(nil))
                Issue.record("a required name was cleared")
            } catch {
                #expect(error.code == .validation, "\(error)")
            }
            #expect(try await context.count(Employee.self, where: Employee.name == nil) == 0)
        }
    }

    @Test("batchUpdate refusals: a key path, no assignment", arguments: BackendKind.allCases)
    func updateRefusals(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            _ = try await CompanySeed.insert(into: store.mainContext)
            do throws(KeelError) {
                _ = try await store.batchUpdate(Employee.self, set: Employee.department.name.to("Sales"))
                Issue.record("a key path was set")
            } catch {
                #expect(error.code == .badRequest && error.message.contains("department.name"), "\(error)")
            }
            do throws(KeelError) {
                _ = try await store.batchUpdate(Employee.self, where: Employee.age > 1)
                Issue.record("an update without values was sent")
            } catch {
                #expect(error.code == .badRequest, "\(error)")
            }
        }
    }

    @Test("a backend's batch call checks its arguments as keeld does: a missing objects, a predicate that is no string — BAD_REQUEST, nothing written", arguments: BackendKind.allCases)
    func backendArguments(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let backend = store.mainContext.backend
            for (command, arguments) in [
                ("BATCH.INSERT", ["entity": "Company"] as JSON), ("batch.delete", ["entity": "Company", "predicate": 5]),
                ("BATCH.UPDATE", ["entity": "Company", "predicate": "name == 'A'"]),
            ] {
                do throws(KeelError) {
                    let reply = try await backend.batch(command, arguments)
                    Issue.record("\(command) \(arguments.serialized()) was answered \(reply.serialized())")
                } catch {
                    #expect(error.code == .badRequest, "\(command): \(error)")
                }
            }
            #expect(try await store.mainContext.count(Company.self) == 0)
            // The same call with its arguments whole is answered.
            let reply = try await backend.batch("batch.insert", ["entity": "Company", "objects": [["name": "A"]]])
            #expect(reply["inserted"]?.intValue == 1, "\(reply.serialized())")
        }
    }

    @Test("batchDelete: delete rules applied — cascade counted, deny and an invalid nullify fail the whole batch", arguments: BackendKind.allCases)
    func delete(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let seed = try await CompanySeed.insert(into: context)
            // Department.employees is deny: Sales still has employees, so nothing is deleted.
            do throws(KeelError) {
                _ = try await store.batchDelete(Department.self, where: Department.name == "Sales")
                Issue.record("a department with employees was deleted")
            } catch {
                #expect(error.code == .deny, "\(error)")
            }
            #expect(try await context.count(Department.self) == 4)
            // Sales' employees (through a to-one key path), then Sales itself.
            let employees = try await store.batchDelete(Employee.self, where: Employee.department.name == "Sales")
            #expect(employees.count == 2 && employees.transaction != nil)
            let sales = try await store.batchDelete(Department.self, where: Department.name == "Sales")
            #expect(sales.count == 1)
            // The context keeps what it read until it refreshes (the batch bypassed it).
            #expect(try await context.count(Department.self) == 4)
            try await context.refresh()
            let left = try await context.count(Employee.self)
            let departments = try await context.count(Department.self)
            #expect(left == 4 && departments == 3, "\(left) employees, \(departments) departments")
            // Company.employees cascades: a company with two employees and no department goes with them.
            let beta = try await context.insert(Company(name: "Beta"))
            for name in ["B1", "B2"] {
                try await context.insert(Self.newEmployee(name, age: 40, department: nil, company: beta.objectID))
            }
            try await context.save()
            let cascade = try await store.batchDelete(Company.self, where: Company.name == "Beta")
            #expect(cascade.count == 3)
            try await context.refresh()
            #expect(try await context.count(Employee.self) == 4)
            // Acme's departments need a company (Department.companies, at least 1): deleting Acme
            // nullifies them into invalid objects, so the batch fails whole.
            do throws(KeelError) {
                _ = try await store.batchDelete(Company.self)
                Issue.record("the last company was deleted under its departments")
            } catch {
                #expect(error.code == .validation && error.message.contains("companies"), "\(error)")
            }
            try await context.refresh()
            #expect(try await context.count(Company.self) == 1)
            #expect(try await context.count(Employee.self) == 4)
            // Nothing to match.
            let none = try await store.batchDelete(Employee.self, where: Employee.age > 200)
            #expect(none.count == 0 && none.transaction == nil)
            _ = seed
        }
    }
}
