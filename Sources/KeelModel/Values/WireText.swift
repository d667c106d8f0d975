// The string forms of the wire encoding other than dates (spec/model.md, "Wire encoding"), each
// with a strict reader and one canonical writer:
//
// | type | read | written |
// | --- | --- | --- |
// | decimal | `-?(0|[1-9][0-9]*)(\.[0-9]+)?`: no `+`, no exponent, no leading zeros, no spaces; at most 38 significant digits (Foundation `Decimal`'s exact range) | shortest value form (`"1234.50"` → `"1234.5"`) |
// | uuid | 8-4-4-4-12 hexadecimal digits, either case | lowercase (RFC 9562 §4) |
// | uri | an absolute URI: `scheme:` (RFC 3986 scheme) then no whitespace or control characters | as given |
// | binary | RFC 4648 base64 with padding, no line breaks | base64 with padding |
//
// Decimals are refused rather than rounded when they would lose digits: the whole point of the
// type is that no precision is lost.

public import Foundation

public enum WireText {
    /// Why a decimal text was refused, or the decimal.
    public static func decimal(_ text: String) -> Result<Decimal, DecimalProblem> {
        let utf8 = Array(text.utf8)
        var i = 0
        if i < utf8.count, utf8[i] == UInt8(ascii: "-") { i += 1 }
        let intStart = i
        while i < utf8.count, utf8[i] &- UInt8(ascii: "0") < 10 { i += 1 }
        let intDigits = utf8[intStart..<i]
        guard !intDigits.isEmpty else { return .failure(.malformed) }
        if intDigits.count > 1, intDigits.first == UInt8(ascii: "0") { return .failure(.malformed) }
        var fracDigits = utf8[i..<i]
        if i < utf8.count, utf8[i] == UInt8(ascii: ".") {
            i += 1
            let fracStart = i
            while i < utf8.count, utf8[i] &- UInt8(ascii: "0") < 10 { i += 1 }
            fracDigits = utf8[fracStart..<i]
            guard !fracDigits.isEmpty else { return .failure(.malformed) }
        }
        guard i == utf8.count else { return .failure(.malformed) }
        // Significant digits: all digits without leading and trailing zeros.
        let all = Array(intDigits) + Array(fracDigits)
        guard let firstNonZero = all.firstIndex(where: { $0 != UInt8(ascii: "0") }),
            let lastNonZero = all.lastIndex(where: { $0 != UInt8(ascii: "0") })
        else { return .success(Decimal(0)) }
        let significant = lastNonZero - firstNonZero + 1
        guard significant <= 38 else { return .failure(.tooPrecise(significant)) }
        // Exponent of the last significant digit: Decimal holds -128…127.
        let exponent = intDigits.count - 1 - lastNonZero
        guard exponent >= -128, exponent <= 127 else { return .failure(.outOfRange) }
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            return .failure(.malformed)
        }
        return .success(value)
    }

    public enum DecimalProblem: Error, Equatable, Sendable {
        case malformed
        case tooPrecise(Int)
        case outOfRange
    }

    /// The canonical text of a decimal: digits, an optional `-` and `.`, no exponent.
    public static func text(of decimal: Decimal) -> String {
        decimal.description
    }

    /// A UUID from its 8-4-4-4-12 text, either case.
    public static func uuid(_ text: String) -> UUID? {
        var text = text
        // A native string's bytes are contiguous (`makeContiguousUTF8` copies only a bridged one):
        // read in place, into the UUID's own bytes, with nothing allocated (every wire INSERT of
        // a uuid attribute comes here).
        text.makeContiguousUTF8()
        return text.utf8.withContiguousStorageIfAvailable { bytes in uuid(bytes) } ?? nil
    }

    /// `uuid(_:)` of the text's UTF-8 bytes.
    static func uuid(_ utf8: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard utf8.count == 36 else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let complete = withUnsafeMutableBytes(of: &value) { out -> Bool in
            var n = 0
            var position = 0
            while position < 36 {
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard utf8[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                    continue
                }
                guard let high = hexValue(utf8[position]), let low = hexValue(utf8[position + 1]) else { return false }
                out[n] = high << 4 | low
                n += 1
                position += 2
            }
            return true
        }
        return complete ? UUID(uuid: value) : nil
    }

    /// The canonical (lowercase) text of a UUID.
    public static func text(of uuid: UUID) -> String {
        uuid.uuidString.lowercased()
    }

    /// True when `text` is an absolute URI: a scheme (`[A-Za-z][A-Za-z0-9+.-]*`), `:`, and no
    /// whitespace or control characters anywhere.
    public static func isURI(_ text: String) -> Bool {
        var sawColon = false
        for (i, c) in text.utf8.enumerated() {
            if c <= 0x20 || c == 0x7F { return false }
            if sawColon { continue }
            if c == UInt8(ascii: ":") {
                guard i > 0 else { return false }
                sawColon = true
            } else if !(isLetter(c) || (i > 0 && (c &- UInt8(ascii: "0") < 10 || c == 0x2B || c == 0x2D || c == 0x2E))) {
                return false
            }
        }
        return sawColon
    }

    /// Bytes from standard base64 with padding; nil when malformed.
    public static func binary(_ text: String) -> [UInt8]? {
        Data(base64Encoded: text).map { [UInt8]($0) }
    }

    /// Standard base64 with padding.
    public static func text(of bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    private static func isLetter(_ c: UInt8) -> Bool { (c | 0x20) &- UInt8(ascii: "a") < 26 }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
