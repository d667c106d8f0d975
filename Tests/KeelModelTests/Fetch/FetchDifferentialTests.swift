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
        let (startRNG, seed, fixture, generator, startContext) = try Self.start("FetchDifferentialTests", employees: 500, students: 120)
        var rng = startRNG
        var context = startContext
        var usedIndex = 0
        let runs = 2_500
        for i in 0..<runs {
            try generator.renew(&context, run: i, every: 250, &rng)
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

    /// The seeded generator (KEEL_SEED replays), the fixture, its request generator and a context.
    private static func start(_ name: String, employees: Int, students: Int) throws
        -> (SeededGenerator, UInt64, FetchFixture, RandomFetch, ObjectContext)
    {
        let (rng, seed) = SeededGenerator.fromEnvironment(name)
        let fixture = try FetchFixture(employees: employees, students: students, seed: seed)
        return (rng, seed, fixture, RandomFetch(fixture: fixture), fixture.context())
    }

    /// What a request gives, or the error it throws, as text.
    private static func outcome(_ body: () throws -> String) -> String {
        do { return try body() } catch { return "error: \(error)" }
    }

    @Test("random %@ predicates: requests prepared from their shape's entry agree with requests bound from scratch", .timeLimit(.minutes(10)))
    func preparedByShape() throws {
        let (startRNG, seed, fixture, generator, startContext) = try Self.start("FetchDifferentialTests.preparedByShape", employees: 400, students: 100)
        var rng = startRNG
        var context = startContext
        var answered = 0
        var errors = 0
        for i in 0..<1_200 {
            try generator.renew(&context, run: i, every: 200, &rng)
            var request = generator.request(&rng)
            let shape = generator.parameterized(request.entity, &rng)
            request.predicate = shape.text
            // Each shape run twice (or more, when it came up before) with other arguments: from the
            // second run on, the request is prepared from the shape's entry.
            for round in 0..<2 {
                request.args = shape.args.map { $0(&rng) }
                request.vars = ["MIN": shape.args.isEmpty ? .int(30) : .int(Int64.random(in: 15...75, using: &rng))]
                if Int.random(in: 0..<20, using: &rng) == 0 { request.vars = [:] }  // $MIN missing: refused
                let label = "seed \(seed) run \(i).\(round): \(request.entity) [\(shape.text)] args \(request.args) vars \(request.vars) sort \(request.sort.map(\.key)) limit \(String(describing: request.limit)) offset \(request.offset)"
                func run(_ byShape: Bool) -> [String] {
                    context.preparesByShape = byShape
                    let model = fixture.model
                    return [
                        Self.outcome { try context.ids(request).map { $0.text(in: model) }.joined(separator: " ") },
                        Self.outcome { String(try context.count(request)) },
                        Self.outcome { try context.explain(request) },
                    ]
                }
                let fresh = run(false)
                let prepared = run(true)
                if fresh[0].hasPrefix("error") { errors += 1 } else { answered += 1 }
                #expect(prepared == fresh, "\(label)")
            }
        }
        // Arguments of the wrong type and missing variables came up, and most requests answered.
        #expect(errors > 20 && answered > 1_000, "seed \(seed): \(errors) refused, \(answered) answered")
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

    /// A predicate with `%@` arguments (and sometimes `$MIN`) for `entity`, and how to make each
    /// argument: values of the type compared with, and now and then one of another type (a
    /// double for an integer, a string for a number or a date, a list, nil) — converted or refused
    /// the same way whether the request is bound from scratch or from its shape's entry.
    func parameterized(_ entity: String, _ rng: inout SeededGenerator, depth: Int = 0) -> (text: String, args: [(inout SeededGenerator) -> JSON]) {
        typealias Arg = (inout SeededGenerator) -> JSON
        let names = FetchFixture.names
        let departments = fixture.departments.map { JSON.string($0.text(in: model)) }
        let name: Arg = { rng in
            switch Int.random(in: 0..<12, using: &rng) {
            case 0: .int(3)
            case 1: .null
            default: .string(names[Int.random(in: 0..<names.count, using: &rng)])
            }
        }
        let prefix: Arg = { rng in .string(String(names[Int.random(in: 0..<names.count, using: &rng)].prefix(Int.random(in: 0...2, using: &rng)))) }
        let age: Arg = { rng in
            switch Int.random(in: 0..<12, using: &rng) {
            case 0: .double(Double(Int.random(in: 15...75, using: &rng)) + 0.5)
            case 1: .null
            case 2: .string("forty")
            case 3: .array([.int(30)])
            default: .int(Int64.random(in: 15...75, using: &rng))
            }
        }
        let ages: Arg = { rng in
            let lo = Int64.random(in: 15...70, using: &rng)
            return Int.random(in: 0..<6, using: &rng) == 0 ? .array([.int(lo)]) : .array([.int(lo), .int(lo + Int64.random(in: 0...15, using: &rng))])
        }
        let nameList: Arg = { rng in .array((0..<Int.random(in: 0...3, using: &rng)).map { _ in .string(names[Int.random(in: 0..<names.count, using: &rng)]) }) }
        let department: Arg = { rng in
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: .null
            case 1: .string("Company/1")
            default: departments[Int.random(in: 0..<departments.count, using: &rng)]
            }
        }
        let salary: Arg = { rng in
            let s = Int64.random(in: 10...80, using: &rng) * 100
            return Bool.random(using: &rng) ? .int(s) : .string("\(s).50")
        }
        let text: Arg = { rng in .string(["an", "a", "E", "strasse", "ö"][Int.random(in: 0..<5, using: &rng)]) }
        if entity == "Department" {
            let options: [(String, [Arg])] = [
                ("name == %@", [{ rng in .string(FetchFixture.departmentNames[Int.random(in: 0..<FetchFixture.departmentNames.count, using: &rng)]) }]),
                ("name BEGINSWITH %@", [prefix]), ("code > %@", [age]), ("ANY employees.age > %@", [age]),
                ("SUBQUERY(employees, $e, $e.age > %@ AND $e.name BEGINSWITH %@).@count > 0", [age, prefix]),
                ("name ==[c] %@ OR code == %@", [text, age]),
            ]
            return pick(options, &rng)
        }
        var options: [(String, [Arg])] = [
            ("name == %@", [name]), ("name != %@", [name]), ("name BEGINSWITH %@", [prefix]), ("name < %@", [name]),
            ("name >= %@", [name]), ("name IN %@", [nameList]), ("name ==[c] %@", [name]), ("name CONTAINS[c] %@", [text]),
            ("name LIKE[c] %@", [{ rng in .string(["a*", "*n", "?o*"][Int.random(in: 0..<3, using: &rng)]) }]),
            ("name BETWEEN %@", [{ _ in .array(["B", "K"]) }]), ("age == %@", [age]), ("age > %@", [age]), ("age <= %@", [age]),
            ("age BETWEEN %@", [ages]), ("age IN %@", [ages]), ("%@ < age", [age]), ("NOT (age < %@)", [age]),
            ("age > $MIN", []), ("age >= $MIN AND name BEGINSWITH %@", [prefix]), ("address == %@", [name]),
            ("address CONTAINS[cd] %@", [text]), ("age > %@ AND age < %@", [age, age]),
        ]
        if entity == "Employee" {
            options += [
                ("department == %@", [department]), ("department == %@ AND salary > %@", [department, salary]),
                ("department IN {%@, %@}", [department, department]), ("salary > %@", [salary]), ("salary BETWEEN {%@, %@}", [salary, salary]),
                ("department.name == %@", [{ rng in .string(FetchFixture.departmentNames[Int.random(in: 0..<FetchFixture.departmentNames.count, using: &rng)]) }]),
                ("department.name BEGINSWITH[c] %@", [prefix]), ("department.code > %@", [age]),
                ("isManager == %@", [{ rng in Int.random(in: 0..<8, using: &rng) == 0 ? .int(1) : .bool(Bool.random(using: &rng)) }]),
                ("hiredAt > %@", [{ rng in Int.random(in: 0..<8, using: &rng) == 0 ? .string("June") : .string("20\(Int.random(in: 10...24, using: &rng))-06-01T00:00:00Z") }]),
                ("department == %@ AND salary >= %@ AND salary < %@", [department, salary, salary]),
            ]
        }
        switch Int.random(in: 0..<10, using: &rng) {
        case 4..<7 where depth < 2:
            let parts = (0..<Int.random(in: 2...3, using: &rng)).map { _ in parameterized(entity, &rng, depth: depth + 1) }
            return (parts.map { "(" + $0.text + ")" }.joined(separator: " AND "), parts.flatMap(\.args))
        case 7..<9 where depth < 2:
            let parts = (0..<Int.random(in: 2...3, using: &rng)).map { _ in parameterized(entity, &rng, depth: depth + 1) }
            return (parts.map { "(" + $0.text + ")" }.joined(separator: " OR "), parts.flatMap(\.args))
        case 9 where depth < 2:
            let inner = parameterized(entity, &rng, depth: depth + 1)
            return ("NOT (" + inner.text + ")", inner.args)
        default:
            let (text, args) = pick(options, &rng)
            return (text, args)
        }
    }

    /// A fresh context at the start of every `period` runs, and halfway through one with pending
    /// changes (`pendingChanges`).
    func renew(_ context: inout ObjectContext, run i: Int, every period: Int, _ rng: inout SeededGenerator) throws {
        if i % period == period / 2 {
            context = fixture.context()
            try pendingChanges(in: context, &rng)
        } else if i % period == 0 {
            context = fixture.context()
        }
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
