// The nil table of Docs/Predicates.md, row by row: each predicate evaluated on David (no age,
// no address, no department, no hire date) and on Zed (whose department is a deleted object), and
// the same operators on a set value for contrast.

import Testing

@testable import KeelModel

struct NilCase: Sendable, CustomTestStringConvertible {
    let predicate: String
    let object: String
    let expected: Bool

    init(_ predicate: String, on object: String = "Employee/4", _ expected: Bool) {
        self.predicate = predicate
        self.object = object
        self.expected = expected
    }

    var testDescription: String { "\(predicate) on \(object) is \(expected)" }
}

let nilCases: [NilCase] = [
    // Equality.
    NilCase("nil == nil", true),
    NilCase("nil != nil", false),
    NilCase("age == nil", true),
    NilCase("nil == age", true),
    NilCase("age != nil", false),
    NilCase("age == 30", false),
    NilCase("age != 30", true),
    NilCase("age == 0", false),
    // Ordering: false whenever a side is nil, even nil against nil.
    NilCase("age < 30", false),
    NilCase("age <= 30", false),
    NilCase("age > 30", false),
    NilCase("age >= 30", false),
    NilCase("age < nil", false),
    NilCase("nil <= nil", false),
    NilCase("nil >= nil", false),
    NilCase("30 > age", false),
    NilCase("age BETWEEN {0, 200}", false),
    NilCase("age > 30 OR age <= 30", false),
    // Two-valued logic: NOT of a false comparison is true.
    NilCase("NOT (age < 30)", true),
    NilCase("NOT (age == nil)", false),
    // IN: nil is in a list holding nil.
    NilCase("age IN {30, nil}", true),
    NilCase("age IN {30, 40}", false),
    NilCase("NOT (age IN {30, 40})", true),
    // String operators: false with nil on either side.
    NilCase("address BEGINSWITH 'a'", false),
    NilCase("address ENDSWITH ''", false),
    NilCase("address CONTAINS ''", false),
    NilCase("address LIKE '*'", false),
    NilCase("address MATCHES '.*'", false),
    NilCase("address ==[c] 'x'", false),
    NilCase("address !=[c] 'x'", true),
    NilCase("address ==[c] nil", true),
    NilCase("name BEGINSWITH nil", false),
    NilCase("name CONTAINS[cd] nil", false),
    NilCase("name LIKE nil", false),
    NilCase("name MATCHES nil", false),
    // Relationships: unset and dangling to-ones read as nil, and so does every key behind them.
    NilCase("department == nil", true),
    NilCase("department == nil", on: "Employee/6", true),
    NilCase("department != nil", on: "Employee/6", false),
    NilCase("department.name == nil", on: "Employee/6", true),
    NilCase("department.name != 'Sales'", on: "Employee/6", true),
    NilCase("department.code < 100", on: "Employee/6", false),
    NilCase("department.employees.@count == 0", on: "Employee/6", true),
    // To-many over an empty collection.
    NilCase("ANY computers.price > 0", false),
    NilCase("ALL computers.price > 0", true),
    NilCase("NONE computers.price > 0", true),
    NilCase("computers.@count == 0", true),
    NilCase("computers.@sum.price == 0", true),
    NilCase("computers.@avg.price == nil", true),
    NilCase("computers.@min.price == nil", true),
    NilCase("computers.@max.price == nil", true),
    // Nil members inside a collection: ANY sees them as nil values.
    NilCase("ANY computers.price == nil", on: "Employee/3", true),
    NilCase("computers.@sum.price == 0", on: "Employee/3", true),
    NilCase("computers.@count == 1", on: "Employee/3", true),
    // The same operators on a set value, for contrast.
    NilCase("age != nil", on: "Employee/1", true),
    NilCase("age == nil", on: "Employee/1", false),
    NilCase("age > nil", on: "Employee/1", false),
    NilCase("age < nil", on: "Employee/1", false),
    NilCase("address BEGINSWITH nil", on: "Employee/1", false),
]

@Suite("The nil table")
struct PredicateNilTableTests {
    @Test("nil compares as NSPredicate does", arguments: nilCases)
    func row(_ c: NilCase) throws {
        let model = PredicateFixture.model
        let graph = PredicateFixture.graph
        let object = try #require(graph.objects[PredicateFixture.id(c.object)])
        let bound = try PredicateBinder(model: model).bind(c.predicate, to: object.id.entity)
        #expect(try bound.evaluate(object, in: graph) == c.expected)
    }
}
