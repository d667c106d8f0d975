// Sort descriptors on the fixed data set: several keys, key paths through to-one, ascending and
// descending, case-insensitive, nil first ascending and last descending, ties by object ID
// whatever the input order.

import Testing

@testable import KeelModel

@Suite("Sort descriptors")
struct ObjectOrderingTests {
    private func sorted(_ entity: String, _ descriptors: [KeelSortDescriptor], shuffleSeed: UInt64? = nil) throws -> [String] {
        let model = PredicateFixture.model
        let e = try #require(model.entity(named: entity))
        let ordering = try ObjectOrdering(descriptors, entity: e.id, model: model)
        var objects = PredicateFixture.graph.all(entity)
        if let shuffleSeed {
            var rng = SeededGenerator(seed: shuffleSeed)
            objects.shuffle(using: &rng)
        }
        return try ordering.sorted(objects, in: PredicateFixture.graph).map(PredicateFixture.label)
    }

    @Test("strings by Unicode scalar order, or case-folded")
    func strings() throws {
        #expect(try sorted("Employee", [KeelSortDescriptor(key: "name")]) == ["Alice", "Chloé", "David", "Eve", "Zed", "bob"])
        #expect(try sorted("Employee", [KeelSortDescriptor(key: "name", caseInsensitive: true)]) == ["Alice", "bob", "Chloé", "David", "Eve", "Zed"])
        #expect(
            try sorted("Employee", [KeelSortDescriptor(key: "name", ascending: false, caseInsensitive: true)])
                == ["Zed", "Eve", "David", "Chloé", "bob", "Alice"])
    }

    @Test("nil sorts first ascending and last descending")
    func nilOrder() throws {
        #expect(try sorted("Employee", [KeelSortDescriptor(key: "age")]) == ["David", "bob", "Alice", "Eve", "Chloé", "Zed"])
        #expect(try sorted("Employee", [KeelSortDescriptor(key: "age", ascending: false)]) == ["Zed", "Chloé", "Eve", "Alice", "bob", "David"])
        #expect(try sorted("Employee", [KeelSortDescriptor(key: "hiredAt")]) == ["Chloé", "David", "Zed", "Eve", "Alice", "bob"])
    }

    @Test("several keys, through to-one relationships (a dangling one reads as nil)")
    func keyPaths() throws {
        #expect(
            try sorted("Employee", [KeelSortDescriptor(key: "department.name"), KeelSortDescriptor(key: "name")])
                == ["David", "Zed", "Chloé", "Eve", "Alice", "bob"])
        #expect(
            try sorted("Employee", [KeelSortDescriptor(key: "department.code", ascending: false), KeelSortDescriptor(key: "salary", ascending: false)])
                == ["Chloé", "Eve", "Alice", "bob", "David", "Zed"])
        #expect(try sorted("Computer", [KeelSortDescriptor(key: "owner.name"), KeelSortDescriptor(key: "price")]) == ["ThinkPad", "MacBook Pro", "Desktop?", "Computer/4"])
        #expect(try sorted("Person", [KeelSortDescriptor(key: "age", ascending: false)]).prefix(2) == ["Zed", "Chloé"])
    }

    @Test("decimals by value, booleans false first, ties by object ID whatever the input order")
    func ties() throws {
        #expect(try sorted("Employee", [KeelSortDescriptor(key: "salary")]) == ["Zed", "bob", "David", "Alice", "Eve", "Chloé"])
        for seed in UInt64(1)...20 {
            #expect(try sorted("Employee", [KeelSortDescriptor(key: "isManager")], shuffleSeed: seed) == ["bob", "Chloé", "David", "Zed", "Alice", "Eve"])
            #expect(try sorted("Employee", [], shuffleSeed: seed) == allEmployees)
        }
    }

    @Test("unknown keys, to-many keys and aggregates are refused")
    func refusals() throws {
        let model = PredicateFixture.model
        let employee = try #require(model.entity(named: "Employee"))
        let department = try #require(model.entity(named: "Department"))
        for (entity, key) in [(employee, "nmae"), (employee, "department.nmae"), (department, "employees"), (department, "employees.@count"), (employee, "name =="), (employee, "")] {
            #expect {
                _ = try ObjectOrdering([KeelSortDescriptor(key: key)], entity: entity.id, model: model)
            } throws: { error in
                (error as? KeelError)?.code == .noSuchProperty && (error as? KeelError)?.details?["key"] == .string(key)
            }
        }
    }
}
