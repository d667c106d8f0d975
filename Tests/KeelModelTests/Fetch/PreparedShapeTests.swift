// Prepared requests by shape (Fetch/PreparedFetchCache.swift): a request whose shape was prepared
// before binds only its arguments and variables. Each test compares with the same request bound
// from scratch (`PreparedFetch(_:model:)`, or a context with `preparesByShape` off).

import Foundation
import Synchronization
import Testing

@testable import KeelModel

@Suite("Prepared requests by shape")
struct PreparedShapeTests {
    private static func thing(_ attributes: String, indexed: Bool) throws -> Model {
        try ModelLoader.load(text: """
            { "name": "Things", "version": 1, "entities": [
              { "name": "Thing", "attributes": [ \(attributes) ]\(indexed ? #", "indexes": [ ["a"] ]"# : "") } ] }
            """)
    }

    /// The bound predicate's comparison: the field it reads and the constant it compares with.
    private static func comparison(_ prepared: PreparedFetch) -> (field: Int, constant: Value)? {
        guard case .comparison(let c)? = prepared.predicate?.root, case .field(let f) = c.left, case .constant(let v) = c.right else { return nil }
        return (f, v)
    }

    @Test("another model never meets an entry made for the first: fields, types and keys bound against its own")
    func modelIdentity() throws {
        let first = try Self.thing(#"{ "name": "a", "type": "string" }, { "name": "b", "type": "int64" }"#, indexed: false)
        // The same names in the other order, `a` an integer, and an index: other field numbers and types.
        let second = try Self.thing(#"{ "name": "b", "type": "int64" }, { "name": "a", "type": "int64" }"#, indexed: true)
        let request = FetchRequest(entity: "Thing", predicate: "a == %@", args: [.string("7")])
        let onFirst = try PreparedFetchCache.prepare(request, model: first)
        _ = try PreparedFetchCache.prepare(request, model: first)  // the entry's
        #expect(Self.comparison(onFirst)?.field == 0)
        #expect(Self.comparison(onFirst)?.constant == .string("7"))
        // On the second model "7" is no integer: refused as from scratch, not bound as a string in field 0.
        let scratch = Result { () throws(KeelError) in try PreparedFetch(request, model: second) }
        let cached = Result { () throws(KeelError) in try PreparedFetchCache.prepare(request, model: second) }
        guard case .failure(let e1) = scratch, case .failure(let e2) = cached else {
            Issue.record("\"7\" against an int64 attribute was accepted")
            return
        }
        #expect(e1.message == e2.message && e1.code == .predicate)
        var numeric = request
        numeric.args = [.int(7)]
        for _ in 0..<2 {
            let prepared = try PreparedFetchCache.prepare(numeric, model: second)
            #expect(Self.comparison(prepared)?.field == 1)
            #expect(Self.comparison(prepared)?.constant == .int(7))
        }
        // A copy of a model is the same model; a model loaded again is another.
        #expect(first.identity == { let copy = first; return copy.identity }())
        #expect(first.identity != (try Self.thing(#"{ "name": "a", "type": "string" }, { "name": "b", "type": "int64" }"#, indexed: false)).identity)
    }

    @Test("arguments of another type than the first binding's: converted or refused as from scratch")
    func argumentTypes() throws {
        let data = try FetchFixture(employees: 200, students: 30, seed: 51)
        let c = data.context()
        let model = data.model
        let sequences: [(String, [JSON])] = [
            ("age > %@", [.int(30), .double(29.5), .string("x"), .null, .int(60), .array([.int(1)]), .bool(true)]),
            ("name == %@", [.string("Anna"), .int(3), .string("Bob"), .null, .array(["Anna"])]),
            ("name IN %@", [.array(["Anna", "Bob"]), .string("Anna"), .array([]), .array([.null, "Kim"])]),
            ("salary > %@", [.string("1500.50"), .int(2000), .double(1999.5), .string("lots")]),
            ("department == %@", [.string(data.departments[0].text(in: model)), .string("Company/1"), .null, .int(4)]),
            ("hiredAt > %@", [.string("2020-06-01T00:00:00Z"), .string("June"), .int(0)]),
        ]
        for (text, args) in sequences {
            for arg in args {
                let request = FetchRequest(entity: "Employee", predicate: text, args: [arg], sort: [KeelSortDescriptor(key: "name")])
                var answers: [String] = []
                for byShape in [false, true, true] {
                    c.preparesByShape = byShape
                    do {
                        answers.append(try c.ids(request).map { $0.text(in: model) }.joined(separator: " ") + " | " + (try c.explain(request)))
                    } catch {
                        answers.append("error: \(error)")
                    }
                }
                #expect(Set(answers).count == 1, "\(text) with \(arg): \(answers)")
            }
        }
        // Too many and too few arguments for a prepared shape: the same refusals.
        c.preparesByShape = true
        _ = try c.ids(FetchRequest(entity: "Employee", predicate: "age > %@", args: [.int(1)]))
        for args: [JSON] in [[], [.int(1), .int(2)]] {
            let request = FetchRequest(entity: "Employee", predicate: "age > %@", args: args)
            let scratch = Result { () throws(KeelError) in try PreparedFetch(request, model: model) }
            let cached = Result { () throws(KeelError) in try PreparedFetchCache.prepare(request, model: model) }
            guard case .failure(let e1) = scratch, case .failure(let e2) = cached else {
                Issue.record("\(args.count) arguments for one %@ accepted")
                continue
            }
            #expect(e1.message == e2.message && e1.details == e2.details)
        }
        // No predicate but arguments: refused from the entry too.
        _ = try c.ids(FetchRequest(entity: "Employee", limit: 3))
        expectKeelError(.predicate) { _ = try c.ids(FetchRequest(entity: "Employee", args: [.int(1)], limit: 3)) }
    }

    @Test("$VARS are read per request, a missing one refused; pending changes are seen")
    func variablesAndPending() throws {
        let data = try FetchFixture(employees: 200, students: 30, seed: 52)
        let c = data.context()
        let model = data.model
        var last: [ObjectID]? = nil
        for min in [20, 40, 60, 40] {
            let request = FetchRequest(entity: "Employee", predicate: "age > $MIN AND name BEGINSWITH %@", args: ["A"], vars: ["MIN": .int(Int64(min))], sort: [KeelSortDescriptor(key: "age")])
            c.preparesByShape = false
            let fresh = try c.ids(request)
            c.preparesByShape = true
            let prepared = try c.ids(request)
            #expect(prepared == fresh, "MIN \(min)")
            if let last, min != 40 { #expect(prepared != last) }
            last = prepared
        }
        expectKeelError(.predicate) {
            _ = try c.ids(FetchRequest(entity: "Employee", predicate: "age > $MIN AND name BEGINSWITH %@", args: ["A"], sort: [KeelSortDescriptor(key: "age")]))
        }
        // A pending insert, update and delete, seen by a request prepared from its entry.
        let request = { (name: String) in FetchRequest(entity: "Employee", predicate: "name == %@", args: [.string(name)]) }
        _ = try c.ids(request("Anna"))
        var rng = SeededGenerator(seed: 53)
        guard case .object(var values) = FetchFixture.randomEmployee(&rng, departments: data.departments, model: model) else {
            Issue.record("an employee's values are an object")
            return
        }
        values["name"] = "Zelda"
        let inserted = try c.insert(entity: "Employee", values: .object(values))
        #expect(try c.ids(request("Zelda")) == [inserted])
        let anna = try c.ids(request("Anna"))
        if let first = anna.first {
            try c.update(first, values: ["name": "Yorick"])
            #expect(try c.ids(request("Yorick")) == [first])
            #expect(try c.ids(request("Anna")) == Array(anna.dropFirst()))
            _ = try c.delete(first)
            #expect(try c.ids(request("Yorick")).isEmpty)
        }
    }

    @Test("fetched properties ($FETCH_SOURCE) in a request prepared from its entry: each object its own")
    func fetchedProperties() throws {
        let data = try FetchTestData()
        let c = data.context()
        func comments(_ row: FetchRow) -> [String] {
            (row.object?.included["feedbackList"] ?? []).compactMap { if case .string(let s)? = $0["comment"] { s } else { nil } }
        }
        let request = FetchRequest(entity: "Book", sort: [KeelSortDescriptor(key: "title")], include: ["feedbackList"])
        for _ in 0..<3 { #expect(try c.fetch(request).map(comments) == [["meh"], ["great", "long"]]) }
        _ = try c.insert(entity: "Feedback", values: ["bookUUID": .string(FetchTestData.u1), "rating": 5, "comment": "best"])
        #expect(try c.fetch(request).map(comments) == [["meh"], ["best", "great", "long"]])
    }

    @Test("a request with large arguments is not kept (an entry holds its first request), but uses an entry made by a small one")
    func largeArgumentsNotKept() throws {
        // A model of its own: no other test's requests share these shapes.
        let model = try Self.thing(#"{ "name": "a", "type": "int64" }, { "name": "b", "type": "string" }"#, indexed: true)
        let big = FetchRequest(entity: "Thing", predicate: "a IN %@", args: [.array((0..<1_000).map { .int($0) })])
        #expect(!PreparedFetchCache.keepsArguments(big))
        let fromScratch = try PreparedFetchCache.prepare(big, model: model)
        #expect(!PreparedFetchCache.holds(big, model: model))
        let longText = FetchRequest(entity: "Thing", predicate: "b == %@", args: [.string(String(repeating: "x", count: 5_000))])
        #expect(!PreparedFetchCache.keepsArguments(longText))
        _ = try PreparedFetchCache.prepare(longText, model: model)
        #expect(!PreparedFetchCache.holds(longText, model: model))
        let bigVariable = FetchRequest(entity: "Thing", predicate: "a IN $S", vars: ["S": .array((0..<1_000).map { .int($0) })])
        #expect(!PreparedFetchCache.keepsArguments(bigVariable))
        // Small arguments are kept (another test may empty the cache between the two steps: a few tries).
        let small = FetchRequest(entity: "Thing", predicate: "a IN %@", args: [.array([.int(1), .int(2)])])
        #expect(PreparedFetchCache.keepsArguments(small))
        var held = false
        for _ in 0..<20 where !held {
            _ = try PreparedFetchCache.prepare(small, model: model)
            held = PreparedFetchCache.holds(small, model: model)
        }
        #expect(held)
        // The large request again, now through the small one's entry: bound as from scratch.
        let throughEntry = try PreparedFetchCache.prepare(big, model: model)
        guard case .comparison(let c1)? = fromScratch.predicate?.root, case .comparison(let c2)? = throughEntry.predicate?.root else {
            Issue.record("no comparison bound")
            return
        }
        #expect("\(c1)" == "\(c2)")
    }

    @Test("many threads, many shapes: every request bound as from scratch; the cache stays bounded")
    func concurrentAndBounded() throws {
        let model = try TestModels.projectModel()
        let texts = ["name == %@", "age > %@", "name BEGINSWITH %@ AND age < %@", "age BETWEEN %@", "department.name == %@", "salary > %@"]
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var rng = SeededGenerator(seed: UInt64(60 + thread))
            for i in 0..<400 {
                let text = texts[Int.random(in: 0..<texts.count, using: &rng)]
                let args: [JSON] = [.int(Int64.random(in: 1...80, using: &rng)), .string("B"), .array([.int(3), .int(9)])].shuffled(using: &rng)
                let count = text.components(separatedBy: "%@").count - 1
                // Limits vary so that the shapes outnumber the cache's capacity.
                let request = FetchRequest(entity: "Employee", predicate: text, args: Array(args.prefix(count)), limit: (thread * 400 + i) % 700)
                let scratch = Result { () throws(KeelError) in try PreparedFetch(request, model: model) }
                let cached = Result { () throws(KeelError) in try PreparedFetchCache.prepare(request, model: model) }
                let same: Bool
                switch (scratch, cached) {
                case (.success(let a), .success(let b)):
                    same = a.limit == b.limit && "\(String(describing: a.predicate?.source))" == "\(String(describing: b.predicate?.source))"
                        && Self.comparison(a).map { "\($0)" } == Self.comparison(b).map { "\($0)" }
                case (.failure(let a), .failure(let b)): same = a.message == b.message
                default: same = false
                }
                if !same { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(PreparedFetchCache.count <= PreparedFetchCache.capacity)
    }
}
