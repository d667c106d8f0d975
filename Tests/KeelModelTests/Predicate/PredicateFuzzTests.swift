// Parser and binder robustness: random token soup and mutated table predicates (seeded, KEEL_SEED
// replays) never crash or hang; every refusal is a PREDICATE error whose position lies inside
// the text; everything accepted survives the round trip; a bound predicate evaluates on every
// object of the data set without trapping.

import Testing

@testable import KeelModel

@Suite("Predicate fuzzing")
struct PredicateFuzzTests {
    static let fragments = [
        "age", "name", "department", ".", "employees", "@count", "@sum", "@avg", "@foo", "==", "=", "!=", "<>", "<", "<=",
        ">", ">=", "=<", "=>", "BETWEEN", "IN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "[c]", "[d]", "[cd]",
        "[", "]", "AND", "&&", "OR", "||", "NOT", "!", "(", ")", "{", "}", ",", "TRUEPREDICATE", "FALSEPREDICATE", "ANY",
        "SOME", "ALL", "NONE", "SUBQUERY", "$e", "$", "%@", "%", "SELF", "nil", "NULL", "YES", "NO", "TRUE", "FALSE", "1",
        "-2", "3.5", "0x1F", "0b", "1e", "'", "\"", "'abc'", "\"d\\\"e\"", "\\", "\\u", "#in", "#", "é", "😀", "\u{0}", " ",
        "  ", "\n", "*", "?", "salary", "hiredAt", "isManager", "address", "company", "computers", "price",
    ]

    @Test("random token soup: refused with a position inside the text, or parsed and round-tripped")
    func soup() throws {
        var (rng, seed) = SeededGenerator.fromEnvironment("PredicateFuzzTests.soup")
        for i in 0..<20_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...14, using: &rng) {
                text += Self.fragments.randomElement(using: &rng) ?? ""
                if Bool.random(using: &rng) { text += " " }
            }
            try check(text, seed: seed, index: i, args: [1, "x"], rng: &rng)
        }
    }

    @Test("mutated table predicates: refused with a position, or parsed, bound and evaluated")
    func mutations() throws {
        var (rng, seed) = SeededGenerator.fromEnvironment("PredicateFuzzTests.mutations")
        let bases = (comparisonCases + stringCases + logicCases + relationshipCases).map(\.predicate)
        for i in 0..<20_000 {
            var scalars = Array((bases.randomElement(using: &rng) ?? "age == 1").unicodeScalars)
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let at = Int.random(in: 0...scalars.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0 where at < scalars.count: scalars.removeSubrange(at..<min(scalars.count, at + Int.random(in: 1...4, using: &rng)))
                case 1: scalars.insert(contentsOf: (Self.fragments.randomElement(using: &rng) ?? "").unicodeScalars, at: at)
                case 2 where at < scalars.count: scalars[at] = Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &rng))
                default: scalars.insert(contentsOf: scalars[at...].prefix(6), at: at)
                }
            }
            var text = ""
            text.unicodeScalars.append(contentsOf: scalars)
            try check(text, seed: seed, index: i, args: [30, "Sales", "Employee/1"], rng: &rng)
        }
    }

    /// Parses, round-trips, binds for a random entity with the given arguments and evaluates on
    /// every object of that entity.
    private func check(_ text: String, seed: UInt64, index: Int, args: [JSON], rng: inout SeededGenerator) throws {
        let length = text.unicodeScalars.count
        let parsed: KeelPredicate
        do {
            parsed = try KeelPredicate.parse(text)
        } catch {
            expectPositioned(error, length, "seed \(seed) case \(index): \(text)")
            return
        }
        let again: KeelPredicate
        do {
            again = try KeelPredicate.parse(parsed.description)
        } catch {
            Issue.record("seed \(seed) case \(index): \(text) is printed as \(parsed.description), which does not parse: \(error)")
            return
        }
        #expect(again == parsed, "seed \(seed) case \(index): \(text)")
        let entity = ["Employee", "Department", "Person", "Company"].randomElement(using: &rng) ?? "Employee"
        let model = PredicateFixture.model
        guard let e = model.entity(named: entity) else { return }
        for argCount in [0, args.count] {
            do {
                let bound = try PredicateBinder(model: model, args: Array(args.prefix(argCount)), vars: ["e": 1])
                    .bind(parsed, to: e.id, textLength: length)
                for object in PredicateFixture.graph.all(entity) { _ = try bound.evaluate(object, in: PredicateFixture.graph) }
            } catch {
                expectPositioned(error, length, "seed \(seed) case \(index): \(text) bound for \(entity)")
            }
        }
    }

    private func expectPositioned(_ error: KeelError, _ length: Int, _ context: String) {
        #expect(error.code == .predicate, "\(context): \(error)")
        guard case .int(let position)? = error.details?["position"] else {
            Issue.record("\(context): no position in \(error)")
            return
        }
        #expect(position >= 0 && position <= length, "\(context): position \(position) of \(length)")
        #expect(error.details?["expected"]?.stringValue?.isEmpty == false, "\(context)")
    }
}
