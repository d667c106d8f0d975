// Plans kept per request shape (FetchPlanner.Template, kept in PreparedShape): a request of a
// shape whose first plan's choice no value decided makes only its keys and ranges. Each test
// compares the plan a fetch runs (from the shape's entry) with one made from scratch over the same
// state — its EXPLAIN text, key ranges, filter and order — and the rows with a context that
// prepares from scratch.

import Foundation
import Testing

@testable import KeelModel

@Suite("Plans kept per request shape")
struct PlanTemplateTests {
    /// `Thing`: `a` (string) and `b` (int64) indexed, `c` with the compound index (c, b), `d` unique;
    /// without `indexes`, no index on `a` and no compound one.
    private static func model(indexes: Bool) throws -> Model {
        try ModelLoader.load(text: """
            { "name": "Kept", "version": 1, "entities": [
              { "name": "Thing", "attributes": [
                  { "name": "a", "type": "string", "indexed": \(indexes) },
                  { "name": "b", "type": "int64", "indexed": true },
                  { "name": "c", "type": "int64" },
                  { "name": "d", "type": "string" } ],
                "uniqueConstraints": [ ["d"] ]\(indexes ? #", "indexes": [ ["c", "b"] ]"# : "") } ] }
            """)
    }

    /// 300 things: `a` "Ann" for 250 of them (the others "N<i>"), `b` i % 7 below 250 (then 1000 + i),
    /// `c` i % 3, `d` "D<i>" (nil for every tenth).
    private static func store(indexes: Bool) throws -> StoreFixture {
        let fixture = try StoreFixture(model: try model(indexes: indexes))
        let context = ObjectContext(store: fixture.store)
        for i in 0..<300 {
            var values: [String: JSON] = [
                "a": .string(i < 250 ? "Ann" : "N\(i)"), "b": .int(Int64(i < 250 ? i % 7 : 1000 + i)), "c": .int(Int64(i % 3)),
            ]
            if i % 10 != 0 { values["d"] = .string("D\(i)") }
            _ = try context.insert(entity: "Thing", values: .object(.init(uniqueKeysWithValues: values.sorted { $0.key < $1.key })))
        }
        try context.save()
        return fixture
    }

    /// A plan as the executor reads it: EXPLAIN's text (no estimate: a fetch counts none), the
    /// key ranges, the filter, the order.
    private static func describe(_ plan: FetchPlan, _ model: Model) -> String {
        var ranges = ""
        switch plan.access {
        case .index(let access): ranges = access.ranges.map { "\($0.lower)..<\(String(describing: $0.upper))" }.joined(separator: " ")
        case .union(let accesses): ranges = accesses.map { $0.ranges.map { "\($0.lower)..<\(String(describing: $0.upper))" }.joined(separator: " ") }.joined(separator: " | ")
        default: break
        }
        return [
            plan.explain(in: model), ranges, plan.residual?.source.description ?? "-", "\(plan.orderedByAccess) \(plan.reverse) \(plan.usesFastPaths)",
        ].joined(separator: " ; ")
    }

    /// Runs `request` through its shape's entry (three times: the entry made, its plan kept, the
    /// kept plan used) and from scratch; the plans and the rows must agree. Returns the entry.
    @discardableResult
    private static func check(_ context: ObjectContext, _ request: FetchRequest, _ label: String) throws -> PreparedShape? {
        let model = context.model
        let state = try context.readState()
        let fresh = describe(try PreparedFetch(request, model: model).plan(in: state, explaining: false), model)
        for _ in 0..<3 {
            let kept = describe(try PreparedFetchCache.prepare(request, model: model).plan(in: state, explaining: false), model)
            #expect(kept == fresh, "\(label)")
        }
        context.preparesByShape = false
        let scratch = try context.ids(request)
        context.preparesByShape = true
        #expect(try context.ids(request) == scratch, "\(label)")
        #expect(try context.count(request) == scratch.count, "\(label)")
        return PreparedFetchCache.entry(request, model: model)
    }

