// Reading JSON: a hand-written byte scanner over UTF-8, strict RFC 8259, used for every protocol
// line and every model file, so it is both fast and hostile-input safe.
//
// What it accepts, exactly:
// - one JSON value with optional whitespace (space, tab, LF, CR) around it; nothing else after it;
// - no byte-order mark, no comments, no trailing commas, no single quotes, no NaN/Infinity literals;
// - numbers per the RFC grammar. Without fraction or exponent and within Int64 → `.int`, any other
//   → `.double`; a number too large for a Double (`1e400`) is refused, never made infinite;
// - strings of valid UTF-8 (no overlong forms, no encoded surrogates, nothing above U+10FFFF),
//   no raw control characters below U+0020, escapes `\" \\ \/ \b \f \n \r \t \uXXXX` where a
//   `\u` surrogate must come as a high+low pair;
// - objects with distinct keys (a duplicate is refused: last-one-wins hides mistakes), kept in
//   their written order;
// - nesting up to `JSON.maximumDepth` arrays/objects (recursion is bounded, so a line of 10⁶ `[`
//   fails cleanly instead of overflowing the stack).
// Every error is `KeelError(.parse, "invalid JSON at offset N: expected …, found …")` with the byte
// offset also in `details.offset`.

import Collections

extension JSON {
    /// Arrays and objects nested deeper than this are refused.
    public static let maximumDepth = 512

    /// Parses one JSON text (RFC 8259, strict).
    public static func parse(_ text: String) throws(KeelError) -> JSON {
        var text = text
        let result: Result<JSON, KeelError> = text.withUTF8 { bytes in
            var parser = JSONParser(bytes)
            return Result { () throws(KeelError) -> JSON in try parser.parseDocument() }
        }
        return try result.get()
    }

    /// Parses one JSON text from UTF-8 bytes in memory (what the generic form does without
    /// its detour through `withContiguousStorageIfAvailable`).
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(KeelError) -> JSON {
        var parser = JSONParser(bytes)
        return try parser.parseDocument()
    }

    /// Parses one JSON text from its UTF-8 bytes.
    public static func parse(_ bytes: some Collection<UInt8>) throws(KeelError) -> JSON {
        let direct: Result<JSON, KeelError>? = bytes.withContiguousStorageIfAvailable { buffer in
            var parser = JSONParser(buffer)
            return Result { () throws(KeelError) -> JSON in try parser.parseDocument() }
        }
        if let direct { return try direct.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(buffer)
            return Result { () throws(KeelError) -> JSON in try parser.parseDocument() }
        }.get()
    }
}

extension JSON {
    /// Parses a text that is one JSON array, handing over each element with the byte offset
    /// where it starts, without building the array.
    public static func parseArrayElements(
        _ bytes: UnsafeBufferPointer<UInt8>, _ body: (JSON, Int) throws(KeelError) -> Void
    ) throws(KeelError) {
        var parser = JSONParser(bytes)
        try parser.parseArrayDocument(body)
    }
}

