// The code of Docs/Client.md, as written there (embedded here; the daemon form differs only in
// the line that opens the store): the newcomer's app and the error handling.

import Foundation
import KeelClient
import KeelSampleModel
import Testing

@Suite("Docs/Client.md")
struct ClientDocTests {
    @Test("the newcomer's app: insert, save, fetch with a typed predicate and sort, update", arguments: BackendKind.allCases)
    func newcomersApp(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            var printed: [String] = []
            func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

            let context = store.mainContext
            let acme = try await context.insert(Company(name: "Acme \(UUID().uuidString.prefix(8))"))
            let sales = Department(name: "Sales")
            sales.addToCompanies(acme)
            try await context.insert(sales)
            for (name, age, salary) in [("Kim", 34, "5200.50"), ("Lee", 28, "4100"), ("Park", 45, "7300")] {
                try await context.insert(Employee(name: name, age: Int16(age), salary: Decimal(string: salary)!,
                                                  department: sales.objectID, company: acme.objectID))
            }
            try await context.save()
            for try await e in context.fetch(Employee.self, where: Employee.company == acme.objectID! && Employee.age > 30,
                                             sortedBy: .descending(\.salary)) {
                print(e.name, e.age ?? 0, e.salary)
            }
            if let kim = try await context.first(Employee.self, where: Employee.company == acme.objectID! && Employee.name == "Kim") {
                kim.salary = 6000
                try await context.update(kim)
                try await context.save()
            }
            #expect(printed == ["Park 45 7300", "Kim 34 5200.5"])
            #expect(try await context.first(Employee.self, where: Employee.name == "Kim")?.salary == 6000)
        }
    }

    @Test("change events and live results, as the two snippets of \"Change events\" and \"Live results\" use them", arguments: BackendKind.allCases)
    func changesAndLiveResults(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let events = try await store.changes(of: [Employee.self])
            var shown: [KeelID<Employee>] = []
            var live = store.fetchedResults(Employee.self, where: Employee.age > 30, sortedBy: .ascending(\.name)).makeAsyncIterator()
            let first = try #require(try await live.next())
            shown = shown.applying(first.difference)!
            let kim = try await context.insert(Employee(name: "Kim", age: 34, salary: 5200))
            _ = try await context.insert(Employee(name: "Lee", age: 28, salary: 4100))
            try await context.save()
            var lines: [String] = []
            for try await event in events {
                if event.overflow { continue }
                for id in event.inserted(of: Employee.self) { lines.append("inserted \(id)") }
                for id in event.updated(of: Employee.self) { lines.append("updated \(id)") }
                for id in event.deleted(of: Employee.self) { lines.append("deleted \(id)") }
                break
            }
            #expect(lines.count == 2 && lines.allSatisfy { $0.hasPrefix("inserted Employee/") })
            let snapshot = try #require(try await live.next())
            shown = shown.applying(snapshot.difference)!
            #expect(shown == snapshot.ids && shown == [kim.objectID!] && snapshot.updated.isEmpty)
        }
    }

    @Test("batch requests, as the snippet of \"Batch requests\" writes them", arguments: BackendKind.allCases)
    func batchRequests(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let acme = try await context.insert(Company(name: "Acme"))
            let sales = Department(name: "Sales")
            sales.addToCompanies(acme)
            try await context.insert(sales)
            try await context.save()
            let hires = (1...1000).map { Employee(name: "Hire \($0)", salary: 4000, department: sales.objectID, company: acme.objectID) }
            let ids = try await store.batchInsert(hires).objectIDs
            #expect(ids.count == 1000)
            let updated = try await store.batchUpdate(
                Employee.self, where: Employee.age >= 65, set: Employee.isManager.to(false), Employee.department.to(nil))
            #expect(updated.count == 0 && updated.transaction == nil)
            let gone = try await store.batchDelete(Employee.self, where: Employee.department.name == "Sales").count
            #expect(gone == 1000)
        }
    }

    @Test("catching up through the history, as the snippet of \"History\" pages it, then deleting what was read", arguments: BackendKind.allCases)
    func historyPaging(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            for i in 0..<5 {
                try await context.insert(Company(name: "C\(i)"))
                try await context.save()
            }
            let savedToken: Int64 = 0
            var applied: [Int64] = []
            func apply(_ entry: HistoryEntry) { applied.append(entry.txn) }
            var lastSeen: Int64 = savedToken
            while case let page = try await store.history(after: lastSeen, limit: 2), let last = page.last {
                for entry in page { apply(entry) }
                lastSeen = last.txn
            }
            try await store.deleteHistory(through: lastSeen)  // when every reader has seen it (below)
            #expect(applied.count == 5 && applied == applied.sorted())
            #expect(lastSeen == applied.last)
            #expect(try await store.history(after: lastSeen).isEmpty)
            await #expect(throws: KeelError.self) { _ = try await store.history(after: savedToken) }
        }
    }

    @Test("live results with sections, as the snippet of \"Live results\" prints them", arguments: BackendKind.allCases)
    func sections(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            _ = try await CompanySeed.insert(into: store.mainContext)
            var lines: [String] = []
            for try await snapshot in store.fetchedResults(Employee.self, sortedBy: .ascending(\.department.name), .ascending(\.name),
                                                           sectionedBy: Employee.department.name) {
                for section in snapshot.sections ?? [] {
                    lines.append("\(section.name ?? "(no department)") \(snapshot.ids[section.range].count)")
                }
                break
            }
            #expect(lines == ["Design 1", "Development 2", "HR 1", "Sales 2"])
        }
    }

    @Test("catching a failed save by code, with its typed details", arguments: BackendKind.allCases)
    func errorHandling(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            try await context.insert(Student(name: "", grade: 40))
            var lines: [String] = []
            do {
                try await context.save()
            } catch let error as KeelError where error.code == .conflict {
                for c in error.conflicts { lines.append("\(c.object) was changed") }
            } catch let error as KeelError where [.validation, .deny, .constraint].contains(error.code) {
                for f in error.validationFailures { lines.append("\(f.property ?? "") \(f.rule)") }
            }
            #expect(Set(lines) == ["name minValue", "grade maxValue"])
            try await context.rollback()
        }
    }
}
