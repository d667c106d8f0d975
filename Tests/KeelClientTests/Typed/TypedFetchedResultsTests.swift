// The typed suite, live results: `KeelStore.fetchedResults` (Core Data's
// NSFetchedResultsController) gives the fetch now, then a snapshot after each save — of another
// context — that changes its IDs, their order or one of its objects, with the difference; a save
// that changes nothing it shows gives none; a key path in the predicate makes saves of other
// entities count; closing the store ends it. On both backends.

import Foundation
import KeelClient
import KeelSampleModel
import Testing

@Suite("Typed live results")
struct TypedFetchedResultsTests {
    /// Applies `snapshot.difference` to `shown`, as a list on screen would, and expects the result
    /// to be the snapshot's IDs.
    private func apply<E>(_ snapshot: KeelFetchedResults<E>.Snapshot, to shown: inout [KeelID<E>], sourceLocation: SourceLocation = #_sourceLocation) {
        guard let next = shown.applying(snapshot.difference) else {
            Issue.record("the difference does not apply to what was shown", sourceLocation: sourceLocation)
            return
        }
        shown = next
        #expect(shown == snapshot.ids, sourceLocation: sourceLocation)
    }

    @Test("the fetch now, then one snapshot per save that changes its IDs, order or objects, with the difference; saves that change nothing shown give none", arguments: BackendKind.allCases)
    func snapshots(_ kind: BackendKind) async throws {
        let fixture = try await TypedStore.open(kind)
        let store = fixture.store
        let seed = try await CompanySeed.insert(into: store.mainContext)
        let e = seed.employees
        var results = store.fetchedResults(Employee.self, where: Employee.age > 30, sortedBy: .ascending(\.name)).makeAsyncIterator()
        var shown: [KeelID<Employee>] = []
        let first = try #require(try await results.next())
        #expect(first.ids == [e["Choi"]!, e["Jung"]!, e["Kim"]!, e["Park"]!] && first.transaction == nil && first.updated.isEmpty)
        apply(first, to: &shown)

        let other = try await store.newContext()
        // An insertion that matches: in at its place in the order.
        let ahn = try #require(try await other.insert(Employee(name: "Ahn", age: 40, salary: 4000, company: seed.company)).objectID)
        let inserted = try #require(try await other.save().transaction)
        let second = try #require(try await results.next())
        #expect(second.transaction == inserted && second.ids.first == ahn && second.difference.insertions.count == 1 && second.difference.removals.isEmpty)
        apply(second, to: &shown)

        // An update that takes one out.
        let kim = try await other.get(e["Kim"]!)
        kim.age = 25
        try await other.update(kim)
        let aged = try #require(try await other.save().transaction)
        let third = try #require(try await results.next())
        #expect(third.transaction == aged && !third.ids.contains(e["Kim"]!) && third.difference.removals.count == 1 && third.difference.insertions.isEmpty)
        apply(third, to: &shown)

        // Saves that change nothing shown (an employee who does not match, a company) give no
        // snapshot; an object still shown that changed gives one with it in `updated`, no difference.
        _ = try await other.insert(Employee(name: "Young", age: 20, salary: 100))
        try await other.save()
        let acme = try await other.get(seed.company)
        acme.name = "Acme 2"
        try await other.update(acme)
        try await other.save()
        let park = try await other.get(e["Park"]!)
        park.salary = 9999
        try await other.update(park)
        let paid = try #require(try await other.save().transaction)
        let fourth = try #require(try await results.next())
        #expect(fourth.transaction == paid && fourth.updated == [e["Park"]!] && fourth.difference.isEmpty && fourth.ids == shown)

        // A deletion.
        _ = try await other.delete(ahn)
        let removed = try #require(try await other.save().transaction)
        let fifth = try #require(try await results.next())
        #expect(fifth.transaction == removed && fifth.ids == [e["Choi"]!, e["Jung"]!, e["Park"]!])
        apply(fifth, to: &shown)

        // Closing the store ends the sequence.
        await other.close()
        try await fixture.finish()
        do throws(KeelError) {
            let more = try await results.next()
            Issue.record("a snapshot after the store closed: \(String(describing: more))")
        } catch {
            #expect(error.code == .disconnected, "\(error)")
        }
    }

    @Test("a key path in the predicate: a save of another entity that moves objects in or out gives a snapshot", arguments: BackendKind.allCases)
    func keyPaths(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let seed = try await CompanySeed.insert(into: store.mainContext)
            let e = seed.employees
            var results = store.fetchedResults(Employee.self, where: Employee.department.name == "Sales", sortedBy: .ascending(\.name))
                .makeAsyncIterator()
            #expect(try await results.next()?.ids == [e["Jung"]!, e["Kim"]!])
            // Design is renamed Sales: Choi, of Design, is in; no Employee object changed.
            let other = try await store.newContext()
            let design = try await other.get(seed.departments["Design"]!)
            design.name = "Sales"
            try await other.update(design)
            let renamed = try #require(try await other.save().transaction)
            // Then a save of an employee not shown: had the rename been missed, Choi would come
            // in only now, with this transaction.
            let lee = try await other.get(e["Lee"]!)
            lee.salary = 4200
            try await other.update(lee)
            try await other.save()
            let next = try #require(try await results.next())
            #expect(next.transaction == renamed && next.ids == [e["Choi"]!, e["Jung"]!, e["Kim"]!] && next.updated.isEmpty)
            #expect(next.difference.insertions.count == 1 && next.difference.removals.isEmpty)
            await other.close()
        }
    }
}
