// How the predicate language refuses input: one `KeelError` with code `PREDICATE` whose message
// says where and what was expected, and whose details carry the same for programs:
// `{"position": N, "expected": "…", "found": "…"}`. Positions are Unicode-scalar offsets from 0
// into the predicate text (for the ASCII text of most predicates, the character offset).

/// Builds the errors of the parser, the binder and evaluation.
enum PredicateError {
    /// "expected X, found Y" at `position`.
    static func at(_ position: Int, expected: String, found: String) -> KeelError {
        KeelError(
            .predicate, "predicate error at position \(position): expected \(expected), found \(found)",
            details: ["position": .int(Int64(position)), "expected": .string(expected), "found": .string(found)])
    }

    static func at(_ position: SourcePosition, expected: String, found: String) -> KeelError {
        at(position.offset, expected: expected, found: found)
    }

    /// A problem that is not "expected X, found Y" (an evaluation failure), still positioned.
    static func problem(_ position: SourcePosition, _ sentence: String) -> KeelError {
        KeelError(
            .predicate, "predicate error at position \(position.offset): \(sentence)",
            details: ["position": .int(Int64(position.offset)), "expected": .string(sentence)])
    }
}

/// Bounds on what the parser accepts, so hostile input costs bounded time, memory and stack.
public struct PredicateLimits: Sendable, Hashable {
    /// Unicode scalars in the whole predicate.
    public var maximumLength: Int
    /// Nesting of parentheses, NOT, lists and SUBQUERY together.
    public var maximumDepth: Int
    /// Characters in one string literal.
    public var maximumStringLength: Int
    /// Characters in one number literal.
    public var maximumNumberLength: Int
    /// Elements in one `{…}` list (and in one `IN %@` array argument).
    public var maximumListCount: Int

    public init(
        maximumLength: Int = 1 << 20, maximumDepth: Int = 256, maximumStringLength: Int = 1 << 16,
        maximumNumberLength: Int = 400, maximumListCount: Int = 100_000
    ) {
        self.maximumLength = maximumLength
        self.maximumDepth = maximumDepth
        self.maximumStringLength = maximumStringLength
        self.maximumNumberLength = maximumNumberLength
        self.maximumListCount = maximumListCount
    }

    public static let standard = PredicateLimits()
}
