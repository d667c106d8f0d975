// Prepared fetch requests (Fetch/PreparedFetchRequest.swift): `ObjectContext.prepare(_:)` once, then
// `fetch(_:args:vars:)`, `count` and `explain` with each call's own arguments. Every answer is
// compared with the same request carrying those arguments, bound from scratch by a context that
// does not prepare by shape.

import Foundation
import Testing

@testable import KeelModel

@Suite("Prepared fetch requests")
struct PreparedRequestTests {
    /// The request's answers in `context`: its IDs, count and EXPLAIN, or its error.
    private static func answers(_ context: ObjectContext, _ run: () throws -> ([ObjectID], Int, String)) -> String {
        do {
            let (ids, count, plan) = try run()
            return "\(ids.map { "\($0.entity.index)/\($0.number)" }) | \(count) | \(plan)"
        } catch {
            return "error: \(error)"
        }
    }

    private static func scratch(_ context: ObjectContext, _ request: FetchRequest) -> String {
        context.preparesByShape = false
        defer { context.preparesByShape = true }
        return answers(context) { (try context.ids(request), try context.count(request), try context.explain(request)) }
    }

    private static func prepared(_ context: ObjectContext, _ prepared: PreparedFetchRequest, _ args: [JSON], _ vars: [String: JSON] = [:]) -> String {
        answers(context) {
            (try context.fetch(prepared, args: args, vars: vars).map(\.id), try context.count(prepared, args: args, vars: vars),
             try context.explain(prepared, args: args, vars: vars))
        }
    }

    @Test("each call's arguments: rows, counts, plans and errors as the request bound from scratch")
    func argumentsPerCall() throws {
        let data = try FetchFixture(employees: 300, students: 40, seed: 71)
        let c = data.context()
        let model = data.model
        let cases: [(FetchRequest, [[JSON]])] = [
            (FetchRequest(entity: "Employee", predicate: "name == %@", args: ["Anna"]),
             [["Anna"], ["Bob"], ["Nobody"], [.null], [.int(3)], [], ["Anna", "Bob"], ["Kim"]]),
            (FetchRequest(entity: "Employee", predicate: "name >= %@", args: ["A"], sort: [KeelSortDescriptor(key: "name")], limit: 10),
             [["A"], ["Kim"], ["Zz"], ["B"], [.array(["x"])]]),
            (FetchRequest(entity: "Employee", predicate: "age > %@ AND name BEGINSWITH[c] %@", args: [30, "a"], sort: [KeelSortDescriptor(key: "age", ascending: false)]),
             [[30, "a"], [60, "k"], [.double(40.5), "B"], ["x", "a"], [18, .null]]),
            (FetchRequest(entity: "Employee", predicate: "department == %@ AND salary > %@", args: [.string(data.departments[0].text(in: model)), 2000]),
             [[.string(data.departments[0].text(in: model)), 2000], [.string(data.departments[3].text(in: model)), 5000], [.null, 1000], ["Company/1", 10]]),
            (FetchRequest(entity: "Employee", predicate: "department.name == %@", args: ["Sales"]), [["Sales"], ["HR"], ["Nowhere"]]),
            (FetchRequest(entity: "Employee", predicate: "name IN %@", args: [.array(["Anna", "Bob"])], limit: 7, offset: 1),
             [[.array(["Anna", "Bob"])], [.array(["Kim"])], [.array([])], ["Eve"]]),
            (FetchRequest(entity: "Person", sort: [KeelSortDescriptor(key: "name")], limit: 5), [[], [.int(1)]]),
        ]
        for (request, calls) in cases {
            let p = try c.prepare(request)
            for args in calls + calls {
                var fresh = request
                fresh.args = args
                #expect(Self.prepared(c, p, args) == Self.scratch(c, fresh), "\(request.predicate ?? "-") with \(args)")
            }
        }
        // The arguments differ between calls: a run bound with the prepared request's own gives other rows.
        let p = try c.prepare(FetchRequest(entity: "Employee", predicate: "name == %@", args: ["Anna"]))
        let anna = try c.fetch(p, args: ["Anna"]).map(\.id), bob = try c.fetch(p, args: ["Bob"]).map(\.id)
        #expect(!anna.isEmpty && !bob.isEmpty && Set(anna).isDisjoint(with: bob))
        // The shared cache is not used (nor filled) by a prepared request.
        let unique = FetchRequest(entity: "Employee", predicate: "name == %@ AND age != 1234567", args: ["Anna"])
        let q = try c.prepare(unique)
        _ = try c.fetch(q, args: ["Bob"])
        #expect(!PreparedFetchCache.holds(unique, model: model))
    }

