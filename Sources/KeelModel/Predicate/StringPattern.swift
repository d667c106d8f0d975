// The right side of a string comparison, prepared once: folded by the comparison's options,
// as UTF-8 bytes, LIKE segments or a compiled regular expression. Matching a row then costs no
// allocation when the row's text is native and ASCII (the `[c]` folding is done on the fly) and
// one fold of the row's text otherwise.
//
// MATCHES runs ICU's regular expressions (Foundation's NSRegularExpression): the engine and the
// syntax of NSPredicate's MATCHES. ICU backtracks, so a pattern such as `(a*)*b` takes time
// exponential in the text; every match is therefore given a budget of backtracking (below), and
// a value that exhausts it fails the fetch with `PREDICATE` instead of holding a thread forever.

import Foundation

struct StringPattern: Sendable {
    enum Kind: Sendable {
        case equal, beginsWith, endsWith, contains
        case like(LikePattern)
        /// MATCHES: the whole (folded) text must match. `[c]` is compiled into the regex
        /// (ICU's case-insensitive option) rather than folded into the pattern, so escapes like
        /// `\D` keep their meaning.
        case matches(CompiledRegex)
    }

    let kind: Kind
    let options: StringOptions
    /// The folded pattern's UTF-8 bytes (equal, beginsWith, endsWith, contains).
    let needle: [UInt8]

    /// Prepares `pattern` for `op` (a string operator, or `==` with options); nil for other
    /// operators. A bad MATCHES pattern is refused here, at bind time.
    init?(_ op: ComparisonOperator, _ pattern: String, options: StringOptions, position: SourcePosition) throws(KeelError) {
        self.options = options
        switch op {
        case .equal, .notEqual: kind = .equal
        case .beginsWith: kind = .beginsWith
        case .endsWith: kind = .endsWith
        case .contains: kind = .contains
        case .like: kind = .like(LikePattern(TextFolding.fold(pattern, options)))
        case .matches:
            let source = TextFolding.fold(pattern, options.subtracting(.caseInsensitive))
            kind = .matches(try CompiledRegex(source, caseInsensitive: options.contains(.caseInsensitive), position: position))
        default: return nil
        }
        needle = Array(TextFolding.fold(pattern, options).utf8)
    }

    /// Whether `text` matches. Only MATCHES throws: `PREDICATE` when the text exhausts the
    /// regular expression's backtracking budget.
    func matches(_ text: String) throws(KeelError) -> Bool {
        if case .matches(let regex) = kind {
            return try regex.wholeMatch(TextFolding.fold(text, options.subtracting(.caseInsensitive)))
        }
        if options.isEmpty { return withBytes(text) { bytes($0, lower: false) } }
        // ASCII text folds to itself with A–Z lowered: do that on the fly.
        if let answer = text.utf8.withContiguousStorageIfAvailable({ buffer -> Bool? in
            guard TextFolding.isASCII(buffer) else { return nil }
            return bytes(buffer, lower: options.contains(.caseInsensitive))
        }), let answer {
            return answer
        }
        return withBytes(TextFolding.fold(text, options)) { bytes($0, lower: false) }
    }

    /// `matches` on a row's UTF-8 bytes in place (RawRowFilter.swift): no `String` is made when
    /// the text is ASCII or no folding is asked; nil when the bytes are not valid UTF-8.
    func matches(utf8 text: UnsafeBufferPointer<UInt8>) throws(KeelError) -> Bool? {
        let ascii = TextFolding.isASCII(text)
        if !ascii {
            guard let string = String(validating: text, as: UTF8.self) else { return nil }
            if case .matches = kind { return try matches(string) }
            if options.isEmpty { return bytes(text, lower: false) }
            return try matches(string)
        }
        if case .matches = kind { return try matches(String(decoding: text, as: UTF8.self)) }
        return bytes(text, lower: options.contains(.caseInsensitive))
    }

