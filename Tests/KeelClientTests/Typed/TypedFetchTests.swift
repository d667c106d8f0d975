// The typed suite, fetching: typed predicates (comparisons, nil, strings with [c]/[d], IN,
// BETWEEN, to-one key paths, to-many counts and subqueries, &&, ||, !), sorts (several keys,
// descending, case-insensitive, through a to-one), limit and offset, count and explain,
// inheritance (a fetch of Person gives Employee and Student objects), IDs, some properties only
// (`fetchProperties`), and streaming.

import Foundation
import KeelClient
import KeelSampleModel
import Testing

@Suite("Typed fetches")
struct TypedFetchTests {
    private func names<E: Person>(_ results: FetchResults<E>) async throws -> [String] {
        var out: [String] = []
        for try await person in results { out.append(person.name) }
        return out
    }

    @Test("typed predicates select what their text says", arguments: BackendKind.allCases)
    func predicates(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let seed = try await CompanySeed.insert(into: context)
            let sort = TypedSort<Employee>.ascending(\.name)
            func fetch(_ predicate: TypedPredicate<Employee>) async throws -> [String] {
                try await names(context.fetch(Employee.self, where: predicate, sortedBy: sort))
            }
            #expect(try await fetch(Employee.age > 30) == ["Choi", "Jung", "Kim", "Park"])
            #expect(try await fetch(Employee.age >= 31 && Employee.age <= 34) == ["Choi", "Kim"])
            #expect(try await fetch(Employee.salary > 5000) == ["Jung", "Kim", "Park"])
            #expect(try await fetch(Employee.salary == Decimal(string: "5200.5")!) == ["Kim"])
            #expect(try await fetch(Employee.name == "O'Brien\" OR TRUEPREDICATE") == [], "a value never becomes predicate text")
            #expect(try await fetch(Employee.gender != "male") == ["Choi", "Jung", "Kim"])
            #expect(try await fetch(Employee.isManager == true) == ["Park"])
            #expect(try await fetch(Employee.address == nil) == [])
            #expect(try await fetch(Employee.address != nil).count == 6)
            #expect(try await fetch(Employee.name.beginsWith("p", .caseInsensitive)) == ["Park"])
            #expect(try await fetch(Employee.name.beginsWith("p")) == [])
            #expect(try await fetch(Employee.name.equals("emile", [.caseInsensitive, .diacriticInsensitive])) == ["Émile"])
            #expect(try await fetch(Employee.name.contains("I", .caseInsensitive)) == ["Choi", "Kim", "Émile"])
            #expect(try await fetch(Employee.name.endsWith("e")) == ["Lee", "Émile"])
            #expect(try await fetch(Employee.name.like("?i*")) == ["Kim"])
            #expect(try await fetch(Employee.name.matches("[JK].*")) == ["Jung", "Kim"])
            #expect(try await fetch(Employee.age.in([28, 52, 99])) == ["Jung", "Lee"])
            #expect(try await fetch(Employee.age.between(29, 31)) == ["Choi", "Émile"])
            #expect(try await fetch(Employee.age.isIn(45...60)) == ["Jung", "Park"])
            #expect(try await fetch(Employee.department.name == "Development") == ["Lee", "Park"])
            #expect(try await fetch(Employee.department == seed.departments["HR"]!) == ["Émile"])
            #expect(try await fetch(Employee.department.code < 3) == ["Choi"])
            #expect(try await fetch(Employee.department.in([seed.departments["HR"]!, seed.departments["Design"]!])) == ["Choi", "Émile"])
            #expect(try await fetch(!(Employee.age > 30) || Employee.name == "Park") == ["Lee", "Park", "Émile"])
            #expect(try await fetch(Employee.hiredAt > Date(keelMilliseconds: 1_600_000_000_000 + 40 * 86_400_000)) == ["Jung", "Park"])
            #expect(try await fetch(KeelSelf<Employee>() == seed.employees["Lee"]!) == ["Lee"])
            #expect(try await fetch(KeelSelf<Employee>().in([seed.employees["Lee"]!, seed.employees["Kim"]!])) == ["Kim", "Lee"])
            #expect(try await fetch(.all).count == 6)
            #expect(try await fetch(.none) == [])
            #expect(try await fetch(TypedPredicate("salary < %@ AND age < %@", ["4500", 30])) == ["Lee", "Émile"])

            var departments: [String] = []
            for try await department in context.fetch(
                Department.self, where: Department.employees.count >= 2, sortedBy: .ascending(\.name))
            {
                departments.append(department.name)
            }
            #expect(departments == ["Development", "Sales"])
            departments = []
            for try await department in context.fetch(
                Department.self, where: Department.employees.any(Employee.age > 50 && Employee.gender == "other"),
                sortedBy: .ascending(\.name))
            {
                departments.append(department.name)
            }
            #expect(departments == ["Sales"])
            departments = []
            for try await department in context.fetch(
                Department.self, where: Department.employees.all(Employee.age < 50), sortedBy: .descending(\.name))
            {
                departments.append(department.name)
            }
            #expect(departments == ["HR", "Development", "Design"])
            departments = []
            for try await department in context.fetch(
                Department.self, where: Department.employees.none(Employee.salary > 4500), sortedBy: .ascending(\.name))
            {
                departments.append(department.name)
            }
            #expect(departments == ["HR"])
            #expect(try await context.count(Department.self, where: Department.employees.contains(seed.employees["Kim"]!)) == 1)
        }
    }

    @Test("sorts: several keys, descending, case-insensitive, through a to-one; limit and offset", arguments: BackendKind.allCases)
    func sorts(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            _ = try await CompanySeed.insert(into: context)
            try await context.insert(Employee(name: "adams", age: 34, salary: 1))
            try await context.save()
            #expect(try await names(context.fetch(Employee.self, sortedBy: .descending(\.age), .ascending(\.name)))
                == ["Jung", "Park", "Kim", "adams", "Choi", "Émile", "Lee"])
            #expect(try await names(context.fetch(Employee.self, sortedBy: .ascending(\.name)))
                == ["Choi", "Jung", "Kim", "Lee", "Park", "adams", "Émile"])
            #expect(try await names(context.fetch(Employee.self, sortedBy: .ascending(\.name, caseInsensitive: true)))
                == ["adams", "Choi", "Jung", "Kim", "Lee", "Park", "Émile"])
            #expect(try await names(context.fetch(Employee.self, sortedBy: .descending(Employee.salary), limit: 2))
                == ["Park", "Jung"])
            #expect(try await names(context.fetch(Employee.self, sortedBy: .ascending(\.department.name), .ascending(\.name), limit: 3, offset: 1))
                == ["Choi", "Lee", "Park"], "adams has no department: nil sorts first")
            let first = try await context.first(Employee.self, where: Employee.age > 40, sortedBy: .ascending(\.salary))
            #expect(first?.name == "Jung")
            #expect(try await context.first(Employee.self, where: Employee.age > 99) == nil)
        }
    }

    @Test("a fetch of an abstract parent gives objects of each sub-entity's class", arguments: BackendKind.allCases)
    func inheritance(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            _ = try await CompanySeed.insert(into: context)
            var employees = 0
            var students: [String] = []
            for try await person in context.fetch(Person.self, where: Person.age < 30, sortedBy: .ascending(\.age)) {
                switch person {
                case let employee as Employee:
                    employees += 1
                    #expect(employee.salary > 0)
                case let student as Student:
                    students.append("\(student.name) \(student.grade ?? 0)")
                default:
                    Issue.record("\(person) is neither an Employee nor a Student")
                }
            }
            #expect(employees == 2)
            #expect(students == ["Han 10", "Yoon 12"])
            #expect(try await context.count(Person.self) == 8)
            #expect(try await context.count(Person.self, includesSubentities: false) == 0, "Person is abstract: no object is exactly a Person")
            #expect(try await context.count(Employee.self, where: Employee.age > 40) == 2, "a key Person declares, read on Employee")
            var ids: [KeelID<Person>] = []
            for try await id in context.fetchIDs(Person.self, where: Person.name.beginsWith("Y")) { ids.append(id) }
            #expect(ids.map(\.objectID.entityName) == ["Student"])
        }
    }

    @Test("fetchProperties: only the properties asked for, read by their keys; nil for null, BAD_REQUEST for a key not fetched", arguments: BackendKind.allCases)
    func properties(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let seed = try await CompanySeed.insert(into: context)
            let rows = try await context.fetchProperties(
                Employee.self, Employee.name, Employee.salary, Employee.department, where: Employee.age > 30,
                sortedBy: .descending(\.salary)
            ).collect()
            #expect(try rows.map { try $0[Employee.name] } == ["Park", "Jung", "Kim", "Choi"])
            #expect(try rows.map { try $0[Employee.salary] } == ["7300.25", "6100", "5200.5", "4800"].map { Decimal(string: $0)! })
            #expect(try rows.map { try $0[Employee.department] } == ["Development", "Sales", "Sales", "Design"].map { seed.departments[$0] })
            #expect(rows.allSatisfy { Array($0.values.keys) == ["name", "salary", "department"] }, "only what was asked, in that order")
            do throws(KeelError) {
                let age = try rows[0][Employee.age]
                Issue.record("a key not fetched read as \(String(describing: age))")
            } catch {
                #expect(error.code == .badRequest, "\(error)")
            }
            // An abstract parent's fetch gives its sub-entities' values; a null is nil; a to-many
            // its members; limit and offset as in any fetch.
            let people = try await context.fetchProperties(Person.self, Person.name, Person.address, sortedBy: .ascending(\.name)).collect()
            #expect(people.count == 8)
            #expect(try people.filter { try $0[Person.address] == nil }.map { try $0[Person.name] } == ["Han", "Yoon"])
            let sales = try await context.fetchProperties(Department.self, Department.employees, where: Department.name == "Sales").collect()
            #expect(try Set(sales.first?[Department.employees] ?? []) == [seed.employees["Kim"]!, seed.employees["Jung"]!])
            let page = try await context.fetchProperties(Employee.self, Employee.name, sortedBy: .ascending(\.age), limit: 2, offset: 1).collect()
            #expect(try page.map { try $0[Employee.name] } == ["Émile", "Choi"])
            // Key paths through to-ones (Core Data's "department.name"): read by the same key.
            let placed = try await context.fetchProperties(
                Employee.self, Employee.name, Employee.department.name, Employee.company.name, where: Employee.age < 30,
                sortedBy: .ascending(\.name)
            ).collect()
            #expect(try placed.map { try $0[Employee.department.name] } == ["Development", "HR"])
            #expect(try placed.map { try $0[Employee.company.name] } == ["Acme", "Acme"])
            #expect(placed.first.map { Array($0.values.keys) } == ["name", "department.name", "company.name"])
            // Distinct rows (Core Data's returnsDistinctResults): each department name once, in
            // the sort's order; limit and offset count distinct rows.
            let names = try await context.fetchProperties(
                Employee.self, Employee.department.name, sortedBy: .ascending(\.department.name), distinct: true
            ).collect()
            #expect(try names.map { try $0[Employee.department.name] } == ["Design", "Development", "HR", "Sales"])
            let second = try await context.fetchProperties(
                Employee.self, Employee.department.name, sortedBy: .ascending(\.department.name), limit: 2, offset: 1, distinct: true
            ).collect()
            #expect(try second.map { try $0[Employee.department.name] } == ["Development", "HR"])
            // Each object's ID among its values (Core Data's evaluated object): the IDs a fetch
            // of IDs gives, in the same order, sub-entities' included; none when not asked for.
            let withIDs = try await context.fetchProperties(Person.self, KeelSelf<Person>(), Person.name, sortedBy: .ascending(\.name)).collect()
            let ids = try await context.fetchIDs(Person.self, sortedBy: .ascending(\.name)).collect()
            #expect(try withIDs.map { try $0[KeelSelf<Person>()] } == ids)
            #expect(try withIDs.first { try $0[Person.name] == "Kim" }?[KeelSelf<Person>()] == seed.employees["Kim"].flatMap { KeelID<Person>($0.objectID) })
            #expect(withIDs.first.map { Array($0.values.keys) } == ["$id", "name"])
            do throws(KeelError) {
                let id = try rows[0][KeelSelf<Employee>()]
                Issue.record("an ID not fetched read as \(id)")
            } catch {
                #expect(error.code == .badRequest, "\(error)")
            }
            // A group's row has no one object.
            do throws(KeelError) {
                _ = try await context.fetchProperties(Employee.self, KeelSelf<Employee>(), Employee.age.count(as: "n"), groupedBy: [Employee.age]).collect()
                Issue.record("an object ID was fetched with groups")
            } catch {
                #expect(error.code == .badRequest, "\(error)")
            }
            // A key path that ends at or goes through a to-many is refused.
            do throws(KeelError) {
                _ = try await context.fetchProperties(Employee.self, Employee.department.employees).collect()
                Issue.record("a key path to a to-many was fetched")
            } catch {
                #expect(error.code == .badRequest, "\(error)")
            }
        }
    }

    @Test("grouped fetchProperties: aggregates typed by their key, sorted by an aggregate, offset/limit over groups, one row without groupedBy", arguments: BackendKind.allCases)
    func groups(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let seed = try await CompanySeed.insert(into: context)
            let headcount = KeelAggregate.count(of: Employee.self, as: "headcount")
            let payroll = Employee.salary.sum(as: "payroll")
            let meanAge = Employee.age.average(as: "meanAge")
            let youngest = Employee.age.min(as: "youngest")
            let rows = try await context.fetchProperties(
                Employee.self, Employee.department.name, headcount, payroll, meanAge, youngest, groupedBy: [Employee.department.name],
                sortedBy: .descending(payroll)
            ).collect()
            #expect(try rows.map { try $0[Employee.department.name] } == ["Development", "Sales", "Design", "HR"])
            #expect(try rows.map { try $0[headcount] } == [2, 2, 1, 1])
            #expect(try rows.map { try $0[payroll] } == ["11400.25", "11300.5", "4800", "3900"].map { Decimal(string: $0)! })
            #expect(try rows.map { try $0[meanAge] } == [36.5, 43.0, 31.0, 29.0])
            #expect(try rows.map { try $0[youngest] } == [28, 34, 31, 29] as [Int16?])
            #expect(rows.first.map { Array($0.values.keys) } == ["department.name", "headcount", "payroll", "meanAge", "youngest"])
            // having: the groups whose row satisfies a typed predicate over aggregates and grouped keys.
            func having(_ predicate: TypedPredicate<Employee>) async throws -> [String?] {
                try await context.fetchProperties(
                    Employee.self, Employee.department.name, headcount, payroll, meanAge, youngest, groupedBy: [Employee.department.name],
                    having: predicate,
                    sortedBy: .descending(payroll)
                ).collect().map { try $0[Employee.department.name] }
            }
            #expect(try await having(headcount >= 2 && payroll > Decimal(11_350)) == ["Development"])
            #expect(try await having(Employee.department.name.beginsWith("D")) == ["Development", "Design"])
            #expect(try await having(youngest.between(30, 35) || meanAge == nil) == ["Sales", "Design"])
            #expect(try await having(!(headcount == 2) && payroll != Decimal(3900)) == ["Design"])
            #expect(try await having(headcount.in([2]) && youngest.isIn(28...31)) == ["Development"])
            // An aggregate of text takes the text operators (max by UTF-8 bytes: Sales "Kim", Development "Park").
            let lastName = Employee.name.max(as: "lastName")
            func havingText(_ predicate: TypedPredicate<Employee>) async throws -> [String?] {
                try await context.fetchProperties(
                    Employee.self, Employee.department.name, lastName, payroll, groupedBy: [Employee.department.name],
                    having: predicate, sortedBy: .descending(payroll)
                ).collect().map { try $0[Employee.department.name] }
            }
            #expect(try await havingText(lastName.beginsWith("P") || lastName.like("?im")) == ["Development", "Sales"])
            #expect(try await havingText(lastName.equals("émile", .caseInsensitive)) == ["HR"])
            // By a to-one: the department's ID; offset and limit count groups.
            let page = try await context.fetchProperties(
                Employee.self, Employee.department, headcount, groupedBy: [Employee.department], where: Employee.age > 30,
                sortedBy: .descending(headcount), limit: 1
            ).collect()
            #expect(try page.map { try $0[Employee.department] } == [seed.departments["Sales"]])
            #expect(try page.map { try $0[headcount] } == [2])
            // Without groupedBy: one row over every object fetched.
            let oldest = Employee.age.max(as: "oldest")
            let all = try await context.fetchProperties(Employee.self, headcount, oldest, where: Employee.age > 30).collect()
            #expect(all.count == 1)
            #expect(try all.first?[headcount] == 4 && all.first?[oldest] == 52)
            // A property that is neither grouped nor aggregated is refused.
            do throws(KeelError) {
                _ = try await context.fetchProperties(Employee.self, Employee.name, headcount, groupedBy: [Employee.department.name]).collect()
                Issue.record("an ungrouped property was fetched with groups")
            } catch {
                #expect(error.code == .badRequest, "\(error)")
            }
        }
    }

    @Test("count and explain take the fetch's arguments", arguments: BackendKind.allCases)
    func countAndExplain(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            _ = try await CompanySeed.insert(into: context)
            #expect(try await context.count(Employee.self) == 6)
            #expect(try await context.count(Employee.self, where: Employee.salary >= 4800) == 4)
            #expect(try await context.count(KeelFetchRequest(Employee.self, where: Employee.age > 20, limit: 2)) == 2)
            let plan = try await context.explain(Department.self, where: Department.name == "Sales")
            #expect(plan.contains("Department.name"), "the indexed name is used: \(plan)")
            let scan = try await context.explain(Employee.self, where: Employee.address.contains("Street"))
            #expect(scan.lowercased().contains("scan"), "\(scan)")
        }
    }

    @Test("results stream: thousands of rows in order, an early break leaves the context usable", arguments: BackendKind.allCases)
    func streaming(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            for i in 0..<3000 {
                try await context.insert(Student(name: String(format: "s%05d", i), grade: Int32(i % 12 + 1)))
            }
            try await context.save()
            var seen = 0
            var last = ""
            for try await student in context.fetch(Student.self, sortedBy: .ascending(\.name)) {
                #expect(student.name > last)
                last = student.name
                seen += 1
            }
            #expect(seen == 3000)
            // Stop after a few rows: the rest of the fetch is dropped, the context answers at once.
            var taken = 0
            for try await _ in context.fetch(Student.self) {
                taken += 1
                if taken == 5 { break }
            }
            #expect(taken == 5)
            #expect(try await context.count(Student.self, where: Student.grade == 12) == 250)
            let all = try await context.fetch(Student.self, where: Student.grade == 1).collect()
            #expect(all.count == 250)
        }
    }

    @Test("predicate text and arguments: values are arguments, keywords escaped, subqueries numbered")
    func predicateText() {
        let p = Employee.age > 30 && Employee.department.name.beginsWith("S", [.caseInsensitive, .diacriticInsensitive])
        #expect(p.format == "(age > %@) AND (department.name BEGINSWITH[cd] %@)")
        #expect(p.arguments == [30, "S"])
        #expect((!(Employee.salary < 10) || Employee.name == nil).format == "(NOT (salary < %@)) OR (name == nil)")
        #expect((Employee.salary < 10).arguments == ["10"])
        #expect((Employee.hiredAt == Date(keelMilliseconds: 0)).arguments == ["1970-01-01T00:00:00.000Z"])
        #expect(Employee.age.in([1, 2]).arguments == [[1, 2]])
        let nested = Company.departments.any(Department.employees.any(Employee.age > 3))
        #expect(nested.format == "SUBQUERY(departments, $m1, SUBQUERY(employees, $m0, age > %@).@count > 0).@count > 0")
        #expect(AttributeKey<Employee, String>("in").predicateText == "#in")
        #expect(TypedSort<Employee>.ascending(\.department.name).key == "department.name")
    }
}
