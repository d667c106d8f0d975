// Grouped fetches with aggregates (Fetch/FetchGrouping.swift): rows per group with count, sum,
// avg, min and max, exactly, on FetchTestData's employees; their order, offset, limit, COUNT,
// distinct and EXPLAIN; pending changes; a result longer than the first read; prepared
// requests; the wire form; and every refusal.
//
// Employees: Alice 30 5200 Sales; bob 25 4100 Sales; Chloé 41 6100 Design; David (no age) 3900
// Design; Eve 35 5200 (no department); Zed 52 7200 Dev. Departments: Sales code 1, Design code 2,
// Dev no code.

import Foundation
import KeelStorage
import Testing

@testable import KeelModel

@Suite("Grouped fetches")
struct GroupedFetchTests {
    static let byDepartment: JSON = [
        "entity": "Employee", "result": "dictionaries", "groupBy": ["department.name"],
        "properties": [
            "department.name", ["name": "n", "function": "count"], ["name": "payroll", "function": "sum", "key": "salary"],
            ["name": "ages", "function": "count", "key": "age"], ["name": "avgAge", "function": "average", "key": "age"],
            ["name": "first", "function": "min", "key": "name"], ["name": "oldest", "function": "max", "key": "age"],
        ],
    ]

    static func request(_ json: JSON, _ change: (inout FetchRequest) -> Void = { _ in }) throws -> FetchRequest {
        var request = try FetchRequest(json: json)
        change(&request)
        return request
    }

    static func rows(_ c: ObjectContext, _ request: FetchRequest, _ model: Model) throws -> [JSON] {
        try c.fetch(request).map { $0.json(in: model) }
    }

    @Test("one row per group, each aggregate exact, in the groups' key order (nulls first)")
    func aggregatesPerGroup() throws {
        let data = try FetchTestData()
        let rows = try Self.rows(data.context(), Self.request(Self.byDepartment), data.model)
        let expected: [JSON] = [
            ["department.name": nil, "n": 1, "payroll": "5200", "ages": 1, "avgAge": 35.0, "first": "Eve", "oldest": 35],
            ["department.name": "Design", "n": 2, "payroll": "10000", "ages": 1, "avgAge": 41.0, "first": "Chloé", "oldest": 41],
            ["department.name": "Dev", "n": 1, "payroll": "7200", "ages": 1, "avgAge": 52.0, "first": "Zed", "oldest": 52],
            ["department.name": "Sales", "n": 2, "payroll": "9300", "ages": 2, "avgAge": 27.5, "first": "Alice", "oldest": 30],
        ]
        #expect(rows == expected, "\(rows)")
        // The row's keys in the order of `properties`.
        #expect(rows.first?.objectValue.map { Array($0.keys) } == ["department.name", "n", "payroll", "ages", "avgAge", "first", "oldest"])
    }

