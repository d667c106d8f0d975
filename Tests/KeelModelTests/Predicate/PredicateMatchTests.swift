// The table of predicate examples: every construct of spec/protocol.md ("Predicates") and
// every string option, each with the objects of the fixed data set (PredicateFixture.swift)
// it must match, in ID order.

import Testing

@testable import KeelModel

struct MatchCase: Sendable, CustomTestStringConvertible {
    let entity: String
    let predicate: String
    let args: [JSON]
    let vars: [String: JSON]
    let expected: [String]

    init(_ entity: String, _ predicate: String, args: [JSON] = [], vars: [String: JSON] = [:], _ expected: [String]) {
        self.entity = entity
        self.predicate = predicate
        self.args = args
        self.vars = vars
        self.expected = expected
    }

    var testDescription: String { "\(entity): \(predicate)" }
}

let allEmployees = ["Alice", "bob", "Chloé", "David", "Eve", "Zed"]

let comparisonCases: [MatchCase] = [
    MatchCase("Employee", "age == 30", ["Alice"]),
    MatchCase("Employee", "age = 30", ["Alice"]),
    MatchCase("Employee", "age != 30", ["bob", "Chloé", "David", "Eve", "Zed"]),
    MatchCase("Employee", "age <> 30", ["bob", "Chloé", "David", "Eve", "Zed"]),
    MatchCase("Employee", "age < 30", ["bob"]),
    MatchCase("Employee", "age <= 30", ["Alice", "bob"]),
    MatchCase("Employee", "age =< 30", ["Alice", "bob"]),
    MatchCase("Employee", "age > 35", ["Chloé", "Zed"]),
    MatchCase("Employee", "age >= 35", ["Chloé", "Eve", "Zed"]),
    MatchCase("Employee", "age => 35", ["Chloé", "Eve", "Zed"]),
    MatchCase("Employee", "30 < age", ["Chloé", "Eve", "Zed"]),
    MatchCase("Employee", "age > 29.5", ["Alice", "Chloé", "Eve", "Zed"]),
    MatchCase("Employee", "age BETWEEN {25, 35}", ["Alice", "bob", "Eve"]),
    MatchCase("Employee", "age between %@", args: [[26, 41]], ["Alice", "Chloé", "Eve"]),
    MatchCase("Employee", "age IN {25, 41}", ["bob", "Chloé"]),
    MatchCase("Employee", "age IN %@", args: [[30, 35]], ["Alice", "Eve"]),
    MatchCase("Employee", "age IN $AGES", vars: ["AGES": [50]], ["Zed"]),
    MatchCase("Employee", "age >= $MIN", vars: ["MIN": 41], ["Chloé", "Zed"]),
    MatchCase("Employee", "age == %@ OR age == %@", args: [25, 50], ["bob", "Zed"]),
    MatchCase("Employee", "age == 0x1E OR age == 0o31 OR age == 0b110010", ["Alice", "bob", "Zed"]),
    // Decimals by value, written as numbers or strings.
    MatchCase("Employee", "salary > 5000", ["Alice", "Chloé", "Eve"]),
    MatchCase("Employee", "salary == \"5200.00\"", ["Alice", "Eve"]),
    MatchCase("Employee", "salary == 5200", ["Alice", "Eve"]),
    MatchCase("Employee", "salary == 3100.5", ["bob"]),
    MatchCase("Employee", "salary == 3100.50", ["bob"]),
    MatchCase("Employee", "salary > %@", args: ["5199.99"], ["Alice", "Chloé", "Eve"]),
    MatchCase("Employee", "salary < %@", args: [3100.51], ["bob", "Zed"]),
    MatchCase("Employee", "salary BETWEEN {3100.5, \"5200\"}", ["Alice", "bob", "David", "Eve"]),
    // Dates by instant, written as RFC 3339 strings.
    MatchCase("Employee", "hiredAt > \"2020-06-01T00:00:00Z\"", ["bob"]),
    MatchCase("Employee", "hiredAt < %@", args: ["2020-12-31T00:00:00.000Z"], ["Alice", "Eve"]),
    MatchCase("Employee", "hiredAt == \"2020-01-15T10:00:00+01:00\"", ["Alice"]),
    MatchCase("Employee", "hiredAt == nil", ["Chloé", "David", "Zed"]),
    MatchCase("Employee", "hiredAt != NULL", ["Alice", "bob", "Eve"]),
    // Booleans.
    MatchCase("Employee", "isManager == TRUE", ["Alice", "Eve"]),
    MatchCase("Employee", "isManager == YES", ["Alice", "Eve"]),
    MatchCase("Employee", "isManager == 1", ["Alice", "Eve"]),
    MatchCase("Employee", "isManager == FALSE", ["bob", "Chloé", "David", "Zed"]),
    MatchCase("Employee", "isManager = no", ["bob", "Chloé", "David", "Zed"]),
    MatchCase("Employee", "isManager == %@", args: [true], ["Alice", "Eve"]),
    // Constants on both sides.
    MatchCase("Employee", "nil == nil", allEmployees),
    MatchCase("Employee", "1 == 1.0", allEmployees),
    MatchCase("Employee", "\"x\" == 'x'", allEmployees),
    MatchCase("Employee", "'a\\tb' == \"a\\u0009b\"", allEmployees),
    MatchCase("Employee", "TRUEPREDICATE", allEmployees),
    MatchCase("Employee", "truepredicate", allEmployees),
    MatchCase("Employee", "FALSEPREDICATE", []),
    MatchCase("Employee", "#name == 'Alice'", ["Alice"]),
]

