// The parsed-predicate cache (Predicate/PredicateCache.swift): one text reused with other
// arguments gives each request its own answers, the same text bound for another entity or read
// through other indexes is bound afresh, and refused texts keep failing with their position.

import Foundation
import Testing

@testable import KeelModel

@Suite("Prepared fetch cache")
struct PreparedFetchCacheTests {
    @Test("one predicate text with many argument values: each request gets its own matches, as a scan and as literals give")
    func sameTextOtherArgs() throws {
        let data = try FetchFixture(employees: 300, students: 40, seed: 41)
        let c = data.context()
        for name in FetchFixture.names + ["Nobody"] {
            let cached = FetchRequest(entity: "Employee", predicate: "name == %@", args: [.string(name)], sort: [KeelSortDescriptor(key: "age")])
            var scan = cached
            scan.usesIndexes = false
            let literal = FetchRequest(entity: "Employee", predicate: "name == \"\(name)\"", sort: [KeelSortDescriptor(key: "age")])
            let ids = try c.ids(cached)
            #expect(ids == (try c.ids(scan)))
            #expect(ids == (try c.ids(literal)))
            #expect(try c.count(cached) == ids.count)
        }
        for (i, d) in data.departments.enumerated() {
            let arg = JSON.string(d.text(in: data.model))
            let request = FetchRequest(entity: "Employee", predicate: "department == %@ AND salary > %@", args: [arg, .int(Int64(1000 + 500 * i))])
            var scan = request
            scan.usesIndexes = false
            // No sort: the index gives (department, salary) order, the scan ID order.
            #expect(try c.ids(request).sorted() == (try c.ids(scan)), "department \(i)")
            #expect(try c.count(request) == (try c.ids(scan)).count, "department \(i)")
        }
    }

    @Test("the same text is bound per entity and per model: another entity's fields and indexes, unknown keys refused there")
    func sameTextOtherEntity() throws {
        let data = try FetchFixture(employees: 200, students: 60, seed: 42)
        let c = data.context()
        let text = "name BEGINSWITH %@"
        for entity in ["Employee", "Student", "Person", "Department"] {
            let request = FetchRequest(entity: entity, predicate: text, args: ["S"], sort: [KeelSortDescriptor(key: "name")])
            var scan = request
            scan.usesIndexes = false
            #expect(try c.ids(request) == (try c.ids(scan)), "\(entity)")
        }
        // Parsed (and cached) for Employee, refused for Company which has no `salary`.
        _ = try c.ids(FetchRequest(entity: "Employee", predicate: "salary > %@", args: [.int(10)]))
        #expect(throws: KeelError.self) { try c.ids(FetchRequest(entity: "Company", predicate: "salary > %@", args: [.int(10)])) }
        // Too many or too few arguments for a cached text are still refused.
        #expect(throws: KeelError.self) { try c.ids(FetchRequest(entity: "Employee", predicate: "salary > %@", args: [])) }
        #expect(throws: KeelError.self) { try c.ids(FetchRequest(entity: "Employee", predicate: "salary > %@", args: [.int(1), .int(2)])) }
    }

    @Test("a refused text fails the same way every time, with its position")
    func refusedTextsAreNotCached() throws {
        let data = try FetchFixture(employees: 20, students: 5, seed: 43)
        let c = data.context()
        for _ in 0..<3 {
            do {
                _ = try c.ids(FetchRequest(entity: "Employee", predicate: "name == == 'x'"))
                Issue.record("a syntax error was accepted")
            } catch let error as KeelError {
                #expect(error.code == .predicate)
                #expect(error.details?["position"] != nil)
            }
        }
    }

    @Test("the cache hands back the tree a fresh parse gives")
    func cachedParseIsTheParse() throws {
        for text in ["name == %@", "age > 3 AND (name BEGINSWITH[cd] 'a' OR salary < 100)", "ANY computers.name == $N", "TRUEPREDICATE"] {
            #expect(try PredicateCache.parse(text) == (try KeelPredicate.parse(text)))
            #expect(try PredicateCache.parse(text) == (try KeelPredicate.parse(text)))
        }
    }
}
