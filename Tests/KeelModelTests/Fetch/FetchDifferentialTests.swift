// DIFFERENTIAL: thousands of random predicates and sorts over random data, each run with the
// planner (indexes, index order, unions, key counts) and with a forced full scan (the predicate
// as a filter, sorting in memory). Sorted requests must give identical IDs in identical order;
// unsorted ones the same set (the order without a sort is the plan's) and, with a limit, the
// same number out of it. Counts must agree too. Part of the runs happen in a context with
// pending inserts, updates and deletes (a department deleted leaves its employees' to-one
// dangling), so the merge of pending rows with index streams is checked the same way.
// Seeded: KEEL_SEED=<n> replays a run; the seed is printed and in every failure.

import Foundation
import Testing

@testable import KeelModel

@Suite("Fetch differential: planner against full scan")
struct FetchDifferentialTests {
    @Test("random predicates and sorts: index plans and scans agree", .timeLimit(.minutes(10)))
    func differential() throws {
        var (rng, seed) = SeededGenerator.fromEnvironment("FetchDifferentialTests")
        let fixture = try FetchFixture(employees: 500, students: 120, seed: seed)
        let generator = RandomFetch(fixture: fixture)
        var context = fixture.context()
        var usedIndex = 0
        let runs = 2_500
        for i in 0..<runs {
            if i % 250 == 125 {
                context = fixture.context()
                try generator.pendingChanges(in: context, &rng)
            } else if i % 250 == 0 {
                context = fixture.context()
            }
            let request = generator.request(&rng)
            var scan = request
            scan.usesIndexes = false
            let label = "seed \(seed) run \(i): \(request.entity) [\(request.predicate ?? "")] sort \(request.sort.map(\.key)) limit \(String(describing: request.limit)) offset \(request.offset)"
            let planned: [String]
            let scanned: [String]
            do {
                planned = try context.ids(request).map { $0.text(in: fixture.model) }
                scanned = try context.ids(scan).map { $0.text(in: fixture.model) }
            } catch {
                Issue.record("\(label): \(error)")
                continue
            }
            if case .scan = try context.plan(request).access {} else { usedIndex += 1 }
            let plan = (try? context.explain(request)) ?? "?"
            if !request.sort.isEmpty {
                #expect(planned == scanned, "\(label)\nplan: \(plan)")
            } else if request.limit == nil && request.offset == 0 {
                #expect(Set(planned) == Set(scanned) && planned.count == scanned.count, "\(label)\nplan: \(plan)")
            } else {
                var all = request
                all.limit = nil
                all.offset = 0
                let everything = Set(try context.ids(all).map { $0.text(in: fixture.model) })
                #expect(planned.count == scanned.count && Set(planned).isSubset(of: everything), "\(label)\nplan: \(plan)")
            }
            let counted = try context.count(request)
            #expect(counted == scanned.count, "\(label) (count)\nplan: \(plan)")
        }
        // The planner really used indexes for a good part of the runs.
        #expect(usedIndex > runs / 4, "seed \(seed): only \(usedIndex) of \(runs) runs used an index")
    }
}

/// Random fetch requests over the fixture's Person/Employee/Student/Department objects.
struct RandomFetch {
    let fixture: FetchFixture
    var model: Model { fixture.model }