let stringCases: [MatchCase] = [
    MatchCase("Employee", "name BEGINSWITH 'A'", ["Alice"]),
    MatchCase("Employee", "name BEGINSWITH 'B'", []),
    MatchCase("Employee", "name BEGINSWITH[c] 'B'", ["bob"]),
    MatchCase("Employee", "name beginswith[C] 'b'", ["bob"]),
    MatchCase("Employee", "name ENDSWITH 'e'", ["Alice", "Eve"]),
    MatchCase("Employee", "name ENDSWITH 'é'", ["Chloé"]),
    MatchCase("Employee", "name ENDSWITH 'e\\u0301'", []),
    MatchCase("Employee", "name ENDSWITH[d] 'e'", ["Alice", "Chloé", "Eve"]),
    MatchCase("Employee", "name ENDSWITH[d] 'e\\u0301'", ["Alice", "Chloé", "Eve"]),
    MatchCase("Employee", "name ENDSWITH[cd] 'É'", ["Alice", "Chloé", "Eve"]),
    MatchCase("Employee", "name ENDSWITH[c] 'É'", ["Chloé"]),
    MatchCase("Employee", "name CONTAINS 'li'", ["Alice"]),
    MatchCase("Employee", "name CONTAINS 'LI'", []),
    MatchCase("Employee", "name CONTAINS[c] 'LI'", ["Alice"]),
    MatchCase("Employee", "name CONTAINS[c] 'E'", ["Alice", "Eve", "Zed"]),
    MatchCase("Employee", "name CONTAINS[d] 'e'", ["Alice", "Chloé", "Eve", "Zed"]),
    MatchCase("Employee", "name CONTAINS[cd] 'E'", ["Alice", "Chloé", "Eve", "Zed"]),
    MatchCase("Employee", "name CONTAINS[dc] 'LOE'", ["Chloé"]),
    MatchCase("Employee", "address CONTAINS[c] 'STRASSE'", ["Chloé"]),
    MatchCase("Employee", "address CONTAINS 'ß'", ["Chloé"]),
    MatchCase("Employee", "name LIKE 'A*'", ["Alice"]),
    MatchCase("Employee", "name LIKE '?ob'", ["bob"]),
    MatchCase("Employee", "name LIKE '*'", allEmployees),
    MatchCase("Employee", "name LIKE 'Chlo?'", ["Chloé"]),
    MatchCase("Employee", "name LIKE '*l*e'", ["Alice"]),
    MatchCase("Employee", "name LIKE[c] '*E'", ["Alice", "Eve"]),
    MatchCase("Employee", "name LIKE[cd] '*E'", ["Alice", "Chloé", "Eve"]),
    MatchCase("Employee", "name LIKE[d] 'chlo?'", []),
    MatchCase("Employee", "address LIKE '\\\\*star\\\\*'", ["Eve"]),
    MatchCase("Employee", "address LIKE '*star*'", ["Eve"]),
    MatchCase("Employee", "address LIKE '\\\\*s*'", ["Eve"]),
    MatchCase("Employee", "name MATCHES '[A-C].*'", ["Alice", "Chloé"]),
    MatchCase("Employee", "name MATCHES 'al'", []),
    MatchCase("Employee", "name MATCHES[c] 'al.*'", ["Alice"]),
    MatchCase("Employee", "name MATCHES[c] 'B.B'", ["bob"]),
    MatchCase("Employee", "name MATCHES[d] 'Chloe'", ["Chloé"]),
    MatchCase("Employee", "name MATCHES[cd] 'CHLOE|eve'", ["Chloé", "Eve"]),
    // The whole text, whichever alternative gets there (the first, "A", matches only a prefix).
    MatchCase("Employee", "name MATCHES 'A|Alice|Ev'", ["Alice"]),
    MatchCase("Employee", "name MATCHES '.*e$'", ["Alice", "Eve"]),
    // ICU's syntax at the pattern's end: a free-spacing comment, an unended \Q quote.
    MatchCase("Employee", "name MATCHES %@", args: ["(?x) A l i c e  # the first"], ["Alice"]),
    MatchCase("Employee", "name MATCHES %@", args: ["\\QAlice"], ["Alice"]),
    MatchCase("Employee", "name MATCHES %@", args: ["\\QA.ice"], []),
    MatchCase("Employee", "name MATCHES %@", args: ["\\p{Lu}\\p{Ll}+"], ["Alice", "Chloé", "David", "Eve", "Zed"]),
    MatchCase("Employee", "name ==[c] 'ALICE'", ["Alice"]),
    MatchCase("Employee", "name == 'chloé'", []),
    MatchCase("Employee", "name ==[d] 'Chloe'", ["Chloé"]),
    MatchCase("Employee", "name ==[cd] 'chloe'", ["Chloé"]),
    MatchCase("Employee", "name !=[c] 'ALICE'", ["bob", "Chloé", "David", "Eve", "Zed"]),
    MatchCase("Employee", "name <[c] 'c'", ["Alice", "bob"]),
    MatchCase("Employee", "name < 'c'", allEmployees),
    MatchCase("Employee", "name < 'b'", ["Alice", "Chloé", "David", "Eve", "Zed"]),
    MatchCase("Employee", "name IN {'alice', 'BOB'}", []),
    MatchCase("Employee", "name IN[c] {'alice', 'BOB'}", ["Alice", "bob"]),
    MatchCase("Employee", "'lic' IN name", ["Alice"]),
    MatchCase("Employee", "name BEGINSWITH %@", args: ["Ch"], ["Chloé"]),
    MatchCase("Employee", "name BEGINSWITH name", allEmployees),
    MatchCase("Employee", "address CONTAINS[c] name", []),
    MatchCase("Company", "website == 'https://acme.example'", ["Acme"]),
    MatchCase("Company", "website BEGINSWITH[c] 'HTTPS'", ["Acme"]),
]

