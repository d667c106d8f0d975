// The typed suite, contexts: changes, save, rollback, refresh; a merge conflict as a typed error
// (and merge policies that resolve it); validation failures, typed; child contexts; the fetched
// property `Book.feedbackList`, whose feedback lives in the other store; a generated class that
// does not match the served model.

import Foundation
import KeelClient
import KeelSampleModel
import Testing

@Suite("Typed contexts")
struct TypedContextTests {
    @Test("changes, save, rollback and refresh", arguments: BackendKind.allCases)
    func lifecycle(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            #expect(try await context.hasChanges == false)
            let han = try await context.insert(Student(name: "Han", grade: 4))
            var changes = try await context.changes()
            #expect(changes.hasChanges)
            #expect(changes.inserted == [han.anyObjectID!])
            let saved = try await context.save()
            #expect(saved.inserted == 1)
            #expect(saved.transaction != nil)
            #expect(try await context.save().transaction == nil, "nothing to save")

            han.grade = 5
            try await context.update(han)
            changes = try await context.changes()
            #expect(changes.updated == [han.anyObjectID!])
            try await context.rollback()
            #expect(try await context.get(han.objectID!).grade == 4)

            // Another context's save is seen after refresh (or save, or rollback), not before.
            let other = try await store.newContext()
            _ = try await other.count(Student.self)
            try await context.insert(Student(name: "Yoon"))
            try await context.save()
            #expect(try await other.count(Student.self) == 1)
            try await other.refresh()
            #expect(try await other.count(Student.self) == 2)
            await other.close()
        }
    }

    @Test("a merge conflict is a typed error; objectTrumps resolves it", arguments: BackendKind.allCases)
    func conflict(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let seed = try await CompanySeed.insert(into: store.mainContext)
            let kimID = seed.employees["Kim"]!
            let first = try await store.newContext()
            let second = try await store.newContext()
            let a = try await first.get(kimID)
            let b = try await second.get(kimID)
            a.salary = 6000
            try await first.update(a)
            try await first.save()
            b.address = "Elsewhere 2"
            try await second.update(b)
            let error = await #expect(throws: KeelError.self) { try await second.save() }
            #expect(error?.code == .conflict)
            let conflict = try #require(error?.conflicts.first)
            #expect(conflict.object == kimID.objectID)
            #expect(conflict.snapshotVersion == 1)
            #expect(conflict.storeVersion == 2)
            #expect(error?.conflictCount == 1, "the count beside the list (details.conflictCount)")
            #expect(error?.faultCount == 0 && error?.verificationFaults.isEmpty == true, "no VERIFY faults in a CONFLICT")
            #expect(try await second.hasChanges, "a failed save keeps the changes")
            await second.close()

            // The same under objectTrumps: the store's salary and this context's address both stay.
            let third = try await store.newContext(mergePolicy: .objectTrumps)
            let c = try await third.get(kimID)
            a.gender = "other"
            try await first.update(a)
            try await first.save()
            c.address = "Elsewhere 3"
            try await third.update(c)
            try await third.save()
            let merged = try await store.mainContext.existing(kimID)
            try await store.mainContext.refresh()
            let now = try await store.mainContext.get(kimID)
            #expect(merged != nil)
            #expect(now.salary == 6000)
            #expect(now.gender == "other")
            #expect(now.address == "Elsewhere 3")
            await first.close()
            await third.close()
        }
    }

    @Test("validation failures come back typed: object, property, rule", arguments: BackendKind.allCases)
    func validation(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let student = try await context.insert(Student(name: "", age: 200, gender: "robot", grade: 13))
            let error = await #expect(throws: KeelError.self) { try await context.save() }
            #expect(error?.code == .validation)
            let failures = Set((error?.validationFailures ?? []).map { "\($0.property ?? "-") \($0.rule)" })
            #expect(failures == ["name minValue", "age maxValue", "gender regex", "grade maxValue"])
            #expect(error?.validationFailures.allSatisfy { $0.object == student.anyObjectID } == true)
            student.name = "Ok"
            student.age = 17
            student.gender = "other"
            student.grade = 12
            try await context.update(student)
            try await context.save()
            // A value that does not fit its type is refused at once (TYPE), not at save.
            let computer = Computer(id: UUID(), price: .infinity)
            try await context.insert(computer)
            computer.specs = nil
            let typeError = await #expect(throws: KeelError.self) {
                try await context.backend.update(computer.anyObjectID!.text, values: ["price": "cheap"])
            }
            #expect(typeError?.code == .type)
            try await context.rollback()
        }
    }

    @Test("a child context saves into its parent, which saves to the store", arguments: BackendKind.allCases)
    func childContexts(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let parent = store.mainContext
            let seed = try await CompanySeed.insert(into: parent)
            let child = try await parent.newChildContext()
            let lee = try await child.get(seed.employees["Lee"]!)
            lee.salary = 4500
            try await child.update(lee)
            let newcomer = try await child.insert(Employee(name: "Seo", salary: 3000, department: seed.departments["HR"]))
            // The parent sees nothing of it until the child saves.
            #expect(try await parent.existing(newcomer.objectID!) == nil)
            try await child.save()
            #expect(try await parent.get(newcomer.objectID!).name == "Seo")
            #expect(try await parent.get(lee.objectID!).salary == 4500)
            let other = try await store.newContext()
            #expect(try await other.existing(newcomer.objectID!) == nil, "not in the store until the parent saves")
            try await parent.save()
            try await other.refresh()
            #expect(try await other.get(newcomer.objectID!).department == seed.departments["HR"])
            // A grandchild reads its parent's pending changes.
            let grandchild = try await child.newChildContext()
            let lee2 = try await child.get(lee.objectID!)
            lee2.age = 29
            try await child.update(lee2)
            #expect(try await grandchild.get(lee.objectID!).age == 29)
            await grandchild.close()
            await child.close()
            await other.close()
        }
    }

    @Test("Book.feedbackList fetches Feedback from the other store, sorted by rating", arguments: BackendKind.allCases)
    func fetchedProperty(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            #expect(Book.entity.configuration == "Default")
            #expect(Feedback.entity.configuration == "Feedback")
            let uuid = UUID()
            let book = try await context.insert(Book(uuid: uuid, title: "Core Data by Tutorials"))
            let other = try await context.insert(Book(uuid: UUID(), title: "Other"))
            for (rating, comment) in [(Float(3), "fine"), (5, "great"), (1, "meh")] {
                try await context.insert(Feedback(bookUUID: uuid, rating: rating, comment: comment))
            }
            try await context.insert(Feedback(bookUUID: try #require(other.uuid as UUID?), rating: 4, comment: "other book"))
            // Pending feedback counts: the fetched property is evaluated over the context as it is.
            var list = try await context.fetch(Book.feedbackList, of: try #require(book.objectID))
            #expect(list.map(\.comment) == ["great", "fine", "meh"])
            try await context.save()
            let read = try await context.get(try #require(book.objectID), including: [Book.feedbackList])
            list = try read.included(Book.feedbackList)
            #expect(list.map(\.rating) == [5, 3, 1])
            // Nothing is cached: new feedback shows at the next ask.
            try await context.insert(Feedback(bookUUID: uuid, rating: 4, comment: "good"))
            list = try await context.fetch(Book.feedbackList, of: try #require(book.objectID))
            #expect(list.map(\.comment) == ["great", "good", "fine", "meh"])
            try await context.save()
        }
    }

    @Test("a class generated from another model is refused before its first use (MODEL_MISMATCH)", arguments: BackendKind.allCases)
    func modelMismatch(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let error = await #expect(throws: KeelError.self) { _ = try await store.mainContext.count(StaleDepartment.self) }
            #expect(error?.code == .modelMismatch)
            #expect(error?.message.contains("code is optional int16 there, optional int32 here") == true)
        }
    }
}

/// `Department` as a code generator would have written it from a model where `code` was int32.
final class StaleDepartment: KeelObject {
    override class var entity: KeelEntityDescription {
        KeelEntityDescription(
            name: "Department", isAbstract: false, parent: nil, family: ["Department"],
            properties: [KeelPropertyDescription(name: "code", kind: .attribute(.int32, optional: true, transient: false), declaredIn: "Department")],
            configuration: "Default")
    }

    override class func concreteType(forEntity name: String) -> KeelObject.Type? { name == "Department" ? StaleDepartment.self : nil }
}