    @Test("one candidate index: the choice kept, each request's ranges made from its own values")
    func rangesFromEachRequest() throws {
        let fixture = try Self.store(indexes: true)
        let context = ObjectContext(store: fixture.store)
        let model = fixture.model
        func request(_ low: JSON, _ high: JSON) -> FetchRequest {
            FetchRequest(entity: "Thing", predicate: "b >= %@ AND b < %@", args: [low, high], sort: [KeelSortDescriptor(key: "b")], limit: 5)
        }
        // Another test may empty the cache between two steps: the entry is looked for a few times.
        var kept = false
        for _ in 0..<20 where !kept {
            kept = try Self.check(context, request(1, 3), "1..<3")?.planTemplate != nil
        }
        #expect(kept, "a one-candidate shape keeps its plan")
        var seen: [[ObjectID]] = []
        for (low, high) in [(1, 3), (2, 6), (5, 2), (1001, 1300), (0, 1)] as [(Int64, Int64)] {
            try Self.check(context, request(.int(low), .int(high)), "\(low)..<\(high)")
            let ids = try context.ids(request(.int(low), .int(high)))
            seen.append(ids)
            // Each request's own range: a range kept from the first request would give its rows again.
            let state = try context.readState()
            for id in ids {
                let b = try #require(try state.object(id)?.values[model.field("Thing", "b")])
                guard case .int(let v) = b else { Issue.record("b is \(b)"); continue }
                #expect(v >= low && v < high, "\(v) outside \(low)..<\(high)")
            }
        }
        #expect(seen[0] != seen[1] && seen[2].isEmpty && seen[3].count == 5)
        // A value outside the key family (nil: no ordering matches it) makes no atom: planned afresh.
        try Self.check(context, request(.null, .int(3)), "nil..<3")
        try Self.check(context, request(.double(1.5), .int(4)), "1.5..<4")
        // The reversed sort: read backwards, as fresh.
        let backwards = FetchRequest(
            entity: "Thing", predicate: "b > %@", args: [.int(2)], sort: [KeelSortDescriptor(key: "b", ascending: false)], limit: 3)
        try Self.check(context, backwards, "b > 2 descending")
        var descending = backwards
        descending.args = [.int(4)]
        try Self.check(context, descending, "b > 4 descending")
    }

    @Test("the same shape with values that change the choice: counted candidates are never kept")
    func valuesDecideTheChoice() throws {
        let fixture = try Self.store(indexes: true)
        let context = ObjectContext(store: fixture.store)
        // `a` and `b` both candidates: the count chooses — `b` for ("Ann", 1010), `a` for ("N260", 3).
        let shape = "a == %@ AND b == %@"
        var texts: [String] = []
        for args: [JSON] in [["Ann", 1010], ["N260", 3], ["Ann", 1010], ["N260", 3]] {
            let request = FetchRequest(entity: "Thing", predicate: shape, args: args)
            let entry = try Self.check(context, request, "\(args)")
            #expect(entry?.planTemplate == nil, "a choice made by counting was kept")
            texts.append(try context.plan(request).explain(in: fixture.model))
        }
        #expect(texts[0].hasPrefix("INDEX Thing.b") && texts[1].hasPrefix("INDEX Thing.a"), "\(texts)")
        // A sort another index gives makes that index a candidate too (`c IN` with the (c, b) index, `b`'s).
        for args: [JSON] in [[[1]], [[1, 2]], [[0]]] {
            try Self.check(context, FetchRequest(entity: "Thing", predicate: "c IN %@", args: args, sort: [KeelSortDescriptor(key: "b")]), "c IN \(args)")
        }
    }