let logicCases: [MatchCase] = [
    MatchCase("Employee", "age > 30 AND isManager == YES", ["Eve"]),
    MatchCase("Employee", "age > 30 && isManager == YES", ["Eve"]),
    MatchCase("Employee", "age < 26 OR age > 45", ["bob", "Zed"]),
    MatchCase("Employee", "age < 26 || age > 45", ["bob", "Zed"]),
    MatchCase("Employee", "NOT age > 30", ["Alice", "bob", "David"]),
    MatchCase("Employee", "!(age > 30)", ["Alice", "bob", "David"]),
    MatchCase("Employee", "NOT (age > 30 OR age < 26)", ["Alice", "David"]),
    MatchCase("Employee", "NOT NOT age == 30", ["Alice"]),
    // Precedence: NOT > AND > OR.
    MatchCase("Employee", "isManager == YES OR age == 25 AND age == 30", ["Alice", "Eve"]),
    MatchCase("Employee", "(isManager == YES OR age == 25) AND age == 30", ["Alice"]),
    MatchCase("Employee", "NOT isManager == YES AND age > 30", ["Chloé", "Zed"]),
    MatchCase("Employee", "age == 30 or age == 25 and name == 'bob'", ["Alice", "bob"]),
    MatchCase("Employee", "TRUEPREDICATE AND FALSEPREDICATE OR TRUEPREDICATE", allEmployees),
]

