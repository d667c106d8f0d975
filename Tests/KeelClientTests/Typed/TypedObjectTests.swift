// The typed suite, objects: insert and read back every attribute type, update sending only what
// changed, delete, get and existing, IDs. Runs on every backend (BackendKind).

import Foundation
import KeelClient
import KeelSampleModel
import Testing

@Suite("Typed objects")
struct TypedObjectTests {
    @Test("every attribute type goes in and comes back as the same Swift value", arguments: BackendKind.allCases)
    func everyAttributeType(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let founded = Date(keelMilliseconds: 925_516_800_123)
            let company = try await context.insert(
                Company(
                    name: "Acme \"Quoted\" ☃", website: URL(string: "https://acme.example/a?b=c"), founded: founded,
                    registrationNumber: Int64.max))
            let department = Department(name: "Ops", code: Int16.min)
            department.addToCompanies(company)
            try await context.insert(department)
            let photo = Data((0...255).map { UInt8($0) })
            let employee = try await context.insert(
                Employee(
                    name: "Kim", age: 150, address: nil, gender: "female", photo: photo,
                    salary: Decimal(string: "12345678901234567890.125")!, hiredAt: founded, isManager: true,
                    department: department.objectID, company: company.objectID))
            let student = try await context.insert(Student(name: "Han", age: 0, grade: 12, course: "math"))
            let laptopID = UUID()
            let specs: JSON = ["cpu": "x86", "cores": 8, "ram": 16.5, "ok": true, "tags": ["a", nil]]
            let computer = try await context.insert(
                Computer(id: laptopID, model: "T14", price: 1299.99, isLaptop: false, specs: specs,
                         owner: employee.objectID?.upcast()))
            let bookID = UUID()
            let book = try await context.insert(Book(uuid: bookID, title: "Core Data", publishedAt: nil, isSelected: true))
            let feedback = try await context.insert(Feedback(bookUUID: bookID, rating: 4.5, comment: "good"))
            try await context.save()

            // A new context reads what the store has.
            let reader = try await store.newContext()
            let c = try await reader.get(try #require(company.objectID))
            #expect(c.name == "Acme \"Quoted\" ☃")
            #expect(c.website == URL(string: "https://acme.example/a?b=c"))
            #expect(c.founded == founded)
            #expect(c.registrationNumber == Int64.max)
            let e = try await reader.get(try #require(employee.objectID))
            #expect(e.age == 150)
            #expect(e.address == nil)
            #expect(e.photo == photo)
            #expect(e.salary == Decimal(string: "12345678901234567890.125"))
            #expect(e.hiredAt == founded)
            #expect(e.isManager == true)
            #expect(e.department == department.objectID)
            #expect(e.company == company.objectID)
            #expect(e.computers == [try #require(computer.objectID)])
            #expect(e.version == 1)
            let d = try await reader.get(try #require(department.objectID))
            #expect(d.code == Int16.min)
            #expect(d.employees == [try #require(employee.objectID)])
            #expect(d.companies == [try #require(company.objectID)])
            let s = try await reader.get(try #require(student.objectID))
            #expect(s.grade == 12)
            #expect(s.age == 0)
            let m = try await reader.get(try #require(computer.objectID))
            #expect(m.id == laptopID)
            #expect(m.price == 1299.99)
            #expect(m.isLaptop == false)
            #expect(m.specs == specs)
            #expect(m.owner == employee.objectID?.upcast(to: Person.self))
            let b = try await reader.get(try #require(book.objectID))
            #expect(b.uuid == bookID)
            #expect(b.isSelected == false, "a transient attribute is not stored: another context reads its default")
            let f = try await reader.get(try #require(feedback.objectID))
            #expect(f.rating == 4.5)
            #expect(f.comment == "good")
            await reader.close()
        }
    }

    @Test("insert gives the object its permanent ID; get hands out its concrete class", arguments: BackendKind.allCases)
    func insertAndGet(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let student = Student(name: "Yoon", grade: 3)
            #expect(student.objectID == nil)
            try await context.insert(student)
            let id = try #require(student.objectID)
            #expect(id.objectID.entityName == "Student")
            #expect(student.age == 0, "the model's default, set by the generated initializer")
            // Read through the abstract parent's ID type: the object is a Student.
            let asPerson = try #require(id.upcast(to: Person.self))
            let person = try await context.get(asPerson)
            #expect((person as? Student)?.grade == 3)
            #expect(person.name == "Yoon")
            // Inserting twice is refused.
            await #expect(throws: KeelError.self) { _ = try await context.insert(student) }
            // A missing object: NOT_FOUND from get, nil from existing.
            let missing = try #require(KeelID<Student>("Student/999999"))
            let error = await #expect(throws: KeelError.self) { try await context.get(missing) }
            #expect(error?.code == .notFound)
            #expect(try await context.existing(missing) == nil)
            try await context.save()
        }
    }

    @Test("update sends only the properties that changed, and nothing when nothing did", arguments: BackendKind.allCases)
    func updateSendsChanges(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let seed = try await CompanySeed.insert(into: store.mainContext)
            let recorder = RecordingBackend(store.mainContext.backend)
            let context = KeelStore(main: recorder, close: {}).mainContext
            let kim = try await context.get(try #require(seed.employees["Kim"]))
            recorder.reset()
            try await context.update(kim)
            #expect(recorder.calls.isEmpty)
            kim.salary = Decimal(string: "6000")!
            kim.address = nil
            try await context.update(kim)
            let kimID = try #require(kim.objectID)
            #expect(recorder.calls == [#"UPDATE \#(kimID) {"address":null,"salary":"6000"}"#])
            recorder.reset()
            // After the update the object is in step: nothing more to send.
            try await context.update(kim)
            #expect(recorder.calls.isEmpty)
            try await context.save()
            let again = try await store.mainContext.get(kimID)
            #expect(again.salary == 6000)
            #expect(again.address == nil)
            #expect(again.age == 34)
            #expect(again.version == 2)
        }
    }

    @Test("delete removes the object and returns what went with it; IDs parse and print as Entity/N", arguments: BackendKind.allCases)
    func deleteAndIDs(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let computer = try await context.insert(Computer(id: UUID(), model: "X1"))
            let id = try #require(computer.objectID)
            #expect(KeelID<Computer>(id.text) == id)
            #expect(KeelID<Student>(id.text) == nil, "an ID of another entity is not a Student ID")
            #expect(KeelObjectID("Computer/0") == nil)
            #expect(KeelObjectID("Computer/x") == nil)
            let deleted = try await context.delete(computer)
            #expect(deleted == [id.objectID])
            #expect(computer.isDeleted)
            #expect(try await context.existing(id) == nil)
            try await context.save()
            #expect(try await context.count(Computer.self) == 0)
        }
    }

    @Test("a json attribute holds a Codable value (Core Data's transformable)", arguments: BackendKind.allCases)
    func codableJSON(_ kind: BackendKind) async throws {
        struct Specs: Codable, Equatable {
            var cpu: String
            var cores: Int
            var tags: [String]
        }
        try await withStore(kind) { store in
            let context = store.mainContext
            let specs = Specs(cpu: "x86-64", cores: 8, tags: ["fast", "quiet"])
            let computer = try await context.insert(Computer(id: UUID(), specs: try JSON(encoding: specs)))
            try await context.save()
            let read = try await context.get(try #require(computer.objectID))
            #expect(try read.specs?.decode(Specs.self) == specs)
            let wrong = #expect(throws: KeelError.self) { _ = try read.specs?.decode([Int].self) }
            #expect(wrong?.code == .type)
        }
    }

    @Test("objects stay in the caller's isolation: the API works from the main actor", arguments: BackendKind.allCases)
    @MainActor
    func mainActor(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let student = try await context.insert(Student(name: "Han", grade: 3))
            student.grade = 4
            try await context.update(student)
            try await context.save()
            var names: [String] = []
            for try await s in context.fetch(Student.self, sortedBy: .ascending(\.name)) { names.append(s.name) }
            let all = try await context.fetch(Student.self).collect()
            let again = try await context.get(try #require(student.objectID))
            #expect(names == ["Han"])
            #expect(all.count == 1)
            #expect(again.grade == 4)
        }
    }

    @Test("an object's description shows its ID and values")
    func description() {
        let d = Department(name: "Ops", code: 3)
        #expect(d.description == #"new Department {name: "Ops", code: 3, companies: [], employees: []}"#)
    }
}