    @Test("$VARS per call, a missing one refused; pending changes seen; errors thrown by prepare")
    func variablesPendingAndErrors() throws {
        let data = try FetchFixture(employees: 200, students: 30, seed: 72)
        let c = data.context()
        let request = FetchRequest(entity: "Employee", predicate: "age > $MIN AND name BEGINSWITH %@", args: ["A"], vars: ["MIN": 20], sort: [KeelSortDescriptor(key: "age")])
        let p = try c.prepare(request)
        for min in [20, 50, 35] {
            var fresh = request
            fresh.vars = ["MIN": .int(Int64(min))]
            #expect(Self.prepared(c, p, ["A"], ["MIN": .int(Int64(min))]) == Self.scratch(c, fresh), "MIN \(min)")
        }
        expectKeelError(.predicate) { _ = try c.fetch(p, args: ["A"]) }
        // Pending changes of the context, seen by the prepared request.
        let byName = try c.prepare(FetchRequest(entity: "Employee", predicate: "name == %@", args: ["Anna"]))
        var rng = SeededGenerator(seed: 73)
        guard case .object(var values) = FetchFixture.randomEmployee(&rng, departments: data.departments, model: data.model) else {
            Issue.record("an employee's values are an object")
            return
        }
        values["name"] = "Zelda"
        let inserted = try c.insert(entity: "Employee", values: .object(values))
        #expect(try c.fetch(byName, args: ["Zelda"]).map(\.id) == [inserted])
        try c.update(inserted, values: ["name": "Yorick"])
        #expect(try c.fetch(byName, args: ["Zelda"]).isEmpty)
        #expect(try c.count(byName, args: ["Yorick"]) == 1)
        // Names are checked when prepared.
        expectKeelError(.noSuchEntity) { _ = try c.prepare(FetchRequest(entity: "Nothing")) }
        expectKeelError(.noSuchProperty) { _ = try c.prepare(FetchRequest(entity: "Employee", properties: ["nope"])) }
        expectKeelError(.predicate) { _ = try c.prepare(FetchRequest(entity: "Employee", predicate: "nope == %@", args: [1])) }
        expectKeelError(.predicate) { _ = try c.prepare(FetchRequest(entity: "Employee", predicate: "name == %@")) }
    }

    @Test("a kept plan: the prepared request's own, each call's ranges from its arguments")
    func planKept() throws {
        let data = try FetchFixture(employees: 300, students: 20, seed: 74)
        let c = data.context()
        let p = try c.prepare(FetchRequest(entity: "Employee", predicate: "name >= %@ AND name < %@", args: ["A", "B"], sort: [KeelSortDescriptor(key: "name")]))
        #expect(p.shape.planTemplate == nil)
        for (low, high) in [("A", "C"), ("K", "L"), ("B", "A"), ("E", "Z"), ("A", "C")] {
            var fresh = p.request
            fresh.args = [.string(low), .string(high)]
            #expect(Self.prepared(c, p, [.string(low), .string(high)]) == Self.scratch(c, fresh), "\(low)..<\(high)")
            let names = try c.fetch(p, args: [.string(low), .string(high)]).compactMap { row -> String? in
                if case .string(let s)? = row.object?["name"] { s } else { nil }
            }
            #expect(names.allSatisfy { $0 >= low && $0 < high }, "\(low)..<\(high): \(names)")
            #expect(names == names.sorted())
        }
        #expect(p.shape.planTemplate != nil, "the one-candidate shape keeps its plan in the prepared request")
    }

    @Test("a context of another model prepares the request afresh: fields and types its own")
    func otherModel() throws {
        func store(_ attributes: String) throws -> StoreFixture {
            let model = try ModelLoader.load(text: """
                { "name": "Things", "version": 1, "entities": [
                  { "name": "Thing", "attributes": [ \(attributes) ], "indexes": [ ["a"] ] } ] }
                """)
            let fixture = try StoreFixture(model: model)
            let context = ObjectContext(store: fixture.store)
            for i in 0..<40 {
                _ = try context.insert(entity: "Thing", values: ["a": .int(Int64(i % 5)), "b": .int(Int64(i))])
            }
            try context.save()
            return fixture
        }
        // The same names in the other order, so `a` is field 0 on the first model and field 1 on the second.
        let first = try store(#"{ "name": "a", "type": "int64" }, { "name": "b", "type": "int64" }"#)
        let second = try store(#"{ "name": "b", "type": "int64" }, { "name": "a", "type": "int64" }"#)
        let c1 = ObjectContext(store: first.store), c2 = ObjectContext(store: second.store)
        let p = try c1.prepare(FetchRequest(entity: "Thing", predicate: "a == %@ AND b < %@", args: [1, 20], sort: [KeelSortDescriptor(key: "b")]))
        for (a, b) in [(1, 20), (3, 40), (0, 7)] as [(Int64, Int64)] {
            var fresh = p.request
            fresh.args = [.int(a), .int(b)]
            #expect(Self.prepared(c2, p, [.int(a), .int(b)]) == Self.scratch(c2, fresh))
            #expect(Self.prepared(c1, p, [.int(a), .int(b)]) == Self.scratch(c1, fresh))
            // Bound against the second model's fields: its own objects with a == `a` and b < `b`.
            let rows = try c2.fetch(p, args: [.int(a), .int(b)])
            #expect(rows.count == (0..<Int64(40)).filter { $0 % 5 == a && $0 < b }.count)
            for row in rows {
                #expect(row.object?["a"] == .int(a))
            }
        }
    }
}