    @Test("a kept choice is left when a value changes what it rests on: points, nil, a unique column")
    func atomShapes() throws {
        let fixture = try Self.store(indexes: true)
        let context = ObjectContext(store: fixture.store)
        // One point, then two (another number of keys), nil among them (index trees hold nils).
        for args: [JSON] in [[["N260"]], [["N261"]], [["N262", "Ann"]], [[.null, "N263"]], [["N264"]]] {
            try Self.check(context, FetchRequest(entity: "Thing", predicate: "a IN %@", args: args), "a IN \(args)")
        }
        // A unique column: nil is not in its tree, so `d IN {nil, …}` cannot be read there (a scan).
        for args: [JSON] in [[["D11"]], [["D12"]], [[.null, "D13"]], [["D14", "D15"]], [["D16"]]] {
            try Self.check(context, FetchRequest(entity: "Thing", predicate: "d IN %@", args: args), "d IN \(args)")
        }
        #expect(try context.plan(FetchRequest(entity: "Thing", predicate: "d IN %@", args: [[.null, "D13"]])).explain(in: fixture.model).hasPrefix("SCAN"))
        // With nil among `d`'s points only `b`'s index is a candidate (its choice kept); without,
        // `d`'s unique tree is one too and the count picks it: the kept choice must be left.
        let both = "d IN %@ AND b == %@"
        for args: [JSON] in [[[.null, "D11"], 4], [[.null, "D21"], 0], [["D11"], 4], [["D21"], 0], [[.null, "D11"], 4]] {
            try Self.check(context, FetchRequest(entity: "Thing", predicate: both, args: args), "d, b \(args)")
        }
        #expect(try context.plan(FetchRequest(entity: "Thing", predicate: both, args: [["D11"], 4])).explain(in: fixture.model).hasPrefix("INDEX Thing.d"))
        #expect(try context.plan(FetchRequest(entity: "Thing", predicate: both, args: [[.null, "D11"], 4])).explain(in: fixture.model).hasPrefix("INDEX Thing.b"))
        // A term no index serves stays the filter, made from each request's values.
        for args: [JSON] in [["Ann", 2], ["Ann", 1], ["N270", 0]] {
            try Self.check(context, FetchRequest(entity: "Thing", predicate: "a == %@ AND c == %@", args: args), "a, c \(args)")
        }
    }

    @Test("two models, two stores, a child context: each plan over its own index set")
    func indexSets() throws {
        // The same request text on a model with `a` indexed and one without: another model is
        // another entry, and a kept plan never crosses to the other store.
        let withIndex = try Self.store(indexes: true)
        let without = try Self.store(indexes: false)
        let one = ObjectContext(store: withIndex.store)
        let other = ObjectContext(store: without.store)
        for name in ["Ann", "N251", "N299", "Ann"] {
            let request = FetchRequest(entity: "Thing", predicate: "a == %@", args: [.string(name)])
            try Self.check(one, request, "indexed \(name)")
            try Self.check(other, request, "not indexed \(name)")
            #expect(try one.plan(request).explain(in: withIndex.model).hasPrefix("INDEX Thing.a"))
            #expect(try other.plan(request).explain(in: without.model).hasPrefix("SCAN"))
            #expect(try one.ids(request).count == (name == "Ann" ? 250 : 1))
            #expect(try other.ids(request).count == (name == "Ann" ? 250 : 1))
        }
        // A child context reads its parent without index reads: a scan, though the shape kept an index plan.
        let child = ObjectContext(parent: one)
        let request = FetchRequest(entity: "Thing", predicate: "a == %@", args: ["N252"])
        var kept = false
        for _ in 0..<20 where !kept {
            kept = try Self.check(one, request, "parent")?.planTemplate != nil
        }
        #expect(kept)
        let state = try child.readState()
        let plan = try PreparedFetchCache.prepare(request, model: child.model).plan(in: state, explaining: false)
        #expect(plan.explain(in: child.model).hasPrefix("SCAN"))
        #expect(try child.ids(request) == (try one.ids(request)))
        // A pending insert in the parent: seen by the index plan kept for the shape.
        _ = try one.insert(entity: "Thing", values: ["a": "N252", "b": 5, "c": 1])
        #expect(try one.ids(request).count == 2)
        try Self.check(one, request, "pending")
    }

    @Test("to-one comparisons and semi-joins are planned per request: their targets depend on the values")
    func toOneNotKept() throws {
        let data = try FetchFixture(employees: 120, students: 10, seed: 77)
        let context = data.context()
        let model = data.model
        for d in data.departments.prefix(4) {
            let byID = try Self.check(
                context, FetchRequest(entity: "Employee", predicate: "department == %@ AND salary > %@", args: [.string(d.text(in: model)), 100]), "department")
            #expect(byID?.planTemplate == nil)
        }
        for name in ["Sales", "HR", "Nowhere", "Design"] {
            let semiJoin = try Self.check(context, FetchRequest(entity: "Employee", predicate: "department.name == %@", args: [.string(name)]), name)
            #expect(semiJoin?.planTemplate == nil)
        }
    }
}
