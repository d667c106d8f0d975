// The typed suite, relationships: to-ones as typed IDs, to-many accessors (addToEmployees,
// removeFromEmployees, insertIntoEmployees on an ordered one) sent as RELATE, objects related
// before they are inserted, relationship edits by ID, `including:` embedded objects, and the four
// delete rules with what each leaves behind.

import Foundation
import KeelClient
import KeelSampleModel
import Testing

@Suite("Typed relationships")
struct TypedRelationshipTests {
    @Test("to-many accessors become RELATE adds and removes; inverses follow", arguments: BackendKind.allCases)
    func accessors(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let seed = try await CompanySeed.insert(into: store.mainContext)
            let recorder = RecordingBackend(store.mainContext.backend)
            let context = KeelStore(main: recorder, close: {}).mainContext
            let design = try await context.get(seed.departments["Design"]!)
            let lee = try await context.get(seed.employees["Lee"]!)
            let choi = try await context.get(seed.employees["Choi"]!)
            #expect(design.employees == [choi.objectID!])
            recorder.reset()
            design.addToEmployees(lee)
            design.removeFromEmployees(choi)
            try await context.update(design)
            #expect(recorder.calls == [#"RELATE \#(design.objectID!) employees add ["\#(lee.objectID!)"] remove ["\#(choi.objectID!)"]"#])
            // The inverse to-ones follow in the context.
            #expect(try await context.get(lee.objectID!).department == design.objectID)
            #expect(try await context.get(choi.objectID!).department == nil)
            // Order of an ordered to-many: a member placed first is re-sent from there.
            let kim = try await context.get(seed.employees["Kim"]!)
            design.insertIntoEmployees(kim, at: 0)
            recorder.reset()
            try await context.update(design)
            #expect(recorder.calls == [#"RELATE \#(design.objectID!) employees add ["\#(kim.objectID!)", "\#(lee.objectID!)"] remove ["\#(lee.objectID!)"]"#])
            #expect(try await context.get(design.objectID!).employees == [kim.objectID!, lee.objectID!])
            try await context.save()
            #expect(try await store.mainContext.get(seed.departments["Sales"]!).employees == [seed.employees["Jung"]!])
        }
    }

    @Test("objects related before they are inserted are sent once they are", arguments: BackendKind.allCases)
    func relatedBeforeInsert(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let acme = Company(name: "Acme")
            let ops = Department(name: "Ops")
            ops.addToCompanies(acme)
            let error = await #expect(throws: KeelError.self) { _ = try await context.insert(ops) }
            #expect(error?.code == .badRequest)
            #expect(error?.message.contains("not inserted yet") == true)
            try await context.insert(acme)
            try await context.insert(ops)
            try await context.save()
            let read = try await context.get(try #require(acme.objectID))
            #expect(read.departments == [try #require(ops.objectID)])
        }
    }

    @Test("relationship edits by ID, to-ones by typed ID, and embedded objects with including:", arguments: BackendKind.allCases)
    func byIDAndIncluding(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let seed = try await CompanySeed.insert(into: context)
            let hr = seed.departments["HR"]!
            let kim = seed.employees["Kim"]!
            try await context.add([kim], to: Department.employees, of: hr)
            #expect(try await context.get(kim).department == hr)
            try await context.remove([kim], from: Department.employees, of: hr)
            #expect(try await context.get(kim).department == nil)
            try await context.set(Employee.department, of: kim, to: seed.departments["Design"]!)
            let withDepartment = try await context.get(kim, including: [Employee.department])
            #expect(try withDepartment.included(Employee.department)?.name == "Design")
            let plain = try await context.get(kim)
            let notIncluded = #expect(throws: KeelError.self) { _ = try plain.included(Employee.department) }
            #expect(notIncluded?.code == .badRequest)
            var counts: [String: Int] = [:]
            for try await department in context.fetch(Department.self, including: [Department.employees]) {
                counts[department.name] = try department.included(Department.employees).count
                #expect(try department.included(Department.employees).map(\.objectID) == department.employees.map(Optional.some))
            }
            #expect(counts == ["Sales": 1, "Design": 2, "Development": 2, "HR": 1])
            // A to-one to an abstract entity takes an upcast ID.
            let laptop = try await context.insert(Computer(id: UUID(), owner: kim.upcast()))
            let owner = try await context.get(try #require(try await context.get(laptop.objectID!).owner))
            #expect(owner is Employee)
            try await context.save()
        }
    }

    @Test("delete rules: nullify, cascade, deny (refused at save), noAction (a dangling reference reads as missing)", arguments: BackendKind.allCases)
    func deleteRules(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let seed = try await CompanySeed.insert(into: context)
            let lee = seed.employees["Lee"]!
            let development = seed.departments["Development"]!
            // Laptops for Lee: Person.computers cascades, Computer.owner is noAction.
            var laptops: [KeelID<Computer>] = []
            for n in 0..<2 {
                laptops.append(try await context.insert(Computer(id: UUID(), model: "L\(n)", owner: lee.upcast())).objectID!)
            }
            try await context.save()

            // noAction: deleting a computer leaves its owner's list alone in the store; it reads as missing.
            try await context.delete(laptops[0])
            try await context.save()
            #expect(try await context.get(lee).computers == [laptops[1]])

            // deny: a department that still has employees cannot be deleted.
            try await context.delete(development)
            let denied = await #expect(throws: KeelError.self) { try await context.save() }
            #expect(denied?.code == .deny)
            #expect(denied?.validationFailures.first?.rule == "deny")
            #expect(denied?.validationFailures.first?.object == development.objectID)
            try await context.rollback()

            // nullify (Employee.department) and cascade (Person.computers): deleting Lee.
            let deleted = try await context.delete(lee)
            #expect(deleted == [lee.objectID, laptops[1].objectID])
            #expect(try await context.get(development).employees == [seed.employees["Park"]!])
            try await context.save()
            #expect(try await context.count(Computer.self) == 0)

            // cascade (Company.employees): the company takes its employees with it; its departments
            // are nullified and would break their minCount of one company — unless they go too
            // (a deny counts no employee deleted in the same save).
            let gone = try await context.delete(seed.company)
            #expect(gone.count == 1 + 5)
            #expect(try await context.get(development).employees.isEmpty)
            let orphaned = await #expect(throws: KeelError.self) { try await context.save() }
            #expect(orphaned?.code == .validation)
            #expect(Set(orphaned?.validationFailures.map(\.rule) ?? []) == ["minCount"])
            for department in seed.departments.values { try await context.delete(department) }
            try await context.save()
            #expect(try await context.count(Employee.self) == 0)
            #expect(try await context.count(Department.self) == 0)
            #expect(try await context.count(Person.self) == 2, "the students stay")
        }
    }
}