let relationshipCases: [MatchCase] = [
    MatchCase("Employee", "department.name == 'Sales'", ["Alice", "bob"]),
    MatchCase("Employee", "department.name BEGINSWITH[c] %@", args: ["sal"], ["Alice", "bob"]),
    MatchCase("Employee", "department == nil", ["David", "Zed"]),
    MatchCase("Employee", "department != nil", ["Alice", "bob", "Chloé", "Eve"]),
    MatchCase("Employee", "department.name == nil", ["David", "Zed"]),
    MatchCase("Employee", "department.code > 15", ["Chloé", "Eve"]),
    MatchCase("Employee", "company.name == 'Acme' AND department.name == 'Engineering'", ["Eve"]),
    MatchCase("Employee", "department == %@", args: ["Department/1"], ["Alice", "bob"]),
    MatchCase("Employee", "department IN %@", args: [["Department/2", "Department/9"]], ["Chloé", "Eve"]),
    MatchCase("Employee", "SELF == %@", args: ["Employee/1"], ["Alice"]),
    MatchCase("Employee", "self != %@", args: ["Employee/1"], ["bob", "Chloé", "David", "Eve", "Zed"]),
    MatchCase("Employee", "SELF IN %@", args: [["Employee/1", "Employee/2"]], ["Alice", "bob"]),
    MatchCase("Employee", "SELF.name == 'Eve'", ["Eve"]),
    MatchCase("Employee", "department.employees.@count == 2", ["Alice", "bob", "Chloé", "Eve"]),
    MatchCase("Employee", "ANY department.companies.name == 'Globex'", ["Chloé", "Eve"]),
    MatchCase("Computer", "owner.name == 'Alice'", ["MacBook Pro", "ThinkPad"]),
    MatchCase("Computer", "owner.age > 40", ["Desktop?"]),
    MatchCase("Computer", "model == nil", ["Computer/4"]),
    MatchCase("Computer", "model LIKE 'Desktop\\\\?'", ["Desktop?"]),
    MatchCase("Computer", "price BETWEEN {1000, 2500}", ["MacBook Pro", "ThinkPad"]),
    MatchCase("Computer", "price > 1000.5", ["MacBook Pro", "ThinkPad"]),
    MatchCase("Computer", "isLaptop == NO", ["Desktop?"]),
    MatchCase("Computer", "id == %@", args: [.string(PredicateFixture.u1)], ["MacBook Pro", "Desktop?"]),
    MatchCase("Company", "founded < '2000-01-01T00:00:00Z'", ["Acme"]),
    MatchCase("Company", "registrationNumber == 0x64", ["Acme"]),
    MatchCase("Company", "ANY departments.name ==[cd] 'emigre services'", ["Acme", "Globex"]),
    MatchCase("Feedback", "bookUUID == %@", args: [.string(PredicateFixture.u2)], ["meh"]),
    MatchCase("Feedback", "rating >= 3", ["great", "meh"]),
    // Sub-entities: a Person fetch sees Employees and Students.
    MatchCase("Person", "name BEGINSWITH[c] 'g'", ["GRACE"]),
    MatchCase("Person", "age < 20", ["Frank", "GRACE"]),
]

