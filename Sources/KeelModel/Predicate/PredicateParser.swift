// Recursive descent over the predicate format (Foundation's `NSPredicate(format:)` grammar, the
// parts spec/protocol.md lists), with NSPredicate's precedence NOT > AND > OR:
//
//   predicate   := or
//   or          := and (("OR" | "||") and)*
//   and         := unary (("AND" | "&&") unary)*
//   unary       := ("NOT" | "!") unary | "(" predicate ")" | TRUEPREDICATE | FALSEPREDICATE | comparison
//   comparison  := [ANY | SOME | ALL | NONE] expression operator [options] expression
//   operator    := == = != <> < <= =< > >= => BETWEEN IN BEGINSWITH ENDSWITH CONTAINS LIKE MATCHES
//   expression  := primary ("." (key | aggregate))*
//   primary     := number | string | nil | NULL | TRUE | YES | FALSE | NO | "{" [expression ("," expression)*] "}"
//                | %@ | $NAME | SELF | key | SUBQUERY "(" expression "," $NAME "," predicate ")"
//
// Recursion happens only through parentheses, NOT, lists and SUBQUERY, and each of those counts
// against `PredicateLimits.maximumDepth`; chains of AND/OR and key path components are loops. So
// no input can overflow the stack, and the work is linear in the text's length.

extension KeelPredicate {
    /// Parses a predicate in NSPredicate format. Errors are `PREDICATE` with `details.position`.
    public static func parse(_ text: String, limits: PredicateLimits = .standard) throws(KeelError) -> KeelPredicate {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(min(text.utf8.count, limits.maximumLength + 1))
        for scalar in text.unicodeScalars {
            guard scalars.count < limits.maximumLength else {
                throw PredicateError.at(
                    limits.maximumLength, expected: "a predicate of at most \(limits.maximumLength) characters", found: "a longer one")
            }
            scalars.append(scalar)
        }
        var parser = PredicateParser(PredicateLexer(scalars, limits: limits), limits: limits)
        return try parser.parseWhole()
    }
}

struct PredicateParser {
    private var lexer: PredicateLexer
    private let limits: PredicateLimits
    private var token: PredicateToken = .end
    private var start = 0
    private var depth = 0
    private var argumentCount = 0

    init(_ lexer: PredicateLexer, limits: PredicateLimits) {
        self.lexer = lexer
        self.limits = limits
    }

    mutating func parseWhole() throws(KeelError) -> KeelPredicate {
        try advance()
        guard token != .end else { throw PredicateError.at(start, expected: "a predicate", found: "nothing") }
        let predicate = try parseOr()
        guard token == .end else { throw unexpected("AND, OR or the end of the predicate") }
        return predicate
    }

    /// One expression and nothing after it (a sort key).
    mutating func parseWholeExpression() throws(KeelError) -> KeelExpression {
        try advance()
        let expression = try parseExpression()
        guard token == .end else { throw unexpected("the end of the key path") }
        return expression
    }

    // MARK: - Predicates