    func pick<T>(_ items: [T], _ rng: inout SeededGenerator) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }

    func quoted(_ s: String) -> String { "'\(s)'" }

    /// One comparison on Employee (or Person fields for Person/Student).
    func comparison(_ entity: String, _ rng: inout SeededGenerator) -> String {
        let name = quoted(pick(FetchFixture.names, &rng))
        let age = Int.random(in: 15...75, using: &rng)
        var options = [
            "name == \(name)", "name != \(name)", "name BEGINSWITH \(quoted(String(pick(FetchFixture.names, &rng).prefix(Int.random(in: 0...2, using: &rng)))))",
            "name < \(name)", "name >= \(name)", "name IN {\(name), \(quoted(pick(FetchFixture.names, &rng)))}",
            "name ==[c] \(name)", "name CONTAINS[c] 'an'", "name BEGINSWITH[c] 'a'", "name BETWEEN {'B', 'K'}",
            "age == \(age)", "age > \(age)", "age <= \(age)", "age < \(age).5", "age BETWEEN {\(age), \(age + 10)}", "age IN {\(age), 30, 41}",
            "age == nil", "age != nil", "age IN {nil, \(age)}", "\(age) < age", "NOT (age < \(age))", "address == nil",
            "address CONTAINS[cd] 'strasse'", "TRUEPREDICATE", "FALSEPREDICATE",
        ]
        if entity == "Employee" {
            let dept = pick(fixture.departments, &rng).text(in: model)
            let dept2 = pick(fixture.departments, &rng).text(in: model)
            let salary = Int.random(in: 10...80, using: &rng) * 100
            options += [
                "department == \(quoted(dept))", "department == \(quoted(dept)) AND salary > \(salary)",
                "department IN {\(quoted(dept)), \(quoted(dept2))}", "department == nil", "department != nil",
                "salary > \(salary)", "salary <= \(salary).50", "salary == \(salary)", "salary BETWEEN {\(salary), \(salary + 1500)}",
                "department.name == \(quoted(pick(FetchFixture.departmentNames, &rng)))", "department.name BEGINSWITH[c] 's'",
                "department.code > 2", "isManager == YES", "isManager == NO", "hiredAt > '2020-06-01T00:00:00Z'", "hiredAt == nil",
                "department == \(quoted(dept)) AND salary >= \(salary) AND salary < \(salary + 2000)",
            ]
        }
        return pick(options, &rng)
    }

    func predicate(_ entity: String, _ rng: inout SeededGenerator, depth: Int = 0) -> String {
        if entity == "Department" {
            return pick(["name == 'Sales'", "name BEGINSWITH 'D'", "name IN {'HR', 'sales'}", "code > 2", "code == nil",
                         "name > 'F' AND code != nil", "employees.@count > 60", "ANY employees.age > 65", "name ==[c] 'sales'"], &rng)
        }
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<4 where depth < 2: return comparison(entity, &rng)
        case 4..<7 where depth < 2:
            let n = Int.random(in: 2...3, using: &rng)
            return (0..<n).map { _ in "(" + predicate(entity, &rng, depth: depth + 1) + ")" }.joined(separator: " AND ")
        case 7..<9 where depth < 2:
            let n = Int.random(in: 2...3, using: &rng)
            return (0..<n).map { _ in "(" + predicate(entity, &rng, depth: depth + 1) + ")" }.joined(separator: " OR ")
        case 9 where depth < 2: return "NOT (" + predicate(entity, &rng, depth: depth + 1) + ")"
        default: return comparison(entity, &rng)
        }
    }

    func request(_ rng: inout SeededGenerator) -> FetchRequest {
        let entity = pick(["Employee", "Employee", "Employee", "Person", "Student", "Department"], &rng)
        var request = FetchRequest(entity: entity)
        if Int.random(in: 0..<8, using: &rng) > 0 { request.predicate = predicate(entity, &rng) }
        if entity == "Person" { request.includeSubentities = Int.random(in: 0..<4, using: &rng) > 0 }
        if entity == "Person", !request.includeSubentities { request.entity = "Person" }
        var keys = ["name", "age", "address"]
        if entity == "Employee" { keys += ["salary", "hiredAt", "isManager", "department.name", "department.code"] }
        if entity == "Department" { keys = ["name", "code"] }
        if Int.random(in: 0..<5, using: &rng) > 0 {
            let ascending = Bool.random(using: &rng)
            for _ in 0..<Int.random(in: 1...2, using: &rng) {
                let key = pick(keys, &rng)
                let mixed = Int.random(in: 0..<4, using: &rng) == 0 ? !ascending : ascending
                request.sort.append(KeelSortDescriptor(key: key, ascending: mixed, caseInsensitive: key == "name" && Int.random(in: 0..<4, using: &rng) == 0))
            }
        }
        if Bool.random(using: &rng) { request.limit = pick([0, 1, 3, 10, 50], &rng) }
        if Int.random(in: 0..<4, using: &rng) == 0 { request.offset = pick([1, 5, 40], &rng) }
        return request
    }

    /// Inserts, updates and deletes left pending in `context` (and one department deleted, so its
    /// employees' department dangles in this context).
    func pendingChanges(in context: ObjectContext, _ rng: inout SeededGenerator) throws {
        for _ in 0..<25 {
            _ = try context.insert(entity: "Employee", values: FetchFixture.randomEmployee(&rng, departments: fixture.departments, model: model))
        }
        for _ in 0..<40 {
            let id = pick(fixture.employees, &rng)
            guard (try? context.get(id)) != nil else { continue }
            var values: [String: JSON] = [:]
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: values["name"] = .string(pick(FetchFixture.names, &rng))
            case 1: values["age"] = Bool.random(using: &rng) ? .null : .int(Int64.random(in: 18...70, using: &rng))
            case 2: values["salary"] = .string("\(Int.random(in: 10...80, using: &rng) * 100)")
            case 3: values["department"] = Bool.random(using: &rng) ? .null : .string(pick(fixture.departments, &rng).text(in: model))
            default: values["isManager"] = .bool(Bool.random(using: &rng))
            }
            try context.update(id, values: .object(.init(uniqueKeysWithValues: values.map { ($0.key, $0.value) })))
        }
        for _ in 0..<15 {
            let id = pick(fixture.employees + fixture.students, &rng)
            if (try? context.get(id)) != nil { _ = try context.delete(id) }
        }
        if Bool.random(using: &rng) {
            _ = try? context.delete(pick(fixture.departments, &rng))
        }
    }
}