    private func withBytes(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        if let answer = text.utf8.withContiguousStorageIfAvailable(body) { return answer }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    private func bytes(_ text: UnsafeBufferPointer<UInt8>, lower: Bool) -> Bool {
        needle.withUnsafeBufferPointer { needle in
            switch kind {
            case .equal: return text.count == needle.count && Self.equal(text, 0, needle, lower)
            case .beginsWith: return text.count >= needle.count && Self.equal(text, 0, needle, lower)
            case .endsWith: return text.count >= needle.count && Self.equal(text, text.count - needle.count, needle, lower)
            case .contains: return Self.find(needle, in: text, lower)
            case .like(let pattern): return pattern.matches(text, lower: lower)
            case .matches: return false
            }
        }
    }

    @inline(__always)
    private static func equal(_ text: UnsafeBufferPointer<UInt8>, _ at: Int, _ needle: UnsafeBufferPointer<UInt8>, _ lower: Bool) -> Bool {
        if lower {
            for j in 0..<needle.count where TextFolding.lowerASCII(text[at + j]) != needle[j] { return false }
        } else {
            for j in 0..<needle.count where text[at + j] != needle[j] { return false }
        }
        return true
    }

    /// Substring search: scan for the needle's first byte, then compare the rest.
    private static func find(_ needle: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>, _ lower: Bool) -> Bool {
        guard let first = needle.first else { return true }
        guard text.count >= needle.count else { return false }
        let last = text.count - needle.count
        var i = 0
        if lower {
            // `first` is already folded; an ASCII letter matches either case of the text.
            let other = first &- 0x61 < 26 ? first & ~0x20 : first
            while i <= last {
                let t = text[i]
                if t == first || t == other, equal(text, i, needle, true) { return true }
                i += 1
            }
        } else {
            while i <= last {
                if text[i] == first, equal(text, i, needle, false) { return true }
                i += 1
            }
        }
        return false
    }
}

/// A compiled MATCHES pattern, shared by every evaluation of a bound predicate (and by the
/// requests that share a cached one). `@unchecked Sendable`: an `NSRegularExpression` is
/// immutable once made and ICU matches it from any number of threads at once (each match has a
/// matcher of its own).
final class CompiledRegex: @unchecked Sendable {
    private let regex: NSRegularExpression
    /// Where the pattern stands in the predicate, for the errors of evaluation.
    let position: SourcePosition

    /// Backtracking allowed for one match, in ICU's progress ticks (one tick about every 10,000
    /// states ICU saves to backtrack to; a count of work, not of time, so the same pattern and
    /// text give the same answer on any machine): 100 ticks plus one per 1,000 UTF-16 units of
    /// the text. A linear pattern spends about one tick per 10,000 characters; `(a*)*b` against
    /// 30 `a`s needs millions.
    static func tickBudget(utf16Count: Int) -> Int { 100 + utf16Count / 1_000 }

    /// Compiles `pattern` for whole-text matches; a pattern ICU refuses is a `PREDICATE` error
    /// at `position`.
    init(_ pattern: String, caseInsensitive: Bool, position: SourcePosition) throws(KeelError) {
        self.position = position
        let options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
        func refused() -> KeelError {
            PredicateError.at(position, expected: "a valid regular expression after MATCHES", found: Self.refusal(of: pattern))
        }
        guard (try? NSRegularExpression(pattern: pattern, options: options)) != nil else { throw refused() }
        // The whole text must match: the pattern in a group followed by the end of the text. A
        // pattern that compiles alone closes its own groups, so the wrapper's ")" is ours unless
        // the pattern's end swallows it — a `#` comment under (?x), ended here by a line break
        // (whitespace under (?x)), or an unended \Q, ended by \E; a swallowed ")" leaves the
        // group open and the wrapper fails to compile, so each form is tried in turn.
        for ending in [")", "\n)", "\\E)"] {
            if let whole = try? NSRegularExpression(pattern: "(?:" + pattern + ending + "\\z", options: options) {
                regex = whole
                return
            }
        }
        throw refused()
    }

    /// Why ICU refused `pattern`, for a person: ICU's own error says only "invalid", and Swift's
    /// regex parser, whose syntax is close, often says where and why; else the pattern quoted.
    static func refusal(of pattern: String) -> String {
        do { _ = try Regex(pattern) } catch { return "\(error)" }
        return String(reflecting: pattern)
    }

    /// Whether the whole of `subject` matches; `PREDICATE` when the match needs more
    /// backtracking than `tickBudget` allows or more than ICU's backtracking stack holds.
    func wholeMatch(_ subject: String) throws(KeelError) -> Bool {
        let length = subject.utf16.count
        let budget = Self.tickBudget(utf16Count: length)
        var found = false, ticks = 0, failed = false
        regex.enumerateMatches(
            in: subject, options: [.reportProgress, .reportCompletion, .anchored, .withoutAnchoringBounds],
            range: NSRange(location: 0, length: length)
        ) { match, flags, stop in
            if match != nil {
                found = true
                stop.pointee = true
            } else if flags.contains(.internalError) {
                failed = true
            } else if flags.contains(.progress) {
                ticks += 1
                if ticks > budget {
                    failed = true
                    stop.pointee = true
                }
            }
        }
        guard !failed || found else {
            throw PredicateError.problem(
                position,
                "MATCHES gave up on a text of \(length) UTF-16 units: the regular expression backtracks too much "
                    + "(more than \(budget * 10_000) saved states; nested repetitions such as (a*)* or (a|a)* grow exponentially "
                    + "with the text): rewrite the pattern")
        }
        return found
    }
}
