// Refusals: every syntax error, unknown key path, wrong arity and type mismatch is a PREDICATE
// error carrying the position of the offending piece and what was expected.

import Testing

@testable import KeelModel

struct ErrorCase: Sendable, CustomTestStringConvertible {
    let entity: String
    let predicate: String
    let args: [JSON]
    let position: Int
    let expected: String

    init(_ predicate: String, args: [JSON] = [], at position: Int, _ expected: String) {
        self.init("Employee", predicate, args: args, at: position, expected)
    }

    init(_ entity: String, _ predicate: String, args: [JSON] = [], at position: Int, _ expected: String) {
        self.entity = entity
        self.predicate = predicate
        self.args = args
        self.position = position
        self.expected = expected
    }

    var testDescription: String { "\(predicate) → position \(position)" }
}

let errorCases: [ErrorCase] = [
    // Syntax.
    ErrorCase("", at: 0, "a predicate"),
    ErrorCase("   ", at: 3, "a predicate"),
    ErrorCase("age >", at: 5, "a key, a value"),
    ErrorCase("age == 1 AND", at: 12, "a key, a value"),
    ErrorCase("(age == 1", at: 9, "')'"),
    ErrorCase("age == 1)", at: 8, "AND, OR or the end"),
    ErrorCase("age === 1", at: 6, "a key, a value"),
    ErrorCase("age == 1 1", at: 9, "AND, OR or the end"),
    ErrorCase("age 30", at: 4, "a comparison operator"),
    ErrorCase("name == 'abc", at: 8, "a closing '"),
    ErrorCase("name == \"a\\qb\"", at: 10, "one of the escapes"),
    ErrorCase("name == '\\u12'", at: 13, "four hexadecimal digits"),
    ErrorCase("name == '\\uD800'", at: 9, "a low surrogate"),
    ErrorCase("age == %d", at: 7, "%@"),
    ErrorCase("name BEGINSWITH[x] 'a'", at: 16, "the options c, d or cd"),
    ErrorCase("name BEGINSWITH[c 'a'", at: 17, "the options c, d or cd"),
    ErrorCase("age == 12abc", at: 9, "a digit or the end"),
    ErrorCase("age == 0x", at: 9, "digits of base 16"),
    ErrorCase("age == 0xFFFFFFFFFFFFFFFFFF", at: 7, "64 bits"),
    ErrorCase("age == 1e999", at: 7, "within the range of a double"),
    ErrorCase("age == - 1", at: 7, "a number after '-'"),
    ErrorCase("ANY", at: 3, "a key, a value"),
    ErrorCase("age == 1 AND OR age == 2", at: 13, "a key, a value"),
    ErrorCase("name == 'a'.length", at: 11, "a value has no key path"),
    ErrorCase("department.@foo == 1", at: 11, "@count, @sum"),
    ErrorCase("department. == 1", at: 12, "a key or an aggregate"),
    ErrorCase("in == 1", at: 0, "#in"),
    ErrorCase("$ == 1", at: 1, "a variable name"),
    ErrorCase("SUBQUERY(employees, e, TRUEPREDICATE).@count > 0", at: 20, "a $variable"),
    ErrorCase("age == 1 ~", at: 9, "a key, a value"),
    // Key paths against the model.
    ErrorCase("nmae == 'x'", at: 0, "a property of Employee"),
    ErrorCase("department.nmae == 'x'", at: 11, "a property of Department"),
    ErrorCase("department.name.first == 'x'", at: 16, "the key before is an attribute"),
    ErrorCase("Department", "employees.name == 'x'", at: 0, "ANY, ALL, NONE or an aggregate"),
    ErrorCase("Department", "name == employees.name", at: 8, "a single value on the right"),
    ErrorCase("ANY name == 'x'", at: 4, "a to-many key path"),
    ErrorCase("age.@count == 1", at: 4, "a to-many key path before @count"),
    ErrorCase("Department", "employees.@count.name == 1", at: 17, "nothing after @count"),
    ErrorCase("Department", "employees.@sum == 1", at: 10, "an attribute to aggregate"),
    ErrorCase("Department", "employees.@sum.name == 1", at: 10, "a numeric attribute"),
    ErrorCase("Department", "SUBQUERY(name, $x, TRUEPREDICATE).@count > 0", at: 9, "a to-many key path"),
    ErrorCase("Book", "isSelected == YES", at: 0, "transient"),
    ErrorCase("$FETCH_SOURCE.uuid == nil", at: 0, "$FETCH_SOURCE only in a fetched property"),
    ErrorCase("salary == {1, 2}", at: 10, "a single value"),
    // Types of constants.
    ErrorCase("age == 'abc'", at: 7, "a number"),
    ErrorCase("name == 5", at: 8, "a string"),
    ErrorCase("hiredAt == 'yesterday'", at: 11, "a date string"),
    ErrorCase("salary == 'lots'", at: 10, "a decimal"),
    ErrorCase("isManager == 2", at: 13, "TRUE, FALSE"),
    ErrorCase("department == 'Employee/1'", at: 14, "an object ID like \"Department/1\""),
    ErrorCase("SELF == 'Employee/0'", at: 8, "an object ID like \"Employee/1\""),
    ErrorCase("age BETWEEN {1}", at: 12, "{low, high}"),
    ErrorCase("age BETWEEN 1", at: 12, "{low, high}"),
    ErrorCase("age IN 5", at: 7, "a list ({a, b}), an array argument or text after IN"),
    ErrorCase("age CONTAINS '3'", at: 0, "a string key path"),
    ErrorCase("department BEGINSWITH 'S'", at: 0, "a string key path"),
    ErrorCase("name MATCHES '(['", at: 13, "a valid regular expression"),
    ErrorCase("name MATCHES address", at: 13, "a constant pattern"),
    // Arguments and variables.
    ErrorCase("age == %@", at: 7, "an argument for %@ number 1"),
    ErrorCase("age == %@ OR age == %@", args: [1], at: 20, "an argument for %@ number 2"),
    ErrorCase("age == %@", args: [1, 2], at: 9, "1 argument for the %@"),
    ErrorCase("age == $MISSING", at: 7, "a value for $MISSING in vars"),
    ErrorCase("age == %@", args: [["a": 1]], at: 7, "a number"),
    ErrorCase("age IN %@", args: [[[1]]], at: 7, "a list of values"),
]

