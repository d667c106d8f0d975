// The planner as EXPLAIN tells it, and fetches in a context with pending changes: inserted
// objects match, deleted ones do not, updated ones are judged by their pending values — the
// same with an index (pending rows merged with the index stream, in sort order) and without.

import Foundation
import KeelStorage
import Testing

@testable import KeelModel

@Suite("Fetch plans and pending changes")
struct FetchPlanTests {
    @Test("EXPLAIN names the index and its range for indexed predicates, a scan for the rest")
    func explain() throws {
        let data = try FetchTestData()
        let c = data.context()
        func explain(_ entity: String, _ predicate: String?, args: [JSON] = [], sort: [KeelSortDescriptor] = [], limit: Int? = nil) throws -> String {
            try c.explain(FetchRequest(entity: entity, predicate: predicate, args: args, sort: sort, limit: limit))
        }
        let compound = try explain(
            "Employee", "department == %@ AND salary > 1000 AND name CONTAINS[c] 'k'", args: [data.dept(0)],
            sort: [KeelSortDescriptor(key: "salary")], limit: 10)
        #expect(compound == "INDEX Employee.department,salary (department == Department/1, salary > 1000) → filter: name CONTAINS[c] \"k\" → sort: by index (salary) → limit 10; about 2 rows")
        #expect(try explain("Employee", "name CONTAINS[c] 'k'") == "SCAN Employee → filter: name CONTAINS[c] \"k\"; about 6 rows")
        #expect(try explain("Employee", nil, sort: [KeelSortDescriptor(key: "name")], limit: 3) == "INDEX Person.name (all entries) → sort: by index (name) → limit 3; about 3 rows")
        #expect(try explain("Employee", nil, sort: [KeelSortDescriptor(key: "name", caseInsensitive: true)], limit: 3) == "SCAN Employee → sort: in memory (name [c]) → limit 3; about 6 rows")
        #expect(try explain("Employee", "name BEGINSWITH 'A'").hasPrefix("INDEX Person.name (name BEGINSWITH \"A\")"))
        #expect(try explain("Employee", "name BEGINSWITH[c] 'A'").hasPrefix("SCAN Employee → filter"))
        #expect(try explain("Person", "name == 'Sam' OR name == 'Zed'").hasPrefix("INDEX Person.name (name == \"Sam\" OR name == \"Zed\") → filter: name == \"Sam\" OR name == \"Zed\""))
        #expect(try explain("Employee", "name == 'Sam' OR department == %@", args: [data.dept(1)]).hasPrefix("UNION OF INDEX Person.name (name == \"Sam\") | INDEX Employee.department,salary (department == Department/2)"))
        #expect(try explain("Employee", "name == 'Sam' OR age > 3").hasPrefix("SCAN Employee → filter: name == \"Sam\" OR age > 3"))
        #expect(try explain("Company", "name == 'Acme'") == "INDEX Company.name (unique) (name == \"Acme\"); about 1 row")
        #expect(try explain("Employee", "age BETWEEN {20, 40}").hasPrefix("SCAN"))
        #expect(try explain("Employee", "salary BETWEEN {4000, 6000}").hasPrefix("INDEX Employee.department,salary") == false)
        #expect(try explain("Department", "name IN {'Sales', 'Dev'}") == "INDEX Department.name (name IN {\"Sales\", \"Dev\"}); about 2 rows")
        #expect(try explain("Employee", "FALSEPREDICATE") == "NOTHING (FALSEPREDICATE); about 0 rows")
        #expect(try explain("Employee", "department == %@", args: [data.dept(2)], sort: [KeelSortDescriptor(key: "salary", ascending: false)])
            == "INDEX Employee.department,salary (department == Department/3) backwards → sort: by index (salary descending); about 1 row")
    }

    @Test("a column's atoms: the point term with the fewest keys served (the first of equals), ranges intersected under each prefix, too many points or a null on a unique index left to the filter, an index only a sort could use taken only when it gives the sort — each as the scan answers")
    func columnAtoms() throws {
        let data = try FetchTestData()
        let c = data.context()
        let many: [JSON] = (0..<1_100).map { .string("n\($0)") } + ["Zed"]
        let cases: [(entity: String, predicate: String?, args: [JSON], sort: [KeelSortDescriptor], plan: String)] = [
            ("Employee", "name == 'Zed' AND name == 'Alice'", [], [], "INDEX Person.name (name == \"Zed\") → filter: name == \"Alice\""),
            ("Employee", "name == 'Alice' AND name == 'Zed'", [], [], "INDEX Person.name (name == \"Alice\") → filter: name == \"Zed\""),
            ("Employee", "name IN {'Zed', 'Alice'} AND name == 'Alice'", [], [], "INDEX Person.name (name == \"Alice\") → filter: name IN"),
            ("Employee", "name > 'B' AND name == 'Zed'", [], [], "INDEX Person.name (name == \"Zed\") → filter: name > \"B\""),
            ("Employee", "name > 'B' AND name < 'Eve'", [], [], "INDEX Person.name (name > \"B\", name < \"Eve\")"),
            ("Employee", "name >= 'Chloé' AND name <= 'Zed' AND name < 'bob'", [], [], "INDEX Person.name (name >= \"Chloé\", name <= \"Zed\", name < \"bob\")"),
            ("Employee", "department IN %@ AND salary > 4000 AND salary < 6000", [.array([data.dept(0), data.dept(1)])], [],
             "INDEX Employee.department,salary (department IN {"),
            ("Employee", "department == %@ AND salary >= 3900", [data.dept(1)], [], "INDEX Employee.department,salary (department == Department/2, salary >= 3900)"),
            ("Employee", "name IN %@", [.array(many)], [], "SCAN Employee → filter: name IN"),
            ("Employee", "name IN %@ AND name >= 'A'", [.array(many)], [], "INDEX Person.name (name >= \"A\") → filter: name IN"),
            ("Company", "name == nil", [], [], "SCAN Company"),
            ("Employee", "age > 3", [], [KeelSortDescriptor(key: "name")], "INDEX Person.name (all entries) → filter: age > 3 → sort: by index (name)"),
            ("Employee", "age > 3", [], [KeelSortDescriptor(key: "salary")], "SCAN Employee → filter: age > 3 → sort: in memory (salary)"),
            ("Employee", "department == %@", [data.dept(0)], [KeelSortDescriptor(key: "name")],
             "INDEX Employee.department,salary (department == Department/1) → sort: in memory (name)"),
            ("Employee", "department == %@", [data.dept(0)], [KeelSortDescriptor(key: "salary", ascending: false)],
             "INDEX Employee.department,salary (department == Department/1) backwards → sort: by index (salary descending)"),
        ]
        for (entity, predicate, args, sort, plan) in cases {
            let request = FetchRequest(entity: entity, predicate: predicate, args: args, sort: sort)
            let explained = try c.explain(request)
            #expect(explained.hasPrefix(plan), "\(predicate ?? "-"): \(explained)")
            var scan = request
            scan.usesIndexes = false
            #expect(try c.explain(scan).hasPrefix("SCAN"))
            let indexed = try c.names(request), scanned = try c.names(scan)
            #expect((sort.isEmpty ? indexed.sorted() : indexed) == (sort.isEmpty ? scanned.sorted() : scanned), "\(predicate ?? "-")")
        }
        // The answers the plans give, written out (the scan could be wrong the same way).
        #expect(try c.names(FetchRequest(entity: "Employee", predicate: "name > 'B' AND name < 'Eve'")).sorted() == ["Chloé", "David"])
        #expect(try c.names(FetchRequest(entity: "Employee", predicate: "department IN %@ AND salary > 4000 AND salary < 6000",
                                         args: [.array([data.dept(0), data.dept(1)])])).sorted() == ["Alice", "bob"])
        #expect(try c.names(FetchRequest(entity: "Employee", predicate: "name IN %@ AND name >= 'A'", args: [.array(many)])) == ["Zed"])
    }

    @Test("department.name as a semi-join through the Department.name index; a constant deleted in the context matches nothing")
    func throughToOne() throws {
        let data = try FetchTestData()
        let c = data.context()
        let sales = FetchRequest(entity: "Employee", predicate: "department.name == 'Sales'", sort: [KeelSortDescriptor(key: "name")])
        #expect(try c.names(sales) == ["Alice", "bob"])
        #expect(try c.explain(sales) == "INDEX Employee.department,salary (department.name == \"Sales\" → department IN {Department/1}) → sort: in memory (name); about 2 rows")
        #expect(try c.explain(FetchRequest(entity: "Employee", predicate: "department.name != 'Sales'")).hasPrefix("SCAN"))
        #expect(try c.names(FetchRequest(entity: "Employee", predicate: "department.name BEGINSWITH[c] 'd'", sort: [KeelSortDescriptor(key: "name")])) == ["Chloé", "David", "Zed"])
        _ = try c.delete(data.employees[3])
        _ = try c.delete(data.employees[2])
        _ = try c.delete(data.departments[1])
        // Design is deleted in this context: nobody's department is Design any more.
        let design = FetchRequest(entity: "Employee", predicate: "department == %@", args: [data.dept(1)])
        #expect(try c.count(design) == 0)
    }

    @Test("EXPLAIN's texts are written from the plan when asked: a semi-join's targets sorted, long lists cut at five, sort, filter, union")
    func explainTexts() throws {
        let data = try FetchTestData()
        let c = data.context()
        let semi = try c.explain(FetchRequest(entity: "Employee", predicate: "department.name IN {'Dev', 'Sales', 'Design'}"))
        #expect(semi == "INDEX Employee.department,salary (department.name IN {\"Dev\", \"Sales\", \"Design\"} → department IN {Department/1, Department/2, Department/3}); about 5 rows")
        let long = try c.explain(FetchRequest(entity: "Department", predicate: "name IN {'g', 'f', 'e', 'd', 'c', 'b', 'a'}"))
        #expect(long == "INDEX Department.name (name IN {\"g\", \"f\", \"e\", \"d\", \"c\", … 7 values}); about 0 rows")
        let sorted = try c.explain(FetchRequest(
            entity: "Employee", predicate: "age > 20 AND name CONTAINS 'e'",
            sort: [KeelSortDescriptor(key: "age", ascending: false), KeelSortDescriptor(key: "name", caseInsensitive: true)], limit: 2, offset: 1))
        #expect(sorted == "SCAN Employee → filter: age > 20 AND name CONTAINS \"e\" → sort: in memory (age descending, name [c]) → offset 1 → limit 2; about 6 rows")
        // The plan a fetch uses (no estimate) says the same.
        let request = FetchRequest(entity: "Employee", predicate: "department == %@ AND name BEGINSWITH 'A'", args: [data.dept(0)], sort: [KeelSortDescriptor(key: "salary")])
        let explained = try c.explain(request)
        let prepared = try PreparedFetch(request, model: data.model)
        let plan = try prepared.plan(in: try c.readState(), explaining: false)
        #expect(plan.estimatedRows == nil)
        #expect(explained.hasPrefix(plan.explain(in: data.model) + "; about "), "\(explained) | \(plan.explain(in: data.model))")
    }

    @Test("a fetch finds the store snapshot under its state by the reader's witness (as `as? ObjectSnapshot` would), and runs in one of its pinned reads; a child context's reader is none")
    func objectSnapshotOfReaders() throws {
        let data = try FetchTestData()
        let c = data.context()
        let state = try c.readState()
        let snapshot = try #require(state.base?.objectSnapshot)
        #expect(snapshot === (state.base as? ObjectSnapshot))
        #expect(state.objectSnapshot == nil, "the overlay itself is no snapshot")
        // No pinned read yet: no pin kept. The fetch's read is a pinned one (its pin kept as
        // the store's spare when it ends); with no snapshot found it would read unpinned.
        #expect(snapshot.pins.withLock { $0.spare.allSatisfy { $0 == nil } && $0.open.allSatisfy { $0 == nil } })
        let request = FetchRequest(entity: "Employee", predicate: "name == %@", args: ["Zed"])
        #expect(try c.names(request) == ["Zed"])
        #expect(snapshot.pins.withLock { $0.spare.contains { $0 != nil } && $0.open.allSatisfy { $0 == nil } })
        let child = ObjectContext(parent: c)
        let childState = try child.readState()
        #expect(childState.base != nil && childState.base?.objectSnapshot == nil)
        #expect(try child.names(request) == ["Zed"])
    }

    @Test("index reads come from the reader: a store snapshot has them, a child context's view of its parent does not (a scan, same answers)")
    func indexReadingOfReaders() throws {
        let data = try FetchTestData()
        let c = data.context()
        let state = try c.readState()
        #expect(state.base?.indexReading != nil)
        let child = ObjectContext(parent: c)
        let childState = try child.readState()
        #expect(childState.base != nil && childState.base?.indexReading == nil)
        let request = FetchRequest(entity: "Employee", predicate: "name == %@ OR department == %@", args: ["Zed", data.dept(0)], sort: [KeelSortDescriptor(key: "name")])
        #expect(try c.explain(request).hasPrefix("UNION OF INDEX"))
        #expect(try child.explain(request).hasPrefix("SCAN Employee"))
        #expect(try child.names(request) == (try c.names(request)))
        #expect(Set(try child.names(request)) == ["Alice", "bob", "Zed"])
        #expect(try child.count(request) == 3 && (try c.count(request)) == 3)
    }

    @Test("to-one == / IN a target that cannot dangle: not read, yet missing, deleted and pending-deleted targets match nothing, as a scan says")
    func toOneTargetsNotRead() throws {
        let data = try FetchTestData()
        let c = data.context()
        // Employee.department's inverse denies the delete: a row never keys a missing department.
        guard case .relationship(let r)? = data.model.entity(named: "Employee")?.property(named: "department") else {
            Issue.record("no Employee.department")
            return
        }
        #expect(!ObjectContext.mayDangle(r, data.model))
        func both(_ context: ObjectContext, _ predicate: String, _ args: [JSON]) throws -> [String] {
            let request = FetchRequest(entity: "Employee", predicate: predicate, args: args, sort: [KeelSortDescriptor(key: "name")])
            var scan = request
            scan.usesIndexes = false
            let names = try context.names(request)
            #expect(names == (try context.names(scan)), "\(predicate) \(args)")
            #expect(try context.count(request) == names.count)
            #expect(try context.explain(request).hasPrefix("INDEX Employee.department,salary"))
            return names
        }
        let never = JSON.string("Department/99")
        #expect(try both(c, "department == %@", [never]) == [])
        #expect(try both(c, "department IN %@", [[data.dept(0), never]]) == ["Alice", "bob"])
        // Dev emptied and deleted, saved: nothing is keyed by it any more.
        try c.update(data.employees[5], values: ["department": nil])
        _ = try c.delete(data.departments[2])
        try c.save()
        let after = data.context()
        #expect(try both(after, "department == %@", [data.dept(2)]) == [])
        #expect(try both(after, "department IN %@", [[data.dept(2), data.dept(1)]]) == ["Chloé", "David"])
        // Deleted in the context only (the stored rows still name it): matches nothing.
        _ = try after.delete(data.employees[0])
        _ = try after.delete(data.employees[1])
        _ = try after.delete(data.departments[0])
        #expect(try both(after, "department == %@", [data.dept(0)]) == [])
    }

    @Test("SELF == %@ and SELF IN %@ (a key path of no steps) are planned as filters, not columns")
    func selfComparisons() throws {
        let data = try FetchTestData()
        let c = data.context()
        let one = data.employees[0]
        let request = FetchRequest(entity: "Employee", predicate: "SELF == %@", args: [.string(one.text(in: data.model))])
        #expect(try c.fetch(request).map(\.id) == [one])
        #expect(try c.explain(request).hasPrefix("SCAN Employee → filter: SELF =="))
        let two = FetchRequest(
            entity: "Employee", predicate: "SELF IN %@", args: [.array(data.employees.prefix(2).map { .string($0.text(in: data.model)) })])
        #expect(try c.count(two) == 2)
    }

    @Test("a fetch longer than its first read streams on when its row saves, rolls back or refreshes the context")
    func rowSavesMidFetch() throws {
        let store = try StoreFixture(model: try TestModels.projectModel())
        let loader = ObjectContext(store: store.store)
        for i in 0..<1500 { try loader.insert(entity: "Student", values: ["name": .string("s\(i)"), "grade": 1]) }
        try loader.save()
        let c = ObjectContext(store: store.store)
        var seen = 0
        try c.fetch(FetchRequest(entity: "Student")) { (row) throws(KeelError) -> Bool in
            seen += 1
            switch seen {
            case 10:
                try c.update(row.id, values: ["grade": 2])
                try c.save()
            case 20: c.refresh()
            case 30: c.rollback()
            default: break
            }
            return true
        }
        #expect(seen == 1500)
        #expect(try c.count(FetchRequest(entity: "Student", predicate: "grade == 2")) == 1)
        try store.expectConsistent()
    }

    @Test("a fetch past its first read goes on with that read's executor, plan and graph: a semi-join over 1,500 rows in index order, with pending changes, gives the scan's rows in the same order")
    func longSemiJoinStreamsOn() throws {
        let store = try StoreFixture(model: try TestModels.projectModel())
        let loader = ObjectContext(store: store.store)
        let company = try loader.insert(entity: "Company", values: ["name": "Acme"]).text(in: store.model)
        let sales = try loader.insert(entity: "Department", values: ["name": "Sales", "companies": .array([.string(company)])])
        let other = try loader.insert(entity: "Department", values: ["name": "Other", "companies": .array([.string(company)])])
        var employees: [ObjectID] = []
        for i in 0..<1_500 {
            let department = (i % 5 == 0 ? other : sales).text(in: store.model)
            employees.append(try loader.insert(
                entity: "Employee", values: ["name": .string("e\(i)"), "salary": .string("\(1000 + i % 97)"), "department": .string(department)]))
        }
        try loader.save()
        let c = ObjectContext(store: store.store)
        _ = try c.insert(entity: "Employee", values: ["name": "new", "salary": "1050", "department": .string(sales.text(in: store.model))])
        try c.update(employees[1], values: ["department": .string(other.text(in: store.model))])
        try c.update(employees[5], values: ["department": .string(sales.text(in: store.model)), "salary": "1001"])
        _ = try c.delete(employees[2])
        let request = FetchRequest(entity: "Employee", predicate: "department.name == 'Sales'", sort: [KeelSortDescriptor(key: "salary")])
        let plan = try c.explain(request)
        #expect(plan.hasPrefix("INDEX Employee.department,salary") && plan.contains("sort: by index"), "\(plan)")
        var scan = request
        scan.usesIndexes = false
        let indexed = try c.names(request)
        #expect(indexed.count == 1_200 - 1 - 1 + 1 + 1, "more rows than the first read holds (\(ObjectContext.pinnedRows))")
        #expect(indexed.count > ObjectContext.pinnedRows)
        #expect(indexed == (try c.names(scan)))
        #expect(Set(indexed).count == indexed.count, "each row once")
        #expect(indexed.contains("new") && indexed.contains("e5") && !indexed.contains("e1") && !indexed.contains("e2"))
        #expect(try c.count(request) == indexed.count)
        // Stopped inside the streamed part, the rows handed over are the first ones of the whole.
        var firstRows: [String] = []
        try c.fetch(request) { (row) throws(KeelError) -> Bool in
            if case .string(let name)? = row.object?["name"] { firstRows.append(name) }
            return firstRows.count < ObjectContext.pinnedRows + 10
        }
        #expect(firstRows == Array(indexed.prefix(ObjectContext.pinnedRows + 10)))
    }

    @Test("an index fetch materialized in its first read hands over each row once, in order, with its values, and stops where the body says: at every count across the materializer's chunks")
    func firstReadRowsStop() throws {
        let store = try StoreFixture(model: try TestModels.projectModel())
        let loader = ObjectContext(store: store.store)
        var names: [String] = []
        var ages: [String: Int64] = [:]
        for i in 0..<300 {
            let name = "e" + String(1000 + (i * 7919) % 300)  // inserted out of name order, each name once
            names.append(name)
            ages[name] = Int64(i % 90)
            _ = try loader.insert(entity: "Employee", values: ["name": .string(name), "salary": .string("\(1000 + i)"), "age": .int(Int64(i % 90))])
        }
        try loader.save()
        names.sort()
        let c = ObjectContext(store: store.store)
        let request = FetchRequest(entity: "Employee", predicate: "name >= 'e'", sort: [KeelSortDescriptor(key: "name")])
        let plan = try c.explain(request)
        #expect(plan.hasPrefix("INDEX Person.name") && plan.contains("sort: by index"), "\(plan)")
        #expect(ObjectContext.fitsOneRead(try c.plan(request), ordering: try PreparedFetch(request, model: store.model).ordering))
        for stop in [1, 2, 15, 16, 17, 127, 128, 129, 256, 299, 300, 301] {
            var seen: [String] = []
            let delivered = try c.fetch(request) { (row) throws(KeelError) -> Bool in
                guard case .string(let name)? = row.object?["name"], case .int(let age)? = row.object?["age"] else {
                    Issue.record("row \(seen.count) has no name or age")
                    return false
                }
                #expect(ages[name] == age, "\(name)'s values")
                seen.append(name)
                return seen.count < stop
            }
            let expected = Array(names.prefix(stop))
            #expect(delivered == expected.count && seen == expected, "stop at \(stop)")
        }
    }

    @Test("rows of the first read are moved to the body: kept ones outlive the fetch whole, a body that throws part-way leaves the rest released, and the next fetch gives them again")
    func firstReadRowsMoved() throws {
        let store = try StoreFixture(model: try TestModels.projectModel())
        let loader = ObjectContext(store: store.store)
        var ages: [String: Int64] = [:]
        for i in 0..<300 {
            let name = "m" + String(1000 + (i * 7919) % 300)
            ages[name] = Int64(i % 90)
            _ = try loader.insert(entity: "Employee", values: ["name": .string(name), "salary": .string("\(1000 + i)"), "age": .int(Int64(i % 90))])
        }
        try loader.save()
        let c = ObjectContext(store: store.store)
        let request = FetchRequest(entity: "Employee", predicate: "name >= 'm'", sort: [KeelSortDescriptor(key: "name")])
        #expect(ObjectContext.fitsOneRead(try c.plan(request), ordering: try PreparedFetch(request, model: store.model).ordering))
        let expected = ages.keys.sorted()
        func check(_ kept: [FetchRow], _ count: Int, _ label: String) {
            #expect(kept.count == count, "\(label)")
            for (i, row) in kept.enumerated() {
                guard case .string(let name)? = row.object?["name"], case .int(let age)? = row.object?["age"] else {
                    Issue.record("\(label): row \(i) kept without its values (\(row.id))")
                    continue
                }
                #expect(name == expected[i] && ages[name] == age && row.result == .objects, "\(label): row \(i)")
            }
        }
        // Rows 1–256 are the first read's full chunks (moved out of their list, an ID-only row
        // left in each slot), 257–300 its last chunk (popped from the materializer's list, last
        // row first): a throw in either, at their edges and inside.
        for stopAt in [1, 150, 256, 257, 280, 299, 300] {
            // Kept by the body (each row once, as an object with its values), read after the fetch.
            var kept: [FetchRow] = []
            do {
                try c.fetch(request) { (row) throws(KeelError) -> Bool in
                    kept.append(row)
                    if kept.count == stopAt, stopAt < 300 { throw KeelError(.internal, "stop") }
                    return true
                }
                #expect(stopAt == 300)
            } catch {
                #expect(error.code == .internal && stopAt < 300)
            }
            check(kept, stopAt, "stopped by a throw at \(stopAt)")
            // The same fetch again, every row: the store and the context are untouched.
            var again: [FetchRow] = []
            try c.fetch(request) { (row) throws(KeelError) -> Bool in
                again.append(row)
                return true
            }
            check(again, 300, "after \(stopAt)")
            check(Array(kept), stopAt, "kept rows after the second fetch, \(stopAt)")
        }
    }

    @Test("pending inserts, updates and deletes are seen, with and without an index, in sort order")
    func pendingChanges() throws {
        let data = try FetchTestData()
        let c = data.context()
        let sales = data.dept(0)
        _ = try c.insert(entity: "Employee", values: ["name": "Nina", "age": 33, "salary": "4500", "department": sales])
        try c.update(data.employees[1], values: ["salary": "9999"])  // bob
        _ = try c.delete(data.employees[0])  // Alice
        try c.update(data.employees[4], values: ["department": sales])  // Eve joins Sales
        try c.update(data.employees[2], values: ["department": sales, "salary": "3000"])  // Chloé joins, below the range
        let request = FetchRequest(
            entity: "Employee", predicate: "department == %@ AND salary > 4000", args: [sales],
            sort: [KeelSortDescriptor(key: "salary", ascending: false)])
        #expect(try c.explain(request).hasPrefix("INDEX Employee.department,salary"))
        var scan = request
        scan.usesIndexes = false
        #expect(try c.names(request) == ["bob", "Eve", "Nina"])
        #expect(try c.names(scan) == ["bob", "Eve", "Nina"])
        #expect(try c.count(request) == 3)
        var ascending = request
        ascending.sort = [KeelSortDescriptor(key: "salary")]
        ascending.limit = 2
        #expect(try c.names(ascending) == ["Nina", "Eve"])
        // Nothing of this reached the store.
        #expect(try data.context().names(request) == ["Alice", "bob"])
        #expect(try c.count(FetchRequest(entity: "Employee", predicate: "name BEGINSWITH 'N'")) == 1)
        #expect(try c.count(FetchRequest(entity: "Employee", predicate: "name == 'Alice'")) == 0)
    }

    @Test("sort + limit on an indexed key streams in index order and stops after the limit")
    func sortLimitReadsFew() throws {
        let data = try FetchTestData()
        let c = data.context()
        let request = FetchRequest(entity: "Employee", sort: [KeelSortDescriptor(key: "name")], limit: 2)
        let plan = try c.plan(request)
        guard case .index(let access) = plan.access else {
            Issue.record("expected an index plan: \(plan.explain(in: data.model))")
            return
        }
        #expect(access.index.name == "Person.name" && plan.orderedByAccess && plan.estimatedRows == 2)
        #expect(try c.names(request) == ["Alice", "Chloé"])
    }

    /// A seeded fixture of 1,800 objects (enough for index and object trees of several leaves)
    /// and a snapshot of its store.
    func seededSnapshot(_ name: String) throws -> (SeededGenerator, UInt64, FetchFixture, ObjectSnapshot) {
        let (rng, seed) = SeededGenerator.fromEnvironment(name)
        let fixture = try FetchFixture(employees: 1500, students: 300, seed: seed)
        return (rng, seed, fixture, try fixture.store.store.snapshot())
    }

    @Test("an index count equals the count of the IDs the index names, for every index, family, range set and cap (leaf counting when the family holds the whole index)")
    func indexCounts() throws {
        var (rng, seed, fixture, snapshot) = try seededSnapshot("FetchPlanTests.indexCounts")
        let model = fixture.model
        var indexes: [String: Index] = [:]
        for entity in model.entities { for index in entity.indexes + entity.uniqueConstraints { indexes[index.name] = index } }
        #expect(indexes["Employee.department,salary"] != nil && indexes["Person.name"] != nil && indexes["Company.name"] != nil)
        for index in indexes.values.sorted(by: { $0.name < $1.name }) {
            let declared = model.entities[index.declaredIn.index]
            // Every key of the tree, to draw bounds from: keys themselves, their prefixes, keys
            // with a byte more (between two keys), and bounds below and beyond every key.
            let keys = try snapshot.read(store: snapshot.layout.storeOf[index.declaredIn.index]) { (txn) throws(KeelError) -> [[UInt8]] in
                guard let tree = try snapshot.tree(txn, TreeLayout.index(index)) else { return [] }
                return try engine { () throws(StorageError) -> [[UInt8]] in
                    var cursor = try tree.cursor()
                    var out: [[UInt8]] = []
                    guard try cursor.seekFirst() else { return out }
                    try cursor.walk { k, _ in
                        out.append([UInt8](k))
                        return true
                    }
                    return out
                }
            }
            // The fixture fills Person, Employee, Student, Department and Company (not Book).
            #expect(!keys.isEmpty || !["Person", "Employee", "Department", "Company"].contains(declared.name), "\(index.name)")
            func bound() -> [UInt8] {
                guard let key = keys.randomElement(using: &rng) else { return [] }
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: return Array(key.prefix(Int.random(in: 0...key.count, using: &rng)))
                case 1: return key + [0]
                case 2: return Bool.random(using: &rng) ? [] : [0xFF, 0xFF]
                default: return key
                }
            }
            // Families: the declaring entity's (every key counted: leaf counting), a larger one,
            // and each entity's own family and itself alone inside the hierarchy (keys classified).
            var families: [Set<EntityID>] = [declared.familySet, declared.familySet.union(model.entities.map(\.id))]
            for e in declared.family { families += [model.entities[e.index].familySet, [e]] }
            for family in families {
                for round in 0..<40 {
                    var ranges: [KeyRange] = []
                    if round == 0 {
                        ranges = [KeyRange(lower: [], upper: nil)]
                    } else {
                        var cuts = (0..<(2 * Int.random(in: 1...3, using: &rng))).map { _ in bound() }
                        cuts.sort { $0.lexicographicallyPrecedes($1) }
                        for i in stride(from: 0, to: cuts.count, by: 2) {
                            ranges.append(KeyRange(lower: cuts[i], upper: Int.random(in: 0..<6, using: &rng) == 0 && i == cuts.count - 2 ? nil : cuts[i + 1]))
                        }
                    }
                    let cap = Int.random(in: 0..<3, using: &rng) == 0 ? Int.random(in: 1...50, using: &rng) : Int.max
                    var expected = 0
                    try snapshot.indexIDs(index, ranges: ranges, family: family) { _ in
                        expected += 1
                        return expected < cap
                    }
                    let counted = try snapshot.indexCount(index, ranges: ranges, family: family, cap: cap)
                    #expect(counted == expected, "seed \(seed): \(index.name), family \(family.map(\.index).sorted()), ranges \(ranges), cap \(cap)")
                }
            }
        }
    }

    @Test("a term set answers as its Set for term numbers on both sides of 64, whatever the order of insertion; conjunctions of 71 terms with the index's terms at 0, 63, 64 and 70 are served by the index, those terms left out of the filter, as the scan answers, planned afresh and from the kept choice")
    func termSets() throws {
        var rng = SystemRandomNumberGenerator()
        for round in 0..<300 {
            let top = round % 3 == 0 ? 64 : round % 3 == 1 ? 70 : 300
            let terms = (0..<Int.random(in: 0...12, using: &rng)).map { _ in Int.random(in: 0..<top, using: &rng) }
            var set = SmallIntSet(), again = SmallIntSet()
            for t in terms { set.insert(t) }
            for t in (terms + terms).shuffled(using: &rng) { again.insert(t) }
            let expected = Set(terms)
            #expect(set.isEmpty == expected.isEmpty, "\(terms)")
            #expect(set == again, "\(terms)")
            for t in 0..<320 where set.contains(t) != expected.contains(t) {
                Issue.record("terms \(terms.sorted()): \(t)")
            }
            var other = set
            let extra = (0..<320).first { !expected.contains($0) && ($0 >= 64) == (round % 2 == 0) }!
            other.insert(extra)
            #expect(other != set, "\(terms) + \(extra)")
        }
        let data = try FetchTestData()
        let c = data.context()
        func conjunction(_ placed: [Int: String]) -> String {
            (0..<71).map { placed[$0] ?? "age >= 0" }.joined(separator: " AND ")
        }
        let cases: [([Int: String], String)] = [
            ([0: "name == 'Zed'"], "INDEX Person.name (name == \"Zed\")"),
            ([63: "name == 'Zed'"], "INDEX Person.name (name == \"Zed\")"),
            ([64: "name == 'Zed'"], "INDEX Person.name (name == \"Zed\")"),
            ([70: "name == 'Zed'"], "INDEX Person.name (name == \"Zed\")"),
            ([63: "name > 'B'", 64: "name < 'Eve'"], "INDEX Person.name (name > \"B\", name < \"Eve\")"),
            ([65: "name > 'B'", 70: "name < 'Eve'"], "INDEX Person.name (name > \"B\", name < \"Eve\")"),
        ]
        for (placed, plan) in cases {
            let request = FetchRequest(entity: "Employee", predicate: conjunction(placed))
            var scan = request
            scan.usesIndexes = false
            let scanned = try c.names(scan).sorted()
            #expect(!scanned.isEmpty, "\(placed)")
            for _ in 0..<3 {  // the first plans afresh and keeps the choice, the next reuse it
                let explained = try c.explain(request)
                #expect(explained.hasPrefix(plan + " → filter: age >= 0 AND"), "\(placed): \(explained)")
                #expect(!explained.contains("filter: name") && !explained.contains("AND name"), "\(placed): \(explained)")
                #expect(try c.names(request).sorted() == scanned, "\(placed)")
            }
        }
    }

    @Test("a family's index IDs and counts are the index's entries of the family's entities, as the set says; a family mask answers as its set for entity numbers on both sides of 64")
    func familyMasks() throws {
        var (rng, seed, fixture, snapshot) = try seededSnapshot("FetchPlanTests.familyMasks")
        var wrong: [String] = []
        for round in 0..<300 {
            let top = round % 3 == 0 ? 64 : round % 3 == 1 ? 70 : 300
            let family = Set((0..<Int.random(in: 0...12, using: &rng)).map { _ in EntityID(Int.random(in: 0..<top, using: &rng)) })
            let mask = ObjectSnapshot.familyMask(family)
            for e in 0..<320 where mask.contains(e) != family.contains(EntityID(e)) {
                wrong.append("family \(family.map(\.index).sorted()), entity \(e)")
            }
        }
        let firstWrong = Array(wrong.prefix(5))  // not the whole list in the message
        #expect(firstWrong.isEmpty, "seed \(seed): \(wrong.count) answers differ")
        let model = fixture.model
        for entity in model.entities {
            for index in entity.indexes + entity.uniqueConstraints where index.declaredIn == entity.id {
                // Every entry's ID, in index order, read from the tree without a mask.
                let ids = try snapshot.read(store: snapshot.layout.storeOf[index.declaredIn.index]) { (txn) throws(KeelError) -> [ObjectID] in
                    guard let tree = try snapshot.tree(txn, TreeLayout.index(index)) else { return [] }
                    return try engine { () throws(StorageError) -> [ObjectID] in
                        var cursor = try tree.cursor()
                        var out: [ObjectID] = []
                        guard try cursor.seekFirst() else { return out }
                        try cursor.walk { k, v in
                            let id = index.isUnique ? KeyEncoding.objectID(v) : KeyEncoding.objectID(k, at: k.count - KeyEncoding.objectKeySize)
                            out.append(id!)
                            return true
                        }
                        return out
                    }
                }
                var families: [Set<EntityID>] = [entity.familySet, []]
                for e in entity.family { families += [[e], entity.familySet.subtracting([e]), model.entities[e.index].familySet] }
                for family in families {
                    let expected = ids.filter { family.contains($0.entity) }
                    var got: [ObjectID] = []
                    try snapshot.indexIDs(index, ranges: [KeyRange(lower: [], upper: nil)], family: family) { id in
                        got.append(id)
                        return true
                    }
                    let counted = try snapshot.indexCount(index, ranges: [KeyRange(lower: [], upper: nil)], family: family, cap: .max)
                    #expect(got == expected && counted == expected.count, "\(index.name), family \(family.map(\.index).sorted()): \(got.count) IDs, \(counted) counted, \(expected.count) expected")
                }
                // The fixture fills Person, Employee, Student, Department and Company.
                #expect(!ids.isEmpty || !["Person", "Employee", "Department", "Company"].contains(entity.name), "\(index.name)")
            }
        }
    }

    @Test("keyOrder gives IDs in key order, equal IDs by position, whichever packing fits: one word (16 or 17 position bits), two, or none; IDs already in key order (repeats included) as they are, one pair out of order sorted")
    func keyOrderPackings() {
        var (rng, seed) = SeededGenerator.fromEnvironment("FetchPlanTests.keyOrderPackings")
        func expected(_ ids: [ObjectID]) -> [Int] {
            ids.indices.sorted { (ids[$0].entity, ids[$0].number, $0) < (ids[$1].entity, ids[$1].number, $1) }
        }
        for round in 0..<60 {
            // Lists past 2^16 (17 position bits) in rounds 1 and 2; one ID in round 3.
            let count = round == 0 ? 0 : round < 3 ? (1 << 16) + 5 : round == 3 ? 1 : Int.random(in: 1...300, using: &rng)
            // Numbers from a small range (repeats), near the packings' limits (31 bits fit
            // beside 17 position bits, 32 beside 16), or anywhere.
            let limit: UInt64 = [UInt64(40), 1 << 31, 1 << 32, 1 << 48, .max][round % 5]
            var ids: [ObjectID] = []
            ids.reserveCapacity(count)
            for _ in 0..<count {
                let entity = EntityID(rawValue: UInt16.random(in: 0...3, using: &rng) == 0 ? .max : UInt16.random(in: 0...2, using: &rng))
                let number = limit == 40 ? UInt64.random(in: 1..<40, using: &rng) : limit - 1 - UInt64.random(in: 0...20, using: &rng) * (limit / 64)
                ids.append(ObjectID(entity: entity, number: number))
            }
            // Sorted (the fast path: no sort), and sorted but for one pair out of order at the
            // start, the middle or the end (the check must fall through to the sort).
            if round % 7 == 0 { ids.sort() }
            if round % 7 == 3 || round % 7 == 5, ids.count > 1 {
                ids.sort()
                let at = [0, ids.count / 2, ids.count - 1][round % 3]
                let other = at == 0 ? 1 : at - 1
                ids.swapAt(at, other)
            }
            #expect(ObjectSnapshot.isInKeyOrder(ids) == (ids == ids.sorted()), "seed \(seed), round \(round)")
            #expect(ObjectSnapshot.keyOrder(ids) == expected(ids), "seed \(seed), round \(round), \(count) IDs below \(limit)")
        }
    }

    @Test("rows looked up a window at a time (TreeReading.rows) are the rows read one by one, for random ID sets with repeats and missing objects")
    func rowsInWindows() throws {
        var (rng, seed, fixture, snapshot) = try seededSnapshot("FetchPlanTests.rowsInWindows")
        let model = fixture.model
        let employee = try #require(model.entity(named: "Employee")?.id)
        let everyone = fixture.employees + fixture.students
        for round in 0..<40 {
            var ids = (0..<Int.random(in: 0...(round < 2 ? round : 400), using: &rng)).map { _ in everyone.randomElement(using: &rng)! }
            // Objects that were never saved (numbers past the last) have no row.
            if round % 3 == 0 { ids.append(ObjectID(entity: employee, number: 1 << 40 | UInt64(round))) }
            ids.shuffle(using: &rng)
            let store = snapshot.layout.storeOf[employee.index]
            let tree = snapshot.layout.objects[employee.index]
            let (batched, single) = try snapshot.read(store: store) { (txn) throws(KeelError) -> ([StoredObject?], [StoredObject?]) in
                let t = try snapshot.tree(txn, tree)
                let batched = try TreeReading.rows(t, ids, order: ObjectSnapshot.keyOrder(ids), fieldCount: { snapshot.layout.fieldCounts[$0.entity.index] })
                var key: [UInt8] = []
                let single = try ids.map { (id) throws(KeelError) -> StoredObject? in
                    try TreeReading.row(t, id, fieldCount: snapshot.layout.fieldCounts[id.entity.index], key: &key)
                }
                return (batched, single)
            }
            #expect(batched.count == ids.count, "seed \(seed), round \(round)")
            for (i, (a, b)) in zip(batched, single).enumerated() {
                #expect(a == b, "seed \(seed), round \(round), \(ids[i].text(in: model))")
            }
            #expect(batched.filter { $0 == nil }.count == (round % 3 == 0 ? 1 : 0), "seed \(seed), round \(round)")
        }
    }
}
