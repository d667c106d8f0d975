// The canonical text of a predicate: keywords upper case, `==`/`!=`/`<=`/`>=` for the operator
// synonyms, `ANY` for `SOME`, strings in double quotes with escapes, AND/OR terms parenthesized
// only where precedence needs it, `NOT (…)` around anything but a constant, keys that collide
// with keywords written `#key`. `KeelPredicate.parse(p.description) == p` for every parsed `p`.

extension KeelPredicate: CustomStringConvertible {
    public var description: String {
        switch self {
        case .constant(let b): return b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let inner):
            if case .constant = inner { return "NOT \(inner)" }
            return "NOT (\(inner))"
        case .and(let terms):
            return terms.map { term in
                switch term {
                case .or, .and: "(\(term))"
                default: term.description
                }
            }.joined(separator: " AND ")
        case .or(let terms):
            return terms.map { term in
                if case .or = term { return "(\(term))" }
                return term.description
            }.joined(separator: " OR ")
        case .comparison(let c): return c.description
        }
    }
}

extension Comparison: CustomStringConvertible {
    public var description: String {
        let prefix = modifier == .direct ? "" : modifier.rawValue + " "
        return "\(prefix)\(left) \(op.rawValue)\(options.text) \(right)"
    }
}

extension KeelExpression: CustomStringConvertible {
    public var description: String {
        switch self {
        case .literal(let l): l.description
        case .list(let elements, _): "{" + elements.map(\.description).joined(separator: ", ") + "}"
        case .argument: "%@"
        case .keyPath(let k): k.description
        }
    }
}

extension Literal: CustomStringConvertible {
    public var description: String {
        switch kind {
        case .null: "nil"
        case .bool(let b): b ? "TRUE" : "FALSE"
        case .int(let i): String(i)
        case .real(let text): text
        case .string(let s): Self.quoted(s)
        }
    }

    /// `s` in double quotes, with `\\ \" \n \r \t` and `\uXXXX` for other control characters.
    static func quoted(_ s: String) -> String {
        TextQuoting.quoted(s) { value in
            let hex = String(value, radix: 16, uppercase: true)
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
    }
}

extension PredicateKeyPath: CustomStringConvertible {
    public var description: String {
        var parts: [String]
        switch base {
        case .object:
            // `SELF` is left out before a key (`SELF.name` is `name`), not before an aggregate:
            // a key path cannot start with one (`SELF.@count`).
            if case .key? = components.first { parts = [] } else { parts = ["SELF"] }
        case .variable(let name): parts = ["$" + name]
        case .subquery(let collection, let variable, let predicate):
            parts = ["SUBQUERY(\(collection), $\(variable), \(predicate))"]
        }
        for component in components {
            switch component {
            case .key(let name): parts.append(Self.escapedKey(name))
            case .aggregate(let f): parts.append(f.rawValue)
            }
        }
        return parts.joined(separator: ".")
    }

    /// A key as the lexer reads it back: `#` before keywords (`#in`). Programs that write
    /// predicate text (the typed client's keys) escape their keys with it.
    public static func escapedKey(_ name: String) -> String {
        PredicateKeyword.byName[name.uppercased()] == nil ? name : "#" + name
    }
}
