// Whether a predicate reads other objects than the one it is evaluated for (`readsOtherObjects`):
// what live results use to follow only the fetched entity's saves. Read from the syntax tree, so
// a literal that happens to hold a dot or the word SUBQUERY does not count.

import Testing

@testable import KeelModel

@Suite("Predicates that read other objects")
struct PredicateReachTests {
    static let cases: [(String, Bool)] = [
        ("name == 'a.b'", false),
        ("salary > 3.5 AND name CONTAINS 'SUBQUERY'", false),
        ("age > %@ OR NOT (name BEGINSWITH $P)", false),
        ("department == %@", false),
        ("ANY employees == %@", false),
        ("name IN {'x.y', 'z'}", false),
        ("TRUEPREDICATE", false),
        ("SELF == %@", false),
        ("department.name == 'Sales'", true),
        ("age > 3 AND department.name == 'Sales'", true),
        ("ANY employees.age > 30", true),
        ("employees.@count > 2", true),
        ("employees.@avg.salary < 100", true),
        ("SUBQUERY(employees, $e, $e.age > 30).@count > 0", true),
        ("bookUUID == $FETCH_SOURCE.uuid", true),
        ("NOT (department.name == nil)", true),
        ("age BETWEEN {1, 2} OR company.name == 'x'", true),
    ]

    @Test("the single properties a comparison reads, on either side, any operator, under NOT, AND and OR; key paths and SELF are not")
    func comparedKeys() throws {
        #expect(try KeelPredicate.parse("owner == nil OR (nil != department AND NOT (address == NULL))").comparedKeys == ["owner", "department", "address"])
        #expect(try KeelPredicate.parse("department.name == nil OR owner == %@ OR 3 < age OR ANY computers == %@").comparedKeys == ["owner", "age", "computers"])
        #expect(try KeelPredicate.parse("department.name == 'x' OR SELF == %@ OR $V.x == 1 OR employees.@count > 2").comparedKeys.isEmpty)
    }

    @Test("dotted literals and own properties do not count; key paths, collection operators, SUBQUERY and a variable's properties do", arguments: cases)
    func reach(_ text: String, _ expected: Bool) throws {
        #expect(try KeelPredicate.parse(text).readsOtherObjects == expected, "\(text)")
    }
}