    private mutating func parseOr() throws(KeelError) -> KeelPredicate {
        var terms = [try parseAnd()]
        while token == .keyword(.or) || token == .symbol("||") {
            try advance()
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? terms[0] : .or(flattening: terms)
    }

    private mutating func parseAnd() throws(KeelError) -> KeelPredicate {
        var terms = [try parseUnary()]
        while token == .keyword(.and) || token == .symbol("&&") {
            try advance()
            terms.append(try parseUnary())
        }
        return terms.count == 1 ? terms[0] : .and(flattening: terms)
    }

    private mutating func parseUnary() throws(KeelError) -> KeelPredicate {
        switch token {
        case .keyword(.not), .symbol("!"):
            try enter()
            try advance()
            let inner = try parseUnary()
            depth -= 1
            return .not(inner)
        case .symbol("("):
            try enter()
            try advance()
            let inner = try parseOr()
            try expect(.symbol(")"), "')'")
            depth -= 1
            return inner
        case .keyword(.truePredicate):
            try advance()
            return .constant(true)
        case .keyword(.falsePredicate):
            try advance()
            return .constant(false)
        default:
            return .comparison(try parseComparison())
        }
    }

    private mutating func parseComparison() throws(KeelError) -> Comparison {
        var modifier = ComparisonModifier.direct
        switch token {
        case .keyword(.any), .keyword(.some): modifier = .any
        case .keyword(.all): modifier = .all
        case .keyword(.none): modifier = .none
        default: break
        }
        if modifier != .direct { try advance() }
        let left = try parseExpression()
        let opStart = start
        let op: ComparisonOperator
        switch token {
        case .symbol("=="): op = .equal
        case .symbol("!="): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="): op = .greaterOrEqual
        case .keyword(.between): op = .between
        case .keyword(.in): op = .in
        case .keyword(.beginsWith): op = .beginsWith
        case .keyword(.endsWith): op = .endsWith
        case .keyword(.contains): op = .contains
        case .keyword(.like): op = .like
        case .keyword(.matches): op = .matches
        default:
            throw unexpected("a comparison operator (==, !=, <, <=, >, >=, BETWEEN, IN, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, MATCHES)")
        }
        try advance()
        var options: StringOptions = []
        if case .options(let o) = token {
            options = o
            try advance()
        }
        let right = try parseExpression()
        return Comparison(modifier: modifier, left: left, op: op, options: options, right: right, position: SourcePosition(opStart))
    }

    // MARK: - Expressions

    private mutating func parseExpression() throws(KeelError) -> KeelExpression {
        let exprStart = SourcePosition(start)
        var path: PredicateKeyPath
        switch token {
        case .int(let i): return try literal(.int(i))
        case .real(let text): return try literal(.real(text))
        case .string(let s): return try literal(.string(s))
        case .keyword(.nil_), .keyword(.null): return try literal(.null)
        case .keyword(.true_), .keyword(.yes): return try literal(.bool(true))
        case .keyword(.false_), .keyword(.no): return try literal(.bool(false))
        case .argument:
            defer { argumentCount += 1 }
            try advance()
            try refuseComponents("an operator (an argument has no key path)")
            return .argument(argumentCount, position: exprStart)
        case .symbol("{"):
            return try parseList()
        case .variable(let name):
            try advance()
            path = PredicateKeyPath(base: .variable(name), components: [], position: exprStart)
        case .keyword(.self_):
            try advance()
            path = PredicateKeyPath(base: .object, components: [], position: exprStart)
        case .identifier(let name):
            try advance()
            path = PredicateKeyPath(base: .object, components: [.key(name)], position: exprStart, componentPositions: [exprStart])
        case .keyword(.subquery):
            path = try parseSubquery()
        case .keyword(let k):
            throw unexpected("a key, a value, %@ or $VARIABLE (\(k.rawValue) is a keyword; write #\(k.rawValue.lowercased()) for a key of that name)")
        default:
            throw unexpected("a key, a value, %@, $VARIABLE, SELF, SUBQUERY or a {list}")
        }
        while token == .symbol(".") {
            try advance()
            let componentStart = SourcePosition(start)
            switch token {
            case .identifier(let name): path.components.append(.key(name))
            case .aggregate(let function): path.components.append(.aggregate(function))
            default: throw unexpected("a key or an aggregate (@count, @sum, @avg, @min, @max) after '.'")
            }
            path.componentPositions.append(componentStart)
            try advance()
        }
        return .keyPath(path)
    }

    private mutating func literal(_ kind: Literal.Kind) throws(KeelError) -> KeelExpression {
        let position = SourcePosition(start)
        try advance()
        try refuseComponents("an operator (a value has no key path)")
        return .literal(Literal(kind, position: position))
    }

    private mutating func refuseComponents(_ expected: String) throws(KeelError) {
        if token == .symbol(".") { throw unexpected(expected) }
    }

    private mutating func parseList() throws(KeelError) -> KeelExpression {
        let position = SourcePosition(start)
        try enter()
        try advance()
        var elements: [KeelExpression] = []
        if token != .symbol("}") {
            while true {
                guard elements.count < limits.maximumListCount else {
                    throw PredicateError.at(start, expected: "a list of at most \(limits.maximumListCount) elements", found: "more")
                }
                elements.append(try parseExpression())
                if token == .symbol("}") { break }
                try expect(.symbol(","), "',' or '}'")
            }
        }
        try advance()
        depth -= 1
        try refuseComponents("an operator (a list has no key path)")
        return .list(elements, position: position)
    }

    private mutating func parseSubquery() throws(KeelError) -> PredicateKeyPath {
        let position = SourcePosition(start)
        try enter()
        try advance()
        try expect(.symbol("("), "'(' after SUBQUERY")
        let collection = try parseExpression()
        try expect(.symbol(","), "',' after the SUBQUERY's collection")
        guard case .variable(let variable) = token else { throw unexpected("a $variable naming the SUBQUERY's element") }
        try advance()
        try expect(.symbol(","), "',' after the SUBQUERY's variable")
        let predicate = try parseOr()
        try expect(.symbol(")"), "')' closing the SUBQUERY")
        depth -= 1
        return PredicateKeyPath(base: .subquery(collection: collection, variable: variable, predicate: predicate), components: [], position: position)
    }

    // MARK: - Tokens

    private mutating func advance() throws(KeelError) {
        (token, start) = try lexer.next()
    }

    private mutating func expect(_ expected: PredicateToken, _ description: String) throws(KeelError) {
        guard token == expected else { throw unexpected(description) }
        try advance()
    }

    private mutating func enter() throws(KeelError) {
        depth += 1
        if depth > limits.maximumDepth {
            throw PredicateError.at(start, expected: "at most \(limits.maximumDepth) levels of nesting", found: "deeper nesting")
        }
    }

    private func unexpected(_ expected: String) -> KeelError {
        PredicateError.at(start, expected: expected, found: token.described)
    }
}
