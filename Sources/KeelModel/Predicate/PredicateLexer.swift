// Tokens of the predicate format, read on demand (the parser holds one token of look-ahead, so a
// 1 MiB predicate never becomes a million-element token array). Works over the text's Unicode
// scalars; positions are scalar offsets from 0.
//
// | token | spelling |
// | --- | --- |
// | keyword | AND OR NOT ANY SOME ALL NONE IN LIKE MATCHES CONTAINS BEGINSWITH ENDSWITH BETWEEN TRUEPREDICATE FALSEPREDICATE NIL NULL SELF TRUE YES FALSE NO SUBQUERY — any case |
// | identifier | a letter or `_`, then letters, digits, `_`; `#name` is an identifier even when `name` is a keyword |
// | number | `[-+]digits[.digits][e[-+]digits]`, `0x…`, `0o…`, `0b…` |
// | string | `'…'` or `"…"` with `\\ \' \" \n \r \t \0 \uXXXX` (a surrogate pair as two `\u`) |
// | variable | `$NAME` |
// | argument | `%@` |
// | aggregate | `@count @sum @avg @min @max` (any case) |
// | options | `[c]`, `[d]`, `[cd]`, `[dc]` (any case) |
// | operator | `== = != <> < <= =< > >= => && \|\| !` and `( ) { } , .` |

/// A predicate keyword (matched case-insensitively).
enum PredicateKeyword: String, CaseIterable {
    case and = "AND", or = "OR", not = "NOT", any = "ANY", some = "SOME", all = "ALL", none = "NONE"
    case `in` = "IN", like = "LIKE", matches = "MATCHES", contains = "CONTAINS", beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH", between = "BETWEEN", truePredicate = "TRUEPREDICATE"
    case falsePredicate = "FALSEPREDICATE", nil_ = "NIL", null = "NULL", self_ = "SELF", true_ = "TRUE"
    case yes = "YES", false_ = "FALSE", no = "NO", subquery = "SUBQUERY"

    static let byName: [String: PredicateKeyword] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })
}

enum PredicateToken: Equatable {
    case keyword(PredicateKeyword)
    case identifier(String)
    case int(Int64)
    case real(String)
    case string(String)
    case variable(String)
    case argument
    case aggregate(AggregateFunction)
    case options(StringOptions)
    /// One of `== != < <= > >= && || ! ( ) { } , .` (synonyms already mapped: `=`→`==`,
    /// `<>`→`!=`, `=<`→`<=`, `=>`→`>=`).
    case symbol(String)
    case end

    /// How the token reads in an error message.
    var described: String {
        switch self {
        case .keyword(let k): k.rawValue
        case .identifier(let name): "key \(name)"
        case .int(let i): "number \(i)"
        case .real(let text): "number \(text)"
        case .string: "a string"
        case .variable(let name): "$\(name)"
        case .argument: "%@"
        case .aggregate(let a): a.rawValue
        case .options(let o): o.text
        case .symbol(let s): "'\(s)'"
        case .end: "the end of the predicate"
        }
    }
}

struct PredicateLexer {
    private let scalars: [Unicode.Scalar]
    private let limits: PredicateLimits
    private(set) var offset = 0

    init(_ scalars: [Unicode.Scalar], limits: PredicateLimits) {
        self.scalars = scalars
        self.limits = limits
    }

    var count: Int { scalars.count }

    /// The next token and where it starts.
    mutating func next() throws(KeelError) -> (PredicateToken, Int) {
        while offset < scalars.count, Self.isSpace(scalars[offset]) { offset += 1 }
        let start = offset
        guard offset < scalars.count else { return (.end, start) }
        let c = scalars[offset]
        switch c {
        case "'", "\"": return (try string(quote: c), start)
        case "$":
            offset += 1
            guard let name = identifier() else { throw PredicateError.at(offset, expected: "a variable name after $", found: found()) }
            return (.variable(name), start)
        case "%":
            guard peek(1) == "@" else { throw PredicateError.at(start, expected: "%@", found: found()) }
            offset += 2
            return (.argument, start)
        case "@":
            offset += 1
            guard let name = identifier(), let function = AggregateFunction(rawValue: "@" + name.lowercased()) else {
                throw PredicateError.at(start, expected: "@count, @sum, @avg, @min or @max", found: found(from: start))
            }
            return (.aggregate(function), start)
        case "[": return (try options(), start)
        case "#":
            offset += 1
            guard let name = identifier() else { throw PredicateError.at(offset, expected: "a key after #", found: found()) }
            return (.identifier(name), start)
        case "0"..."9": return (try number(), start)
        case "-", "+":
            if let d = peek(1), ("0"..."9").contains(d) { return (try number(), start) }
            throw PredicateError.at(start, expected: "a number after '\(c)' (arithmetic is not supported)", found: found())
        default: break
        }
        if let name = identifier() {
            if let keyword = PredicateKeyword.byName[name.uppercased()] { return (.keyword(keyword), start) }
            return (.identifier(name), start)
        }
        return (try symbol(), start)
    }