/// The scanner. Holds a borrowed buffer: it lives only inside `JSON.parse`.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func parseDocument() throws(KeelError) -> JSON {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if position < bytes.count {
            throw error("the end of the text after a complete value")
        }
        return value
    }

    /// A document that is one array, element by element: `body` gets each element and the byte
    /// offset where it starts (a file of a million objects is never one `JSON` value).
    mutating func parseArrayDocument(_ body: (JSON, Int) throws(KeelError) -> Void) throws(KeelError) {
        skipWhitespace()
        guard peek == UInt8(ascii: "[") else { throw error("'['") }
        position += 1
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            position += 1
        } else {
            while true {
                skipWhitespace()
                let start = position
                try body(try parseValue(), start)
                skipWhitespace()
                if peek == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                guard peek == UInt8(ascii: "]") else { throw error("',' or ']' in an array") }
                position += 1
                break
            }
        }
        skipWhitespace()
        if position < bytes.count { throw error("the end of the text after a complete value") }
    }

    // MARK: Values

    private mutating func parseValue() throws(KeelError) -> JSON {
        guard position < bytes.count else { throw error("a value") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try literal(Self.trueWord, 4); return .bool(true)
        case UInt8(ascii: "f"): try literal(Self.falseWord, 5); return .bool(false)
        case UInt8(ascii: "n"): try literal(Self.nullWord, 4); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("a value")
        }
    }

    /// The bytes of `true`, `null` and the last four of `false`, as a little-endian load of
    /// them reads them.
    static let trueWord = UInt32(0x65_75_72_74)
    static let nullWord = UInt32(0x6C_6C_75_6E)
    static let falseWord = UInt32(0x65_73_6C_61)

    /// Steps over a literal of `count` bytes (4 or 5: `true`, `null`, `false`) whose last four
    /// are `word`; the first byte is known already.
    private mutating func literal(_ word: UInt32, _ count: Int) throws(KeelError) {
        guard bytes.count - position >= count, let base = bytes.baseAddress,
            UInt32(littleEndian: UnsafeRawPointer(base + position + count - 4).loadUnaligned(as: UInt32.self)) == word
        else { throw error("a value") }
        position += count
    }

    private mutating func enter() throws(KeelError) {
        depth += 1
        if depth > JSON.maximumDepth {
            throw KeelError(
                .parse, "invalid JSON at offset \(position): nesting deeper than \(JSON.maximumDepth) levels",
                details: ["offset": .int(Int64(position))])
        }
    }

    private mutating func parseArray() throws(KeelError) -> JSON {
        try enter()
        position += 1  // [
        var items: [JSON] = []
        skipWhitespace()
        if peek == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue())
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                depth -= 1
                return .array(items)
            default: throw error("',' or ']' in an array")
            }
        }
    }

    /// Members reserved for a non-empty object before its first is read.
    static let initialMembers = 12
    /// Members an object gathers in plain arrays before it moves to an OrderedDictionary that
    /// checks each new key by hashing (swift-collections hashes only sets larger than 15).
    static let linearMembers = 15

    /// Objects: an object of up to `linearMembers` members — a typical protocol reply — is gathered
    /// in two arrays and made an OrderedDictionary once, without hashing; its keys are checked
    /// for duplicates through a 64-bit filter (a bit per ASCII key, from its length and last
    /// byte), so that a key is compared with the others only when its bit was already set, or
    /// when a key is not plain ASCII (Swift compares those by canonical equivalence: "\u{212A}"
    /// equals "K", so no byte-based filter can rule them out). A larger object goes on in an
    /// OrderedDictionary, which checks each new key by its hash.
    private mutating func parseObject() throws(KeelError) -> JSON {
        try enter()
        position += 1  // {
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object([:])
        }
        // Room for a typical object's members at once (an object's row has about ten), rather
        // than growing keys and values one doubling at a time.
        var keys: ContiguousArray<String> = []
        var values: ContiguousArray<JSON> = []
        keys.reserveCapacity(Self.initialMembers)
        values.reserveCapacity(Self.initialMembers)
        var filter: UInt64 = 0
        // Set once a key is not plain ASCII (its filter bit is 0): every key is compared from then on.
        var comparesAll = false
        var large: OrderedDictionary<String, JSON>?
        while true {
            skipWhitespace()
            guard peek == UInt8(ascii: "\"") else { throw error("a string key in an object") }
            let keyOffset = position
            let (key, bit) = try readString()
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { throw error("':' after an object key") }
            position += 1
            skipWhitespace()
            let value = try parseValue()
            let duplicate: Bool
            if large != nil {
                duplicate = large?.updateValue(value, forKey: key) != nil
            } else {
                if bit != 0 && !comparesAll {
                    duplicate = filter & bit != 0 && keys.contains(key)
                    filter |= bit
                } else {
                    comparesAll = true
                    duplicate = keys.contains(key)
                }
                if !duplicate {
                    keys.append(key)
                    values.append(value)
                    if keys.count > Self.linearMembers {
                        large = OrderedDictionary(uncheckedUniqueKeys: keys, values: values)
                    }
                }
            }
            if duplicate {
                throw KeelError(
                    .parse, "invalid JSON at offset \(keyOffset): duplicate key \(JSON.string(key).serialized()) in an object",
                    details: ["offset": .int(Int64(keyOffset))])
            }
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                depth -= 1
                return .object(large ?? OrderedDictionary(uncheckedUniqueKeys: keys, values: values))
            default: throw error("',' or '}' in an object")
            }
        }
    }

    // MARK: Numbers

    private mutating func parseNumber() throws(KeelError) -> JSON {
        let start = position
        var negative = false
        if bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        guard let first = peek, isDigit(first) else { throw error("a digit") }
        // Accumulate negatively so Int64.min fits.
        var magnitude: Int64 = 0
        var fitsInt = true
        if first == UInt8(ascii: "0") {
            position += 1
            if let next = peek, isDigit(next) { throw error("'.', 'e' or the end of the number after a leading 0") }
        } else {
            while let d = peek, isDigit(d) {
                if fitsInt {
                    let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
                    let (m2, o2) = m1.subtractingReportingOverflow(Int64(d &- UInt8(ascii: "0")))
                    if o1 || o2 { fitsInt = false } else { magnitude = m2 }
                }
                position += 1
            }
        }
        var isInteger = true
        if peek == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard let d = peek, isDigit(d) else { throw error("a digit after '.'") }
            while let d = peek, isDigit(d) { position += 1 }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { position += 1 }
            guard let d = peek, isDigit(d) else { throw error("a digit in the exponent") }
            while let d = peek, isDigit(d) { position += 1 }
        }
        if isInteger && fitsInt {
            if negative { return .int(magnitude) }
            if magnitude != .min { return .int(-magnitude) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw KeelError(
                .parse, "invalid JSON at offset \(start): the number \(text.prefix(40)) is out of range",
                details: ["offset": .int(Int64(start))])
        }
        return .double(value)
    }

    private func isDigit(_ b: UInt8) -> Bool { b &- UInt8(ascii: "0") < 10 }

    // MARK: Strings

    /// Parses a string starting at its opening quote; leaves `position` after the closing quote.
    private mutating func parseString() throws(KeelError) -> String {
        try readString().string
    }

    /// A string, and its bit in an object's key filter (`parseObject`) when it was written as
    /// plain ASCII (no byte above 0x7F, no escape), from its length and last byte; 0 otherwise.
    private mutating func readString() throws(KeelError) -> (string: String, filterBit: UInt64) {
        position += 1  // "
        let start = position
        var ascii = true
        // Fast path: no escapes. Validate UTF-8 while scanning, then decode without checks.
        // Plain ASCII goes eight bytes at a time: every word in which no byte is '"', '\\', a
        // control character or above 0x7F is stepped over; the byte loop takes the rest.
        skipPlainASCIIWords()
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                let bit = ascii ? UInt64(1) << (UInt64(truncatingIfNeeded: (position - start) &* 7 &+ Int(position > start ? bytes[position - 1] : 0)) & 63) : 0
                position += 1
                return (s, bit)
            }
            if b == UInt8(ascii: "\\") { break }
            if b < 0x20 { throw error("a character or '\"' (control characters must be escaped in strings)") }
            if b < 0x80 {
                position += 1
            } else {
                ascii = false
                try skipMultibyte()
                skipPlainASCIIWords()
            }
        }
        guard position < bytes.count else { throw error("'\"' to close the string") }
        // Slow path: escapes; collect UTF-8 bytes.
        var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                position += 1
                return (String(decoding: out, as: UTF8.self), 0)
            }
            if b == UInt8(ascii: "\\") {
                try parseEscape(into: &out)
            } else if b < 0x20 {
                throw error("a character or '\"' (control characters must be escaped in strings)")
            } else if b < 0x80 {
                out.append(b)
                position += 1
            } else {
                let s = position
                try skipMultibyte()
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[s..<position]))
            }
        }
        throw error("'\"' to close the string")
    }

    /// Steps over plain string content eight bytes at a time: printable ASCII other than '"'
    /// and '\\'. Stops at the first byte that is not (a quote, a backslash, a control character,
    /// a byte above 0x7F), or fewer than eight bytes before the end (the byte loop takes the
    /// rest). `x - 0x01…01 & ~x & 0x80…80` sets the high bit of every zero byte of `x` (a borrow
    /// can set it in bytes above a zero byte too, never below the first), and `x - 0x20…20 & ~x`
    /// likewise for bytes below 0x20: so the lowest byte flagged in a word is the first one that
    /// needs the byte loop, and a word with none flagged has none.
    @inline(__always)
    private mutating func skipPlainASCIIWords() {
        guard let base = bytes.baseAddress else { return }
        let ones: UInt64 = 0x0101_0101_0101_0101
        while bytes.count - position >= 8 {
            // The first byte in memory as the word's lowest, whatever the host's byte order.
            let word = UInt64(littleEndian: UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let flagged =
                (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word) | word)
                & (ones &* 0x80)
            if flagged != 0 {
                position += flagged.trailingZeroBitCount >> 3
                return
            }
            position += 8
        }
    }

    private mutating func parseEscape(into out: inout [UInt8]) throws(KeelError) {
        position += 1  // backslash
        guard let e = peek else { throw error("an escape character after '\\'") }
        position += 1
        switch e {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            let escapeStart = position - 2
            var scalar = UInt32(try hex4())
            if scalar >= 0xD800 && scalar < 0xDC00 {
                guard remaining >= 2, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                else { throw error("a low surrogate '\\uDC00'…'\\uDFFF' after the high surrogate at offset \(escapeStart)") }
                position += 2
                let low = UInt32(try hex4())
                guard low >= 0xDC00 && low < 0xE000 else {
                    position -= 6
                    throw error("a low surrogate '\\uDC00'…'\\uDFFF' after the high surrogate at offset \(escapeStart)")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00 && scalar < 0xE000 {
                position = escapeStart
                throw error("a character, not a lone low surrogate escape")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("a valid Unicode scalar") }
            appendUTF8(unicode.value, to: &out)
        default:
            position -= 1
            throw error("one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u after '\\'")
        }
    }

    private mutating func hex4() throws(KeelError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let b = peek else { throw error("four hexadecimal digits after '\\u'") }
            let digit: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: throw error("four hexadecimal digits after '\\u'")
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    /// Checks one multi-byte UTF-8 sequence at `position` (well-formed per Unicode table 3-7) and
    /// steps over it.
    private mutating func skipMultibyte() throws(KeelError) {
        let b0 = bytes[position]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: throw error("valid UTF-8")
        }
        guard remaining >= length else { throw error("valid UTF-8") }
        let b1 = bytes[position + 1]
        guard b1 >= lower && b1 <= upper else { throw error("valid UTF-8") }
        for i in 2..<max(length, 2) where bytes[position + i] & 0xC0 != 0x80 {
            throw error("valid UTF-8")
        }
        position += length
    }

    // MARK: Helpers

    private func appendUTF8(_ v: UInt32, to out: inout [UInt8]) {
        switch v {
        case ..<0x80: out.append(UInt8(v))
        case ..<0x800:
            out.append(UInt8(0xC0 | v >> 6))
            out.append(UInt8(0x80 | v & 0x3F))
        case ..<0x10000:
            out.append(UInt8(0xE0 | v >> 12))
            out.append(UInt8(0x80 | v >> 6 & 0x3F))
            out.append(UInt8(0x80 | v & 0x3F))
        default:
            out.append(UInt8(0xF0 | v >> 18))
            out.append(UInt8(0x80 | v >> 12 & 0x3F))
            out.append(UInt8(0x80 | v >> 6 & 0x3F))
            out.append(UInt8(0x80 | v & 0x3F))
        }
    }

    private var peek: UInt8? { position < bytes.count ? bytes[position] : nil }
    private var remaining: Int { bytes.count - position }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// "invalid JSON at offset N: expected X, found Y".
    private func error(_ expected: String) -> KeelError {
        let found: String
        if position >= bytes.count {
            found = "the end of the text"
        } else {
            let b = bytes[position]
            if b >= 0x21 && b < 0x7F {
                found = "'\(Character(Unicode.Scalar(b)))'"
            } else {
                found = "byte 0x" + (b < 16 ? "0" : "") + String(b, radix: 16, uppercase: true)
            }
        }
        return KeelError(
            .parse, "invalid JSON at offset \(position): expected \(expected), found \(found)",
            details: ["offset": .int(Int64(position))])
    }
}