@Suite("Predicate errors")
struct PredicateErrorTests {
    @Test("each refusal names its position and what was expected", arguments: errorCases)
    func refusal(_ c: ErrorCase) throws {
        let error = try #require(PredicateFixture.error(c.entity, c.predicate, args: c.args))
        #expect(error.code == .predicate)
        #expect(error.details?["position"] == .int(Int64(c.position)), "\(error.message)")
        #expect(error.details?["expected"]?.stringValue?.contains(c.expected) == true, "\(error.message)")
        #expect(error.message.contains("position \(c.position)"))
    }

    @Test("nesting deeper than the limit is refused at the first level too deep")
    func depth() throws {
        let limit = PredicateLimits.standard.maximumDepth
        for (open, close) in [("(", ")"), ("NOT ", ""), ("!", "")] {
            let text = String(repeating: open, count: limit + 1) + "age == 1" + String(repeating: close, count: limit + 1)
            let error = try #require(PredicateFixture.error("Employee", text))
            #expect(error.details?["position"] == .int(Int64(limit * open.count)), "\(open)")
            // At the limit it parses.
            let fine = String(repeating: open, count: limit) + "age == 1" + String(repeating: close, count: limit)
            #expect(PredicateFixture.error("Employee", fine) == nil)
        }
        let lists = "age IN " + String(repeating: "{", count: 300)
        #expect(PredicateFixture.error("Employee", lists)?.details?["position"] == .int(Int64(7 + limit)))
        let subqueries = String(repeating: "SUBQUERY(employees, $e, ", count: 300)
        #expect(PredicateFixture.error("Department", subqueries)?.code == .predicate)
        // A million '(' fails as fast as 257 do, without touching the stack.
        #expect(PredicateFixture.error("Employee", String(repeating: "(", count: 1_000_000))?.code == .predicate)
    }

    @Test("huge literals and texts are refused by the limits")
    func sizes() throws {
        let limits = PredicateLimits.standard
        let longString = "name == '" + String(repeating: "x", count: limits.maximumStringLength + 1) + "'"
        #expect(PredicateFixture.error("Employee", longString)?.details?["position"] == .int(8))
        let longNumber = "age == " + String(repeating: "9", count: limits.maximumNumberLength + 1)
        #expect(PredicateFixture.error("Employee", longNumber)?.details?["position"] == .int(7))
        let longText = String(repeating: "age == 1 OR ", count: limits.maximumLength / 12 + 1) + "age == 1"
        #expect(PredicateFixture.error("Employee", longText)?.details?["position"] == .int(Int64(limits.maximumLength)))
        let small = PredicateLimits(maximumListCount: 3)
        let model = PredicateFixture.model
        let employee = try #require(model.entity(named: "Employee"))
        #expect(throws: KeelError.self) { try PredicateBinder(model: model, limits: small).bind("age IN {1, 2, 3, 4}", to: employee.id) }
        #expect(throws: KeelError.self) {
            try PredicateBinder(model: model, args: [[1, 2, 3, 4]], limits: small).bind("age IN %@", to: employee.id)
        }
        // A long AND chain within the limits is a loop, not recursion.
        let chain = Array(repeating: "age == 1", count: 20_000).joined(separator: " AND ")
        #expect(PredicateFixture.error("Employee", chain) == nil)
    }

    @Test("a LIKE pattern made to backtrack stays linear")
    func likeBacktracking() throws {
        var graph = PredicateFixture.graph
        let id = PredicateFixture.id("Employee/1")
        let model = PredicateFixture.model
        let employee = try #require(model.entity(named: "Employee"))
        let field = try #require(employee.field(named: "address"))
        graph.objects[id]?.values[field] = .string(String(repeating: "a", count: 20_000))
        let pattern = String(repeating: "*a", count: 200) + "*b"
        let bound = try PredicateBinder(model: model).bind("address LIKE '\(pattern)'", to: employee.id)
        let clock = ContinuousClock()
        let started = clock.now
        #expect(try bound.evaluate(try #require(graph.objects[id]), in: graph) == false)
        #expect(clock.now - started < .seconds(2))
    }
}