let toManyCases: [MatchCase] = [
    MatchCase("Department", "ANY employees.name == 'Alice'", ["Sales"]),
    MatchCase("Department", "SOME employees.age > 40", ["Engineering"]),
    MatchCase("Department", "ALL employees.age > 28", ["Engineering", "Émigré Services"]),
    MatchCase("Department", "NONE employees.age > 40", ["Sales", "Émigré Services"]),
    MatchCase("Department", "NOT ANY employees.age > 40", ["Sales", "Émigré Services"]),
    MatchCase("Department", "ANY employees.name BEGINSWITH[cd] 'c'", ["Engineering"]),
    MatchCase("Department", "ANY employees.name IN {'bob', 'Eve'}", ["Sales", "Engineering"]),
    MatchCase("Department", "ANY employees == %@", args: ["Employee/2"], ["Sales"]),
    MatchCase("Department", "%@ IN employees", args: ["Employee/3"], ["Engineering"]),
    MatchCase("Department", "employees CONTAINS %@", args: ["Employee/1"], ["Sales"]),
    MatchCase("Department", "employees.@count == 2", ["Sales", "Engineering"]),
    MatchCase("Department", "employees.@count == 0", ["Émigré Services"]),
    MatchCase("Department", "employees.@sum.salary > 10000", ["Engineering"]),
    MatchCase("Department", "employees.salary.@sum == 8300.5", ["Sales"]),
    MatchCase("Department", "employees.@sum.salary == 0", ["Émigré Services"]),
    MatchCase("Department", "employees.@avg.salary == 6100", ["Engineering"]),
    MatchCase("Department", "employees.@avg.age < 30", ["Sales"]),
    MatchCase("Department", "employees.@avg.age == nil", ["Émigré Services"]),
    MatchCase("Department", "employees.@min.age == 25", ["Sales"]),
    MatchCase("Department", "employees.@max.salary == 7000", ["Engineering"]),
    MatchCase("Department", "employees.@max.hiredAt > '2021-01-01T00:00:00Z'", ["Sales"]),
    MatchCase("Department", "employees.@min.name == 'Alice'", ["Sales"]),
    MatchCase("Department", "employees.@max.age == nil", ["Émigré Services"]),
    MatchCase("Department", "companies.@count == 2", ["Émigré Services"]),
    MatchCase("Department", "SUBQUERY(employees, $e, $e.age > 30).@count > 0", ["Engineering"]),
    MatchCase("Department", "SUBQUERY(employees, $e, $e.isManager == YES AND $e.age < 32).@count == 1", ["Sales"]),
    MatchCase("Department", "SUBQUERY(employees, $e, age > 30).@count == 2", ["Engineering"]),
    MatchCase("Department", "subquery(employees, $x, $x.department.code == 10).@count == 2", ["Sales"]),
    MatchCase(
        "Company", "SUBQUERY(departments, $d, SUBQUERY($d.employees, $e, $e.age > 40).@count > 0).@count > 0", ["Globex"]),
    MatchCase("Company", "employees.@count == 3", ["Acme"]),
    MatchCase("Company", "ANY employees.department.name == 'Engineering'", ["Acme", "Globex"]),
    MatchCase("Person", "ANY computers.price > 2000", ["Alice"]),
    MatchCase("Person", "computers.@count >= 2", ["Alice"]),
    MatchCase("Person", "computers.@count == 0", ["bob", "David", "Eve", "Zed", "GRACE"]),
    MatchCase("Person", "ALL computers.isLaptop == YES", ["Alice", "bob", "David", "Eve", "Zed", "Frank", "GRACE"]),
]

@Suite("Predicate matches on the fixed data set")
struct PredicateMatchTests {
    @Test("comparisons, numbers, decimals, dates, booleans, constants", arguments: comparisonCases)
    func comparisons(_ c: MatchCase) throws {
        #expect(try PredicateFixture.matches(c.entity, c.predicate, args: c.args, vars: c.vars) == c.expected)
    }

    @Test("string operators with every option", arguments: stringCases)
    func strings(_ c: MatchCase) throws {
        #expect(try PredicateFixture.matches(c.entity, c.predicate, args: c.args, vars: c.vars) == c.expected)
    }

    @Test("AND, OR, NOT and their precedence", arguments: logicCases)
    func logic(_ c: MatchCase) throws {
        #expect(try PredicateFixture.matches(c.entity, c.predicate, args: c.args, vars: c.vars) == c.expected)
    }

