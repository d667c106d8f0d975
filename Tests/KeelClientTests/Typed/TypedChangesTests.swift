// The typed suite, change events: `KeelStore.changes(of:)` gives the saves of every context as
// events restricted to the entities followed (sub-entities included), read back as typed IDs —
// the same embedded (the store's own observer) and against keeld (SUBSCRIBE); a consumer that
// falls behind gets an overflow event; ending the iteration unsubscribes; closing the store ends
// the stream with DISCONNECTED.

import Foundation
import KeelClient
import KeelSampleModel
import Testing

@Suite("Typed change events")
struct TypedChangesTests {
    @Test("changes(of:): every context's saves, restricted to the entities followed (sub-entities too), as typed IDs, in commit order; closing the store ends the stream", arguments: BackendKind.allCases)
    func changes(_ kind: BackendKind) async throws {
        let fixture = try await TypedStore.open(kind)
        let store = fixture.store
        var people = try await store.changes(of: [Person.self]).makeAsyncIterator()
        var companies = try await store.changes(of: [Company.self]).makeAsyncIterator()
        var everything = try await store.changes().makeAsyncIterator()
        let main = store.mainContext
        // One save: a company, departments, employees and students.
        let seed = try await CompanySeed.insert(into: main)
        let first = try #require(try await people.next())
        #expect(first.inserted(of: Employee.self).count == 6 && first.inserted(of: Student.self).count == 2)
        #expect(Set(first.inserted(of: Person.self).map(\.objectID)) == Set(seed.employees.values.map(\.objectID) + seed.students.values.map(\.objectID)))
        #expect(first.inserted(of: Company.self).isEmpty && first.updated.isEmpty && first.deleted.isEmpty && !first.overflow)
        let company = try #require(try await companies.next())
        #expect(company.txn == first.txn && company.inserted(of: Company.self) == [seed.company] && company.inserted.count == 1)
        let all = try #require(try await everything.next())
        #expect(all.txn == first.txn && all.inserted.count == 1 + 4 + 6 + 2)
        #expect(Set(all.inserted(of: Department.self)) == Set(seed.departments.values))

        // Another context's save: an update of an employee.
        let other = try await store.newContext()
        let kim = try await other.get(seed.employees["Kim"]!)
        kim.age = 35
        try await other.update(kim)
        let updated = try #require(try await other.save().transaction)
        let second = try #require(try await people.next())
        #expect(second.txn == updated && second.updated(of: Employee.self) == [seed.employees["Kim"]!] && second.inserted.isEmpty)
        #expect(try await everything.next()?.txn == updated)

        // A save of a company only: the Person subscriber hears nothing of it; its next event is the delete after.
        let acme = try await main.get(seed.company)
        acme.name = "Acme Corporation"
        try await main.update(acme)
        let renamed = try #require(try await main.save().transaction)
        #expect(try await companies.next()?.updated(of: Company.self) == [seed.company])
        _ = try await main.delete(seed.students["Han"]!)
        let deleted = try #require(try await main.save().transaction)
        let third = try #require(try await people.next())
        #expect(third.txn == deleted && third.deleted(of: Student.self) == [seed.students["Han"]!], "\(third), not the rename \(renamed)")
        #expect(third.deleted(of: Employee.self).isEmpty)
        #expect(try await everything.next()?.txn == renamed)
        #expect(try await everything.next()?.txn == deleted)

        // Closing the store ends every stream with DISCONNECTED.
        await other.close()
        try await fixture.finish()
        do throws(KeelError) {
            let more = try await people.next()
            Issue.record("an event after the store closed: \(String(describing: more))")
        } catch {
            #expect(error.code == .disconnected, "\(error)")
        }
    }

    @Test("a consumer that falls behind gets one overflow event in place of what it missed; ending the iteration unsubscribes", arguments: BackendKind.allCases)
    func overflowAndEnd(_ kind: BackendKind) async throws {
        var options = EmbeddedStoreOptions()
        options.eventBufferLength = 4
        try await withStore(kind, options: options) { store in
            let context = store.mainContext
            // Against keeld the connection's own buffer holds 1,024: the overflow is the embedded store's.
            if kind == .embedded {
                let events = try await store.changes(of: [Company.self])
                var saves: [Int64] = []
                for i in 0..<10 {
                    _ = try await context.insert(Company(name: "C\(i)"))
                    saves.append(try #require(try await context.save().transaction))
                }
                var received: [ChangeEvent] = []
                var iterator = events.makeAsyncIterator()
                while received.last?.txn != saves.last, let event = try await iterator.next() { received.append(event) }
                #expect(received.count <= 4 && received.first?.overflow == true, "\(received)")
                #expect(received.dropFirst().allSatisfy { !$0.overflow && $0.inserted.count == 1 })
            }
            // A subscription ended by its consumer: later saves are not held for it, and a new one works.
            do {
                var ended = try await store.changes(of: [Company.self]).makeAsyncIterator()
                _ = try await context.insert(Company(name: "seen"))
                let seen = try #require(try await context.save().transaction)
                #expect(try await ended.next()?.txn == seen)
            }
            var again = try await store.changes().makeAsyncIterator()
            _ = try await context.insert(Company(name: "again"))
            let saved = try #require(try await context.save().transaction)
            #expect(try await again.next()?.txn == saved)
        }
    }
}