    @Test("sort by an aggregate, offset and limit count groups, COUNT counts them, EXPLAIN says so")
    func orderWindowAndCount() throws {
        let data = try FetchTestData()
        let c = data.context()
        var request = try Self.request(Self.byDepartment) { $0.sort = [KeelSortDescriptor(key: "payroll", ascending: false)] }
        #expect(try Self.rows(c, request, data.model).map { $0["department.name"] } == ["Design", "Sales", "Dev", .null])
        #expect(try c.count(request) == 4)
        request.offset = 1
        request.limit = 2
        #expect(try Self.rows(c, request, data.model).map { $0["department.name"] } == ["Sales", "Dev"])
        #expect(try c.count(request) == 2)
        let explained = try c.explain(request)
        #expect(
            explained.hasSuffix(
                "group by department.name (n = count, payroll = sum of salary, ages = count of age, avgAge = avg of age, first = min of name, oldest = max of age): in memory → sort: in memory (payroll descending) → offset 1 → limit 2; about 6 rows"),
            "\(explained)")
        #expect(explained.hasPrefix("SCAN Employee"), "\(explained)")
        request.limit = 0
        #expect(try c.fetch(request).isEmpty)
        // A groupBy key the rows do not show still sorts them; descending puts the null group last.
        let hidden = try Self.request(["entity": "Employee", "result": "dictionaries", "groupBy": ["department.name"], "properties": [["name": "n", "function": "count"]], "sort": [["key": "department.name", "ascending": false]]])
        #expect(try Self.rows(c, hidden, data.model) == [["n": 2], ["n": 1], ["n": 2], ["n": 1]])
    }

    @Test("aggregates without groupBy: one row over the whole fetch, also over nothing; counts alone are a COUNT")
    func wholeFetch() throws {
        let data = try FetchTestData()
        let c = data.context()
        let all: JSON = [
            "entity": "Employee", "result": "dictionaries",
            "properties": [
                ["name": "n", "function": "count"], ["name": "total", "function": "sum", "key": "salary"],
                ["name": "top", "function": "max", "key": "name"], ["name": "codes", "function": "sum", "key": "department.code"],
            ],
        ]
        #expect(try Self.rows(c, Self.request(all), data.model) == [["n": 6, "total": "31700", "top": "bob", "codes": 6]])
        let none = try Self.request(all) { $0.predicate = "age > 100" }
        #expect(try Self.rows(c, none, data.model) == [["n": 0, "total": 0, "top": nil, "codes": 0]])
        #expect(try c.count(none) == 1)
        // Only counts: the source is a COUNT, with the predicate and the sub-entities.
        let counts = try Self.request(["entity": "Person", "result": "dictionaries", "predicate": "age > 20", "properties": [["name": "people", "function": "count"]]])
        #expect(try Self.rows(c, counts, data.model) == [["people": 5]])
        #expect(try Self.rows(c, Self.request(["entity": "Person", "result": "dictionaries", "properties": [["name": "people", "function": "count"]]]), data.model) == [["people": 8]])
        let notSub = try Self.request(["entity": "Person", "result": "dictionaries", "includeSubentities": false, "properties": [["name": "people", "function": "count"]]])
        #expect(try Self.rows(c, notSub, data.model) == [["people": 0]])
        #expect(try c.explain(counts).contains("aggregate (people = count): in memory"))
    }

    @Test("having keeps the groups whose row satisfies it: over aggregates and groupBy keys (shown or not), with havingArgs and vars; before sort, offset, limit and COUNT; without groupBy it filters the one row")
    func having() throws {
        let data = try FetchTestData()
        let c = data.context()
        func names(_ change: (inout FetchRequest) -> Void) throws -> [JSON] {
            try Self.rows(c, Self.request(Self.byDepartment, change), data.model).map { $0["department.name"] ?? "absent" }
        }
        #expect(try names { $0.having = "n >= 2" } == ["Design", "Sales"])
        // A decimal sum compared with a decimal string argument, and with a number.
        #expect(try names { $0.having = "payroll > %@"; $0.havingArgs = ["9500"] } == ["Design"])
        #expect(try names { $0.having = "payroll > %@ AND payroll < %@"; $0.havingArgs = [5200, 9999.5] } == ["Dev", "Sales"])
        // A groupBy key, the null group, a variable, string operators, NOT and OR.
        #expect(try names { $0.having = "department.name BEGINSWITH 'D'" } == ["Design", "Dev"])
        #expect(try names { $0.having = "department.name == nil" } == [.null])
        #expect(try names { $0.having = "avgAge > $MIN"; $0.vars = ["MIN": 36] } == ["Design", "Dev"])
        #expect(try names { $0.having = "NOT (first LIKE[c] 'a*') OR oldest == 30" } == [.null, "Design", "Dev", "Sales"])
        #expect(try names { $0.having = "first IN {'Zed', 'Eve'}" } == [.null, "Dev"])
        // The window and COUNT count the groups having keeps; sort orders them.
        var request = try Self.request(Self.byDepartment) {
            $0.having = "avgAge < 50"
            $0.sort = [KeelSortDescriptor(key: "payroll", ascending: false)]
        }
        #expect(try Self.rows(c, request, data.model).map { $0["department.name"] } == ["Design", "Sales", .null])
        #expect(try c.count(request) == 3)
        request.limit = 2
        #expect(try Self.rows(c, request, data.model).map { $0["department.name"] } == ["Design", "Sales"])
        #expect(try c.count(request) == 2)
        let explained = try c.explain(request)
        #expect(explained.contains("max of age): in memory → having: avgAge < 50 → sort: in memory (payroll descending) → limit 2"), "\(explained)")
        // A groupBy key the rows do not show; a to-one key compared with an object ID.
        let hidden = try Self.request([
            "entity": "Employee", "result": "dictionaries", "groupBy": ["department"], "properties": [["name": "n", "function": "count"]],
            "having": "department == %@ OR department == nil", "havingArgs": [data.dept(1)],
        ])
        #expect(try Self.rows(c, hidden, data.model) == [["n": 1], ["n": 2]])
        // Without groupBy: the one row, or none.
        let whole: JSON = ["entity": "Employee", "result": "dictionaries", "properties": [["name": "n", "function": "count"]]]
        #expect(try Self.rows(c, Self.request(whole) { $0.having = "n == 6" }, data.model) == [["n": 6]])
        let noRow = try Self.request(whole) { $0.having = "n > 6" }
        #expect(try c.fetch(noRow).isEmpty)
        #expect(try c.count(noRow) == 0)
        // A prepared request: the call's arguments for the predicate, its having as prepared.
        let prepared = try c.prepare(Self.request(Self.byDepartment) {
            $0.predicate = "age > %@"
            $0.args = [0]
            $0.having = "department.name != nil"
        })
        #expect(try c.fetch(prepared, args: [30]).map { $0.json(in: data.model)["department.name"] } == ["Design", "Dev"])
        #expect(try c.fetch(prepared, args: [20]).map { $0.json(in: data.model)["department.name"] } == ["Design", "Dev", "Sales"])
        // The wire form.
        let wire = try FetchRequest(json: ["entity": "Employee", "result": "dictionaries", "groupBy": ["name"], "having": "name != nil", "havingArgs": []])
        #expect(wire.having == "name != nil" && wire.havingArgs.isEmpty)
    }

    @Test("having from random clauses over the rows' names, mutated by token soup: kept groups are some of the groups, in their order; every refusal a PREDICATE error with a position inside the text")
    func havingSoup() throws {
        let data = try FetchTestData()
        let c = data.context()
        let all = try Self.rows(c, Self.request(Self.byDepartment), data.model)
        let fragments = [
            "n", "payroll", "ages", "avgAge", "first", "oldest", "department.name", "department", "name", "salary", ".", "@count",
            "==", "!=", "<", "<=", ">", ">=", "BETWEEN", "IN", "BEGINSWITH", "CONTAINS", "LIKE", "MATCHES", "[c]", "AND", "OR",
            "NOT", "(", ")", "{", "}", ",", "ANY", "ALL", "SUBQUERY", "$MIN", "$x", "%@", "SELF", "nil", "TRUE", "1", "2", "35.5",
            "'Sales'", "'D*'", "\"9300\"", "#n", "TRUEPREDICATE",
        ]
        let names = ["n", "payroll", "ages", "avgAge", "first", "oldest", "department.name"]
        let operators = ["==", "!=", "<", "<=", ">", ">=", "BEGINSWITH", "LIKE[c]", "IN", "BETWEEN"]
        let values = ["1", "2", "35.5", "%@", "$MIN", "nil", "'Sales'", "'D*'", "\"9300\"", "{1, 2}", "{30, 40}", "{'Dev', 'Sales'}"]
        var (rng, seed) = SeededGenerator.fromEnvironment("GroupedFetchTests.havingSoup")
        var kept = 0
        for i in 0..<3_000 {
            // Clauses of a name, an operator and a value joined by AND/OR, then (half the time) a
            // fragment inserted or a piece cut.
            var words: [String] = []
            for clause in 0..<Int.random(in: 1...3, using: &rng) {
                if clause > 0 { words.append(Bool.random(using: &rng) ? "AND" : "OR") }
                words += [names.randomElement(using: &rng) ?? "n", operators.randomElement(using: &rng) ?? "==", values.randomElement(using: &rng) ?? "1"]
            }
            for _ in 0..<Int.random(in: 0...2, using: &rng) {
                if Bool.random(using: &rng) {
                    words.insert(fragments.randomElement(using: &rng) ?? "", at: Int.random(in: 0...words.count, using: &rng))
                } else if !words.isEmpty {
                    words.remove(at: Int.random(in: 0..<words.count, using: &rng))
                }
            }
            let text = words.joined(separator: " ")
            let args: [JSON] = Bool.random(using: &rng) ? [] : [2, "9300"]
            let request = try Self.request(Self.byDepartment) {
                $0.having = text
                $0.havingArgs = args
                $0.vars = ["MIN": 30]
            }
            do {
                let rows = try Self.rows(c, request, data.model)
                var rest = all[...]
                for row in rows {
                    guard let at = rest.firstIndex(of: row) else {
                        Issue.record("seed \(seed) case \(i): \(text) gave \(row), not one of the groups in order")
                        break
                    }
                    rest = rest[(at + 1)...]
                }
                kept += rows.count
            } catch let error as KeelError {
                #expect(error.code == .predicate, "seed \(seed) case \(i): \(text): \(error)")
                if case .int(let position)? = error.details?["position"] {
                    #expect(position >= 0 && position <= text.unicodeScalars.count, "seed \(seed) case \(i): \(text): \(error)")
                } else {
                    Issue.record("seed \(seed) case \(i): \(text): no position in \(error)")
                }
            } catch {
                Issue.record("seed \(seed) case \(i): \(text): \(error)")
            }
        }
        #expect(kept > 0, "seed \(seed): no soup kept a group")
    }

    @Test("the context's pending changes are grouped as any fetch sees them")
    func pendingChanges() throws {
        let data = try FetchTestData()
        let c = data.context()
        _ = try c.insert(entity: "Employee", values: ["name": "New", "age": 20, "salary": "800", "department": data.dept(2)])
        _ = try c.delete(data.employees[1])  // bob, of Sales
        let rows = try Self.rows(c, Self.request(Self.byDepartment), data.model)
        #expect(rows.map { $0["department.name"] } == [.null, "Design", "Dev", "Sales"])
        #expect(rows[2]["n"] == 2 && rows[2]["payroll"] == "8000" && rows[2]["avgAge"] == 36.0 && rows[2]["first"] == "New")
        #expect(rows[3]["n"] == 1 && rows[3]["payroll"] == "5200")
        // Another context sees the store only.
        #expect(try Self.rows(data.context(), Self.request(Self.byDepartment), data.model)[2]["n"] == 1)
    }

    @Test("a to-one as the group key, distinct rows of groups, a prepared request run with other arguments")
    func keysDistinctPrepared() throws {
        let data = try FetchTestData()
        let c = data.context()
        let byObject = try Self.request(["entity": "Employee", "result": "dictionaries", "groupBy": ["department"], "properties": ["department", ["name": "n", "function": "count"]]])
        #expect(try Self.rows(c, byObject, data.model) == [["department": nil, "n": 1], ["department": data.dept(0), "n": 2], ["department": data.dept(1), "n": 2], ["department": data.dept(2), "n": 1]])
        var distinct = try Self.request(["entity": "Employee", "result": "dictionaries", "groupBy": ["department.name"], "properties": [["name": "n", "function": "count"]]])
        distinct.distinct = true
        #expect(try Self.rows(c, distinct, data.model) == [["n": 1], ["n": 2]])
        #expect(try c.count(distinct) == 2)
        let template = try Self.request(["entity": "Employee", "result": "dictionaries", "predicate": "age > %@", "args": [0], "groupBy": ["department.name"], "properties": ["department.name", ["name": "n", "function": "count"]]])
        let prepared = try c.prepare(template)
        #expect(try c.fetch(prepared, args: [30]).map { $0.json(in: data.model)["department.name"] } == [.null, "Design", "Dev"])
        #expect(try c.fetch(prepared, args: [40]).map { $0.json(in: data.model) } == [["department.name": "Design", "n": 1], ["department.name": "Dev", "n": 1]])
        #expect(try c.count(prepared, args: [100]) == 0)
        #expect(try c.explain(prepared, args: [40]).contains("group by department.name (n = count): in memory"))
    }

    @Test("a key path groups by the value it ends at: two departments of one name are one group, every aggregate merged; several keys")
    func keyPathGroupsMerge() throws {
        let data = try FetchTestData()
        let c = data.context()
        // A second "Sales" (pending), with one employee: Sales now has Alice, bob and Kim.
        let acme = try #require(try c.fetch(FetchRequest(entity: "Company", result: .ids)).first?.id)
        let sales2 = try c.insert(entity: "Department", values: ["name": "Sales", "companies": [.string(acme.text(in: data.model))]])
        _ = try c.insert(entity: "Employee", values: ["name": "Kim", "age": 61, "salary": "10.25", "department": .string(sales2.text(in: data.model))])
        for predicate in [nil, "name != 'nobody'", "department.code != 99"] as [String?] {  // a scan, a filtered scan, objects read
            let request = try Self.request(Self.byDepartment) { $0.predicate = predicate }
            let rows = try Self.rows(c, request, data.model)
            #expect(rows.map { $0["department.name"] } == [.null, "Design", "Dev", "Sales"], "\(predicate ?? "")")
            #expect(rows.last == ["department.name": "Sales", "n": 3, "payroll": "9310.25", "ages": 3, "avgAge": 38.666666666666664, "first": "Alice", "oldest": 61], "\(predicate ?? ""): \(rows)")
        }
        // By the department object, the two are apart.
        let byObject = try Self.request(["entity": "Employee", "result": "dictionaries", "groupBy": ["department"], "properties": [["name": "n", "function": "count"]]])
        #expect(try Self.rows(c, byObject, data.model).map { $0["n"] } == [1, 2, 2, 1, 1])
        // Two keys: department name and whether the age is known; sorted by both.
        let two = try Self.request([
            "entity": "Employee", "result": "dictionaries", "groupBy": ["department.name", "age"], "predicate": "department.name IN {'Design', 'Sales'}",
            "properties": ["department.name", "age", ["name": "n", "function": "count"]], "sort": ["department.name", ["key": "age", "ascending": false]],
        ])
        #expect(try Self.rows(c, two, data.model) == [
            ["department.name": "Design", "age": 41, "n": 1], ["department.name": "Design", "age": nil, "n": 1],
            ["department.name": "Sales", "age": 61, "n": 1], ["department.name": "Sales", "age": 30, "n": 1], ["department.name": "Sales", "age": 25, "n": 1],
        ])
    }

    @Test("NaN is one group (it equals nothing, itself included), on a scan and reading the objects")
    func nanGroups() throws {
        let data = try FetchTestData()
        let c = data.context()
        for price in ["NaN", "NaN", 1.5, "NaN"] as [JSON] {
            _ = try c.insert(entity: "Computer", values: ["id": .string(UUID().uuidString), "model": "X", "price": price])
        }
        for predicate in [nil, "owner.name != 'nobody' OR owner == nil"] as [String?] {  // a scan; objects read
            let request = try Self.request([
                "entity": "Computer", "result": "dictionaries", "groupBy": ["price"], "properties": ["price", ["name": "n", "function": "count"]],
            ]) { $0.predicate = predicate }
            #expect(try Self.rows(c, request, data.model) == [["price": nil, "n": 2], ["price": "NaN", "n": 3], ["price": 1.5, "n": 1]], "\(predicate ?? "")")
        }
    }

    @Test("a result longer than the first read is grouped whole")
    func longerThanFirstRead() throws {
        let store = try StoreFixture(model: try TestModels.projectModel())
        let c = ObjectContext(store: store.store)
        let departments = try FetchTestData.departments(["D0", "D1", "D2"], in: c, store.model)
        let n = ObjectContext.pinnedRows + 301
        for i in 0..<n {
            _ = try c.insert(entity: "Employee", values: ["name": .string("E\(i)"), "age": .int(Int64(i % 50)), "salary": "1000", "department": departments[i % 3]])
        }
        try c.save()
        // Sorted by name through an index: the source streams past its first read.
        let request = try Self.request([
            "entity": "Employee", "result": "dictionaries", "groupBy": ["department.name"], "predicate": "name BEGINSWITH 'E'",
            "properties": ["department.name", ["name": "n", "function": "count"], ["name": "ages", "function": "sum", "key": "age"]],
        ])
        let rows = try Self.rows(ObjectContext(store: store.store), request, store.model)
        var expected: [JSON] = []
        for d in 0..<3 {
            let members = (0..<n).filter { $0 % 3 == d }
            expected.append(["department.name": .string("D\(d)"), "n": .int(Int64(members.count)), "ages": .int(Int64(members.reduce(0) { $0 + $1 % 50 }))])
        }
        #expect(rows == expected)
    }

    @Test("from an index's keys (Employee.department,salary): the same rows as reading the objects, EXPLAIN says keys only; pending changes and uncovered keys read the objects")
    func fromIndexKeys() throws {
        let store = try StoreFixture(model: try TestModels.projectModel())
        let c = ObjectContext(store: store.store)
        // Two departments share a name: grouped by name they are one group.
        let departments = try FetchTestData.departments(["D0", "D1", "D2", "D3", "D0"], in: c, store.model)
        var r = SeededRandom(seed: 7)
        for i in 0..<(ObjectContext.pinnedRows + 700) {
            var values: [String: JSON] = ["name": .string("E\(i)"), "salary": .string("\(r.next() % 20_000).\(r.next() % 100)")]
            if r.next() % 9 != 0 { values["department"] = departments[Int(r.next() % 5)] }  // some have none
            _ = try c.insert(entity: "Employee", values: .object(.init(values.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })))
        }
        try c.save()
        let reader = ObjectContext(store: store.store)
        let aggregates: [JSON] = [
            ["name": "n", "function": "count"], ["name": "top", "function": "max", "key": "salary"], ["name": "low", "function": "min", "key": "salary"],
            ["name": "total", "function": "sum", "key": "salary"], ["name": "mean", "function": "avg", "key": "salary"],
            ["name": "paid", "function": "count", "key": "salary"],
        ]
        let requests: [(JSON, Bool)] = [
            (["entity": "Employee", "result": "dictionaries", "groupBy": ["department"], "properties": .array(["department"] + aggregates)], true),
            (["entity": "Employee", "result": "dictionaries", "groupBy": ["department.name"], "properties": .array(["department.name"] + aggregates)], true),
            (["entity": "Employee", "result": "dictionaries", "properties": .array(aggregates)], true),
            (["entity": "Employee", "result": "dictionaries", "groupBy": ["department"], "predicate": "department IN %@", "args": [[departments[1], departments[3]]],
              "properties": .array(["department"] + aggregates), "sort": [["key": "top", "ascending": false]]], true),
            // having over groups read from the keys.
            (["entity": "Employee", "result": "dictionaries", "groupBy": ["department"], "properties": .array(["department"] + aggregates),
              "having": "department != nil AND n > %@ AND top >= low", "havingArgs": [100]], true),
            // Not from the keys: a column the index lacks, a filter after it.
            (["entity": "Employee", "result": "dictionaries", "groupBy": ["department"], "properties": ["department", ["name": "x", "function": "max", "key": "name"]]], false),
            (["entity": "Employee", "result": "dictionaries", "groupBy": ["department"], "predicate": "salary > 100", "properties": ["department", ["name": "n", "function": "count"]]], false),
        ]
        for (json, fromKeys) in requests {
            let request = try FetchRequest(json: json)
            var objects = request
            objects.usesIndexes = false
            let expected = try Self.rows(reader, objects, store.model)
            #expect(expected.count >= 1)
            #expect(try Self.rows(reader, request, store.model) == expected, "\(json)")
            let plan = try reader.explain(request)
            #expect(plan.contains("keys only") == fromKeys, "\(plan)")
        }
        let explained = try reader.explain(FetchRequest(json: requests[0].0))
        #expect(explained.hasPrefix("INDEX Employee.department,salary (all entries), keys only → group by department (n = count, "), "\(explained)")
        // A pending change in the context: read from the objects, with the change.
        _ = try reader.insert(entity: "Employee", values: ["name": "New", "salary": "99999", "department": departments[0]])
        let request = try FetchRequest(json: requests[0].0)
        #expect(try !reader.explain(request).contains("keys only"))
        let rows = try Self.rows(reader, request, store.model)
        #expect(rows.first { $0["department"] == departments[0] }?["top"] == "99999")
    }

    @Test("an int sum that would overflow turns decimal; min and max keep the key's type")
    func sumOverflowAndTypes() throws {
        let data = try FetchTestData()
        let c = data.context()
        _ = try c.insert(entity: "Company", values: ["name": "Big", "registrationNumber": .int(Int64.max), "founded": "2001-02-03T00:00:00Z"])
        _ = try c.insert(entity: "Company", values: ["name": "Bigger", "registrationNumber": .int(Int64.max), "founded": "1999-12-31T00:00:00Z"])
        let request = try Self.request([
            "entity": "Company", "result": "dictionaries",
            "properties": [
                ["name": "sum", "function": "sum", "key": "registrationNumber"], ["name": "since", "function": "min", "key": "founded"],
                ["name": "avg", "function": "avg", "key": "registrationNumber"],
            ],
        ])
        let row = try Self.rows(c, request, data.model)
        #expect(row == [["sum": "18446744073709551614", "since": "1999-12-31T00:00:00.000Z", "avg": "9223372036854775807"]], "\(row)")
    }

    @Test("decimal sums as whole numbers (a key's parts, a decimal's fields): equal to Foundation's sums across scales, past Int64 (Decimal from there on), merged, with ints mixed")
    func scaledDecimalSums() {
        var r = SeededRandom(seed: 11)
        for round in 0..<200 {
            var fast = NumberSum(), plain = NumberSum()
            var halves = (NumberSum(), NumberSum())
            var reference = Decimal(0)
            var integers = 0
            for i in 0..<50 {
                // Up to 18 digits, scales from 10^-6 to 10^4: some rounds overflow the Int64 sum.
                let digits = Int64(r.next() % (round % 3 == 0 ? 999_999_999_999_999_999 : 1_000_000)) * (r.next() % 4 == 0 ? -1 : 1)
                let scale = Int(r.next() % 11) - 6
                let decimal = Decimal(sign: digits < 0 ? .minus : .plus, exponent: scale, significand: Decimal(digits.magnitude))
                fast.addDecimal(digits, scale: scale)
                plain.add(.decimal(decimal))
                reference += decimal
                if i % 2 == 0 { halves.0.addDecimal(digits, scale: scale) } else { halves.1.add(.decimal(decimal)) }
                if i % 7 == 0 {
                    fast.add(.int(Int64(i)))
                    plain.add(.int(Int64(i)))
                    halves.1.add(.int(Int64(i)))
                    integers += i
                }
            }
            halves.0.merge(halves.1)
            // Foundation's own sum, the reference (`add(.decimal)` takes the scaled path too).
            #expect(plain.total == .decimal(reference + Decimal(integers)), "round \(round): \(plain.total) against \(reference)")
            #expect(fast.total == plain.total, "round \(round): \(fast.total) against \(plain.total)")
            #expect(halves.0.total == plain.total && halves.0.count == plain.count, "round \(round): merged \(halves.0.total)")
            #expect(fast.average == plain.average && fast.count == plain.count)
        }
    }

    @Test("refusals: BAD_REQUEST for every rule, NO_SUCH_ENTITY and NO_SUCH_PROPERTY for unknown names")
    func refusals() throws {
        let data = try FetchTestData()
        let c = data.context()
        func refused(_ code: KeelError.Code, _ json: JSON, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let error = expectKeelError(code, sourceLocation: sourceLocation) { _ = try c.fetch(FetchRequest(json: json)) }
            #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "no error")", sourceLocation: sourceLocation)
        }
        let count: JSON = ["name": "n", "function": "count"]
        refused(.badRequest, ["entity": "Employee", "groupBy": ["name"]], "\"groupBy\" needs \"result\": \"dictionaries\"")
        refused(.badRequest, ["entity": "Employee", "properties": [count]], "aggregates in \"properties\" need")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "groupBy": ["department.name"], "properties": ["name", count]], "\"name\" is neither a \"groupBy\" key nor an aggregate")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "properties": ["name", count]], "aggregates and no \"groupBy\"")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "groupBy": ["computers"]], "ends at the to-many Employee.computers")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "groupBy": ["name", "name"]], "names \"name\" twice")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "properties": [["name": "s", "function": "sum", "key": "name"]]], "sum of \"name\", a string attribute, needs a number attribute")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "properties": [["name": "m", "function": "max", "key": "isManager"]]], "needs a number, date or string attribute")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "properties": [["name": "m", "function": "min", "key": "department"]]], "a relationship")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "properties": [count, count]], "two aggregates are named \"n\"")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "groupBy": ["name"], "properties": [["name": "name", "function": "count"]]], "has the name of a groupBy key")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "groupBy": ["name"], "sort": ["age"]], "sort key \"age\" is not a name of the grouped rows")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "groupBy": ["name"], "include": ["department"]], "\"include\" cannot be used")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "properties": [["name": "$n", "function": "count"]]], "must not be empty or start with $")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "properties": [["name": "a", "function": "sum"]]], "sum needs a \"key\"")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "properties": [["name": "a", "function": "median", "key": "age"]]], "found \"median\"")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "properties": [["name": "a", "function": "count", "colour": 1]]], "unknown key \"colour\"")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "properties": [3]], "must be a name or an aggregate")
        refused(.noSuchEntity, ["entity": "Employe", "result": "dictionaries", "groupBy": ["name"]], "no entity \"Employe\"")
        refused(.noSuchProperty, ["entity": "Employee", "result": "dictionaries", "groupBy": ["department.nmae"]], "no property \"nmae\"")
        refused(.noSuchProperty, ["entity": "Employee", "result": "dictionaries", "properties": [["name": "a", "function": "sum", "key": "salry"]]], "no property \"salry\"")
        refused(.predicate, ["entity": "Employee", "result": "dictionaries", "groupBy": ["name"], "predicate": "age >"], "position 5")
        // having: only on grouped rows, over their names, each piece refused where it is written.
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "properties": ["name"], "having": "name != nil"], "\"having\" filters grouped rows")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "groupBy": ["name"], "havingArgs": [1]], "\"havingArgs\" are the arguments of \"having\"")
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "groupBy": ["name"], "having": 3], "\"having\" must be a string")
        func having(_ text: String, _ args: [JSON] = [], _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let json: JSON = [
                "entity": "Employee", "result": "dictionaries", "groupBy": ["department.name"], "properties": ["department.name", count],
                "having": .string(text), "havingArgs": .array(args),
            ]
            refused(.predicate, json, fragment, sourceLocation: sourceLocation)
        }
        having("salary > 5", [], "a name of the grouped rows (a groupBy key or an aggregate), found \"salary\"")
        having("department.code > 5", [], "found \"department.code\"")
        having("n.@count > 1", [], "found @count")
        having("SELF == nil", [], "found SELF")
        having("SUBQUERY(department.employees, $e, $e.age > 1).@count > 0", [], "found SUBQUERY")
        having("n > %@", [1, 2], "1 argument for the %@")
        having("n > %@", [], "an argument for %@ number 1")
        having("n > 'many'", [], "a number (compared with a int64)")
        having("department.name > $LOW", [], "a value for $LOW in vars")
        let many = JSON.array((0..<65).map { i in ["name": .string("n\(i)"), "function": "count"] })
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "properties": many], "at most 32 groupBy keys and 64 aggregates (found 0 and 65)")
        // Refused before anything runs, also with limit 0.
        refused(.badRequest, ["entity": "Employee", "result": "dictionaries", "groupBy": ["department.name"], "properties": ["name"], "limit": 0], "neither")
    }

    @Test("the wire form: aggregates in properties decode in place and encode back")
    func wire() throws {
        let request = try FetchRequest(json: Self.byDepartment)
        #expect(request.groupBy == ["department.name"])
        #expect(request.properties == ["department.name", "n", "payroll", "ages", "avgAge", "first", "oldest"])
        #expect(request.aggregates.map(\.function) == [.count, .sum, .count, .avg, .min, .max])
        #expect(request.aggregates[1] == FetchAggregate(name: "payroll", function: .sum, key: "salary"))
        #expect(request.aggregates[1].json == ["name": "payroll", "function": "sum", "key": "salary"])
        #expect(request.isGrouped)
        // Five problems, every one named.
        let bad = expectKeelError(.badRequest) {
            _ = try FetchRequest(json: ["entity": "Employee", "result": "dictionaries", "properties": [["function": "max"], 7], "groupBy": "name"])
        }
        #expect((bad?.details?["problems"]?.arrayValue ?? []).count == 4, "\(bad?.message ?? "")")
    }
}