    @Test("key paths through to-one relationships, SELF, sub-entities", arguments: relationshipCases)
    func relationships(_ c: MatchCase) throws {
        #expect(try PredicateFixture.matches(c.entity, c.predicate, args: c.args, vars: c.vars) == c.expected)
    }

    @Test("ANY, ALL, NONE, aggregates and SUBQUERY on to-many", arguments: toManyCases)
    func toMany(_ c: MatchCase) throws {
        #expect(try PredicateFixture.matches(c.entity, c.predicate, args: c.args, vars: c.vars) == c.expected)
    }

    @Test("$FETCH_SOURCE reads the fetched property's source object")
    func fetchSource() throws {
        let graph = PredicateFixture.graph
        let book = try #require(graph.objects[PredicateFixture.id("Book/1")])
        let source = FetchSource(object: book, graph: graph)
        let fetched = try #require(PredicateFixture.model[book.id.entity].fetchedProperty(named: "feedbackList"))
        #expect(try PredicateFixture.matches("Feedback", fetched.predicate, fetchSource: source) == ["great", "long"])
        let other = FetchSource(object: try #require(graph.objects[PredicateFixture.id("Book/2")]), graph: graph)
        #expect(try PredicateFixture.matches("Feedback", fetched.predicate, fetchSource: other) == ["meh"])
        #expect(try PredicateFixture.matches("Feedback", "$FETCH_SOURCE.title == 'Swift'", fetchSource: source) == ["great", "meh", "long"])
    }

    @Test("MATCHES: exponential backtracking fails with PREDICATE at the pattern, a long text within the budget matches, ICU's stack overflow fails too")
    func regexBudget() throws {
        let exponential = try CompiledRegex("(a*)*b", caseInsensitive: false, position: SourcePosition(13))
        #expect(try exponential.wholeMatch("aaab") && !(try exponential.wholeMatch("aaac")))
        let error = keelError { _ = try exponential.wholeMatch(String(repeating: "a", count: 30) + "c") }
        #expect(error?.code == .predicate && error?.details?["position"] == .int(13), "\(String(describing: error))")
        #expect(error?.message.contains("backtracks too much") == true)
        // Linear work on a long text stays inside the budget, which grows with the text.
        let long = String(repeating: "abcdefghij", count: 100_000)
        #expect(try CompiledRegex(".*j", caseInsensitive: false, position: SourcePosition(0)).wholeMatch(long))
        #expect(!(try CompiledRegex(".*x.*", caseInsensitive: false, position: SourcePosition(0)).wholeMatch(long)))
        #expect(try CompiledRegex("(?:ABCDEFGHIJ)+", caseInsensitive: true, position: SourcePosition(0)).wholeMatch(long))
        // One saved state per character: past ICU's backtracking stack, an error, not "no match".
        let deep = try CompiledRegex("(a|b)*", caseInsensitive: false, position: SourcePosition(5))
        #expect(try deep.wholeMatch(String(repeating: "ab", count: 500)))
        #expect(keelError { _ = try deep.wholeMatch(String(repeating: "a", count: 2_000_000)) }?.code == .predicate)
        // A pattern ICU refuses is refused at bind time, at its position.
        let refused = keelError { _ = try CompiledRegex("a)(b", caseInsensitive: false, position: SourcePosition(7)) }
        #expect(refused?.code == .predicate && refused?.details?["position"] == .int(7))
    }

    @Test("a bound predicate is reusable and agrees with a fresh bind for every object")
    func reuse() throws {
        let model = PredicateFixture.model
        let employee = try #require(model.entity(named: "Employee"))
        let bound = try PredicateBinder(model: model).bind("name CONTAINS[cd] 'E' AND age > 20", to: employee.id)
        let first = try PredicateFixture.graph.all("Employee").filter { try bound.evaluate($0, in: PredicateFixture.graph) }
        let second = try PredicateFixture.graph.all("Employee").filter { try bound.evaluate($0, in: PredicateFixture.graph) }
        #expect(first.map(PredicateFixture.label) == ["Alice", "Chloé", "Eve", "Zed"])
        #expect(first == second)
    }
}