    // MARK: - Pieces

    private func peek(_ ahead: Int) -> Unicode.Scalar? {
        offset + ahead < scalars.count ? scalars[offset + ahead] : nil
    }

    /// A short quote of the text at `from` for error messages.
    func found(from: Int? = nil) -> String {
        let start = from ?? offset
        guard start < scalars.count else { return "the end of the predicate" }
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars[start..<min(scalars.count, start + 16)])
        return "'\(String(text))\(start + 16 < scalars.count ? "…" : "")'"
    }

    private static func isSpace(_ c: Unicode.Scalar) -> Bool {
        c == " " || c == "\t" || c == "\n" || c == "\r" || c.properties.isWhitespace
    }

    private static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        c == "_" || ("a"..."z").contains(c) || ("A"..."Z").contains(c) || (c.value >= 0x80 && c.properties.isAlphabetic)
    }

    private static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
        isIdentifierStart(c) || ("0"..."9").contains(c) || (c.value >= 0x80 && c.properties.numericType != nil)
    }

    private mutating func identifier() -> String? {
        guard offset < scalars.count, Self.isIdentifierStart(scalars[offset]) else { return nil }
        let start = offset
        while offset < scalars.count, Self.isIdentifierPart(scalars[offset]) { offset += 1 }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[start..<offset])
        return String(view)
    }

    private mutating func symbol() throws(KeelError) -> PredicateToken {
        let c = scalars[offset], d = peek(1)
        let two: String? =
            switch (c, d) {
            case ("=", "="): "=="
            case ("!", "="), ("<", ">"): "!="
            case ("<", "="), ("=", "<"): "<="
            case (">", "="), ("=", ">"): ">="
            case ("&", "&"): "&&"
            case ("|", "|"): "||"
            default: nil
            }
        if let two {
            offset += 2
            return .symbol(two)
        }
        switch c {
        case "=":
            offset += 1
            return .symbol("==")
        case "<", ">", "!", "(", ")", "{", "}", ",", ".":
            offset += 1
            return .symbol(String(c))
        default:
            throw PredicateError.at(offset, expected: "a key, a value, an operator or a parenthesis", found: found())
        }
    }

    private mutating func options() throws(KeelError) -> PredicateToken {
        let start = offset
        offset += 1
        var options: StringOptions = []
        while offset < scalars.count, scalars[offset] != "]" {
            switch scalars[offset] {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            default: throw PredicateError.at(offset, expected: "the options c, d or cd inside [ ]", found: found())
            }
            offset += 1
            if offset - start > 4 { throw PredicateError.at(offset, expected: "]", found: found()) }
        }
        guard offset < scalars.count, !options.isEmpty else {
            throw PredicateError.at(offset, expected: options.isEmpty ? "the options c, d or cd" : "]", found: found())
        }
        offset += 1
        return .options(options)
    }

    private mutating func number() throws(KeelError) -> PredicateToken {
        let start = offset
        var negative = false
        if scalars[offset] == "-" || scalars[offset] == "+" {
            negative = scalars[offset] == "-"
            offset += 1
        }
        if scalars[offset] == "0", let radix = Self.radix(peek(1)) {
            offset += 2
            let digitsStart = offset
            var magnitude: UInt64 = 0
            while offset < scalars.count, let digit = Character(scalars[offset]).hexDigitValue, digit < radix {
                let (m, o1) = magnitude.multipliedReportingOverflow(by: UInt64(radix))
                let (n, o2) = m.addingReportingOverflow(UInt64(digit))
                guard !o1, !o2 else { throw PredicateError.at(start, expected: "a whole number within 64 bits", found: found(from: start)) }
                magnitude = n
                offset += 1
            }
            guard offset > digitsStart else { throw PredicateError.at(offset, expected: "digits of base \(radix)", found: found()) }
            try endOfNumber(start)
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else {
                    throw PredicateError.at(start, expected: "a whole number within 64 bits", found: found(from: start))
                }
                return .int(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
            }
            guard magnitude <= UInt64(Int64.max) else {
                throw PredicateError.at(start, expected: "a whole number within 64 bits", found: found(from: start))
            }
            return .int(Int64(magnitude))
        }
        var isReal = false
        digits()
        if offset < scalars.count, scalars[offset] == ".", let d = peek(1), ("0"..."9").contains(d) {
            isReal = true
            offset += 1
            digits()
        }
        if offset < scalars.count, scalars[offset] == "e" || scalars[offset] == "E" {
            let mark = offset
            offset += 1
            if offset < scalars.count, scalars[offset] == "-" || scalars[offset] == "+" { offset += 1 }
            if offset < scalars.count, ("0"..."9").contains(scalars[offset]) {
                isReal = true
                digits()
            } else {
                offset = mark
            }
        }
        try endOfNumber(start)
        guard offset - start <= limits.maximumNumberLength else {
            throw PredicateError.at(start, expected: "a number of at most \(limits.maximumNumberLength) characters", found: "\(offset - start)")
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[(scalars[start] == "+" ? start + 1 : start)..<offset])
        let text = String(view)
        if !isReal, let i = Int64(text) { return .int(i) }
        guard let d = Double(text), d.isFinite else {
            throw PredicateError.at(start, expected: "a number within the range of a double", found: found(from: start))
        }
        return .real(text)
    }

    /// The base a `0x`/`0o`/`0b` prefix announces.
    private static func radix(_ c: Unicode.Scalar?) -> Int? {
        switch c {
        case "x", "X": 16
        case "o", "O": 8
        case "b", "B": 2
        default: nil
        }
    }

    private mutating func digits() {
        while offset < scalars.count, ("0"..."9").contains(scalars[offset]) { offset += 1 }
    }

    /// A number runs into a letter (`12abc`): refused rather than read as two tokens.
    private func endOfNumber(_ start: Int) throws(KeelError) {
        if offset < scalars.count, Self.isIdentifierPart(scalars[offset]) {
            throw PredicateError.at(offset, expected: "a digit or the end of the number", found: found())
        }
    }

    private mutating func string(quote: Unicode.Scalar) throws(KeelError) -> PredicateToken {
        let start = offset
        offset += 1
        var view = String.UnicodeScalarView()
        var length = 0
        while true {
            guard offset < scalars.count else {
                throw PredicateError.at(start, expected: "a closing \(quote) for the string starting here", found: "the end of the predicate")
            }
            var c = scalars[offset]
            if c == quote { break }
            if c == "\\" {
                offset += 1
                guard offset < scalars.count else { throw PredicateError.at(offset, expected: "an escape after \\", found: found()) }
                switch scalars[offset] {
                case "\\", "'", "\"": c = scalars[offset]
                case "n": c = "\n"
                case "r": c = "\r"
                case "t": c = "\t"
                case "0": c = "\0"
                case "u": c = try unicodeEscape()
                default:
                    throw PredicateError.at(offset - 1, expected: "one of the escapes \\\\ \\' \\\" \\n \\r \\t \\0 \\uXXXX", found: found(from: offset - 1))
                }
            }
            view.append(c)
            length += 1
            guard length <= limits.maximumStringLength else {
                throw PredicateError.at(start, expected: "a string of at most \(limits.maximumStringLength) characters", found: "a longer string")
            }
            offset += 1
        }
        offset += 1
        return .string(String(view))
    }

    /// `\uXXXX` with `offset` on the `u`; leaves `offset` on the escape's last digit.
    private mutating func unicodeEscape() throws(KeelError) -> Unicode.Scalar {
        let escapeStart = offset - 1
        func hex4() throws(KeelError) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                offset += 1
                guard offset < scalars.count, let digit = Character(scalars[offset]).hexDigitValue else {
                    throw PredicateError.at(offset, expected: "four hexadecimal digits after \\u", found: found())
                }
                value = value * 16 + UInt32(digit)
            }
            return value
        }
        let high = try hex4()
        if (0xD800..<0xDC00).contains(high) {
            guard peek(1) == "\\", peek(2) == "u" else {
                throw PredicateError.at(escapeStart, expected: "a low surrogate \\uDC00…\\uDFFF after a high one", found: found(from: escapeStart))
            }
            offset += 2
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low), let scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)) else {
                throw PredicateError.at(escapeStart, expected: "a low surrogate \\uDC00…\\uDFFF after a high one", found: found(from: escapeStart))
            }
            return scalar
        }
        guard let scalar = Unicode.Scalar(high) else {
            throw PredicateError.at(escapeStart, expected: "a Unicode scalar (not a lone surrogate)", found: found(from: escapeStart))
        }
        return scalar
    }
}
