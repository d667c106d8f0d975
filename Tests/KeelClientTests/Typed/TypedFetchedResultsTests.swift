// The typed suite, live results: `KeelStore.fetchedResults` (Core Data's
// NSFetchedResultsController) gives the fetch now, then a snapshot after each save — of another
// context — that changes its IDs, their order or one of its objects, with the difference; a save
// that changes nothing it shows gives none; a key path in the predicate makes saves of other
// entities count; closing the store ends it. On both backends.

import Foundation
import KeelClient
import KeelSampleModel
import KeelStorage
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

    /// `body`'s result, or nil when it has not finished within 30 s (a sequence that missed an
    /// event would wait for it forever).
    private func bounded<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
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

    @Test("random saves against a direct fetch (embedded, seeded): each snapshot is the fetch as it then is, its difference turns the last into it, it comes exactly when the result or a shown object changed")
    func randomSaves() async throws {
        let rngSeed = SeededRandom.seedFromEnvironment()
        print("TypedFetchedResultsTests.randomSaves seed \(rngSeed) (KEEL_SEED=\(rngSeed) replays)")
        var rng = SeededRandom(seed: rngSeed)
        try await withStore(.embedded) { store in
            let seed = try await CompanySeed.insert(into: store.mainContext)
            let request = KeelFetchRequest(Employee.self, where: Employee.age > 30 && Employee.age < 50, sortedBy: [.ascending(\.name)], limit: 6)
            var results = store.fetchedResults(request).makeAsyncIterator()
            var shown = try #require(try await results.next()).ids
            let writer = try await store.newContext()
            var people = seed.employees.values.sorted()
            for step in 0..<150 {
                var touched: KeelID<Employee>? = nil
                switch Int.random(in: 0..<10, using: &rng) {
                case 0...2:
                    let id = try #require(try await writer.insert(
                        Employee(name: "E\(step)", age: Int16.random(in: 20...60, using: &rng), salary: 1, company: seed.company)).objectID)
                    people.append(id)
                case 3...5 where !people.isEmpty:
                    let id = people[Int.random(in: 0..<people.count, using: &rng)]
                    let employee = try await writer.get(id)
                    employee.age = Int16.random(in: 20...60, using: &rng)
                    try await writer.update(employee)
                    touched = id
                case 6 where !people.isEmpty:
                    let id = people.remove(at: Int.random(in: 0..<people.count, using: &rng))
                    _ = try await writer.delete(id)
                case 7 where !people.isEmpty:
                    let id = people[Int.random(in: 0..<people.count, using: &rng)]
                    let employee = try await writer.get(id)
                    employee.salary = Decimal(Int.random(in: 1...9_999, using: &rng))
                    try await writer.update(employee)
                    touched = id
                default:
                    _ = try await writer.insert(Company(name: "C\(step)"))
                }
                guard let saved = try await writer.save().transaction else { continue }
                let checker = try await store.newContext()
                let expected = try await checker.fetchIDs(
                    Employee.self, where: Employee.age > 30 && Employee.age < 50, sortedBy: .ascending(\.name), limit: 6
                ).collect()
                await checker.close()
                guard expected != shown || touched.map(shown.contains) == true else { continue }
                let snapshot = try #require(try await results.next())
                let context = "seed \(rngSeed) step \(step)"
                #expect(snapshot.transaction == saved, "\(context): a snapshot of an earlier save")
                #expect(snapshot.ids == expected, "\(context)")
                #expect(shown.applying(snapshot.difference) == expected, "\(context)")
                #expect(snapshot.updated == (touched.map { expected.contains($0) && shown.contains($0) ? [$0] : [] } ?? []), "\(context)")
                shown = expected
            }
            await writer.close()
        }
    }

    @Test("a burst of saves is one snapshot with all of them; the saves' later events give none", arguments: BackendKind.allCases)
    func burst(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let seed = try await CompanySeed.insert(into: store.mainContext)
            var results = store.fetchedResults(Employee.self, where: Employee.age > 60, sortedBy: .ascending(\.name)).makeAsyncIterator()
            #expect(try await results.next()?.ids == [])
            let other = try await store.newContext()
            var saves: [Int64] = []
            var added: [KeelID<Employee>] = []
            for i in 0..<5 {
                added.append(try #require(try await other.insert(Employee(name: "Old\(i)", age: 70, salary: 1, company: seed.company)).objectID))
                saves.append(try #require(try await other.save().transaction))
            }
            let snapshot = try #require(try await results.next())
            #expect(snapshot.ids == added && snapshot.difference.insertions.count == 5)
            // Embedded, every event is in when the sequence asks: one fetch, named by the last.
            // Against keeld the events cross the socket: some may come after the first.
            if kind == .embedded { #expect(snapshot.transaction == saves.last) } else { #expect(saves.contains(snapshot.transaction ?? -1)) }
            _ = try await other.delete(added[2])
            let deleted = try #require(try await other.save().transaction)
            let next = try #require(try await results.next())
            #expect(next.transaction == deleted && next.ids.count == 4, "the burst's later events gave a snapshot: \(next.transaction ?? -1)")
            await other.close()
        }
    }

    @Test("a key path in the predicate: a save of another entity that moves objects in or out gives a snapshot", arguments: BackendKind.allCases)
    func keyPaths(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let seed = try await CompanySeed.insert(into: store.mainContext)
            let e = seed.employees
            let design = seed.departments["Design"]!
            // Bounded: a sequence that missed the rename would wait for an event that never comes.
            let outcome = try await bounded { () async throws -> (Int64, KeelFetchedResults<Employee>.Snapshot?) in
                var results = store.fetchedResults(Employee.self, where: Employee.department.name == "Sales", sortedBy: .ascending(\.name))
                    .makeAsyncIterator()
                #expect(try await results.next()?.ids == [e["Jung"]!, e["Kim"]!])
                // Design is renamed Sales: Choi, of Design, is in; no Employee object changed.
                let other = try await store.newContext()
                let department = try await other.get(design)
                department.name = "Sales"
                try await other.update(department)
                let renamed = try #require(try await other.save().transaction)
                await other.close()
                return (renamed, try await results.next())
            }
            let (renamed, next) = try #require(outcome, "no snapshot within 30 s of the rename")
            let snapshot = try #require(next)
            #expect(snapshot.transaction == renamed && snapshot.ids == [e["Choi"]!, e["Jung"]!, e["Kim"]!] && snapshot.updated.isEmpty)
            #expect(snapshot.difference.insertions.count == 1 && snapshot.difference.removals.isEmpty)
        }
    }

    @Test("sections (sectionNameKeyPath): runs of equal values of the key; a rename that moves no ID still gives a snapshot with the new sections; the first sort must be the key", arguments: BackendKind.allCases)
    func sections(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let seed = try await CompanySeed.insert(into: store.mainContext)
            let e = seed.employees
            let other = try await store.newContext()
            // One employee without a department: the null section comes first (nulls sort first).
            let nobody = try #require(try await other.insert(Employee(name: "Nobody", age: 50, salary: 100)).objectID)
            try await other.save()
            let outcome = try await bounded { () async throws -> [KeelFetchedResults<Employee>.Snapshot] in
                var results = store.fetchedResults(
                    Employee.self, sortedBy: .ascending(\.department.name), .ascending(\.name), sectionedBy: Employee.department.name
                ).makeAsyncIterator()
                let first = try #require(try await results.next())
                // HR is renamed Human Resources: still between Development and Sales, so no ID moves.
                let hr = try await other.get(seed.departments["HR"]!)
                hr.name = "Human Resources"
                try await other.update(hr)
                try await other.save()
                return [first, try #require(try await results.next())]
            }
            let snapshots = try #require(outcome, "no snapshot within 30 s of the rename")
            let first = snapshots[0], renamed = snapshots[1]
            #expect(first.ids == [nobody, e["Choi"]!, e["Lee"]!, e["Park"]!, e["Émile"]!, e["Jung"]!, e["Kim"]!])
            #expect(first.sections?.map(\.name) == [nil, "Design", "Development", "HR", "Sales"])
            #expect(first.sections?.map(\.range) == [0..<1, 1..<2, 2..<4, 4..<5, 5..<7])
            #expect(renamed.ids == first.ids && renamed.difference.isEmpty && renamed.updated.isEmpty)
            #expect(renamed.sections?.map(\.name) == [nil, "Design", "Development", "Human Resources", "Sales"])
            #expect(renamed.sections?.map(\.range) == first.sections?.map(\.range))
            await other.close()

            // Without sections: none. Sectioned by a key the sort does not begin with: refused.
            var plain = store.fetchedResults(Employee.self, sortedBy: .ascending(\.name)).makeAsyncIterator()
            #expect(try await plain.next()?.sections == nil)
            var unsorted = store.fetchedResults(Employee.self, sortedBy: .ascending(\.name), sectionedBy: Employee.department.name).makeAsyncIterator()
            do throws(KeelError) {
                _ = try await unsorted.next()
                Issue.record("sections without a sort by their key were taken")
            } catch {
                #expect(error.code == .badRequest && error.message.contains("sorted by it first"), "\(error)")
            }
        }
    }
}
