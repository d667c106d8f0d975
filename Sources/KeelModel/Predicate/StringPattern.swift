// The right side of a string comparison, prepared once: folded by the comparison's options,
// as UTF-8 bytes, LIKE segments or a compiled regular expression. Matching a row then costs no
// allocation when the row's text is native and ASCII (the `[c]` folding is done on the fly) and
// one fold of the row's text otherwise.

struct StringPattern: Sendable {
    enum Kind: Sendable {
        case equal, beginsWith, endsWith, contains
        case like(LikePattern)
        /// MATCHES: the whole (folded) text must match. `[c]` is compiled into the regex
        /// (`ignoresCase`) rather than folded into the pattern, so escapes like `\D` keep
        /// their meaning.
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
            do {
                var regex = try Regex(source)
                if options.contains(.caseInsensitive) { regex = regex.ignoresCase() }
                kind = .matches(CompiledRegex(regex))
            } catch {
                throw PredicateError.at(position, expected: "a valid regular expression after MATCHES", found: "\(error)")
            }
        default: return nil
        }
        needle = Array(TextFolding.fold(pattern, options).utf8)
    }

    /// Whether `text` matches.
    func matches(_ text: String) -> Bool {
        if case .matches(let regex) = kind {
            let subject = TextFolding.fold(text, options.subtracting(.caseInsensitive))
            return ((try? regex.regex.wholeMatch(in: subject)) ?? nil) != nil
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
    func matches(utf8 text: UnsafeBufferPointer<UInt8>) -> Bool? {
        let ascii = TextFolding.isASCII(text)
        if !ascii {
            guard let string = String(validating: text, as: UTF8.self) else { return nil }
            if case .matches = kind { return matches(string) }
            if options.isEmpty { return bytes(text, lower: false) }
            return matches(string)
        }
        if case .matches = kind { return matches(String(decoding: text, as: UTF8.self)) }
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

/// A compiled MATCHES pattern, shared by every evaluation of a bound predicate.
/// `@unchecked Sendable`: `Regex<AnyRegexOutput>` is not `Sendable` only because its output type
/// is not; the regex itself is an immutable value whose program is built on first use under the
/// standard library's atomic initialization. The initializer runs one match so even that
/// happens before the regex is shared.
final class CompiledRegex: @unchecked Sendable {
    let regex: Regex<AnyRegexOutput>

    init(_ regex: Regex<AnyRegexOutput>) {
        self.regex = regex
        _ = try? regex.wholeMatch(in: "")
    }
}
