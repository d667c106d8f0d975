// Writing JSON: compact (one line, as the protocol needs), object keys in their stored order,
// strings escaped per RFC 8259 (control characters as \u00XX, `/` left alone), integers exact,
// doubles in the shortest form that reads back the same. Into a `String` or into UTF-8 bytes
// (`JSONTextOutput`), by one writer specialised for each. Non-finite doubles have no JSON form;
// the value codec writes them as the strings "NaN", "Infinity", "-Infinity" before they get here,
// and the writer does the same as a last resort rather than produce invalid JSON.

/// Where JSON text is written: a `String`, or UTF-8 bytes (a protocol line about to be sent,
/// written without the cost of growing a `String` piece by piece).
public protocol JSONTextOutput {
    /// Appends text that is already JSON (the writer escapes strings before they get here).
    mutating func appendText(_ text: String)
    mutating func appendText(_ text: Substring)
    /// Appends one ASCII character (below 0x80): the writer's punctuation, without the cost of
    /// appending a one-character text.
    mutating func appendASCII(_ byte: UInt8)
    /// Appends an integer's decimal digits (with its minus sign).
    mutating func appendInteger(_ value: Int64)
    mutating func appendInteger(_ value: UInt64)
    /// Appends the compact text of `json` (the writer, specialised for this output).
    mutating func append(json: JSON)
}

extension String: JSONTextOutput {
    public mutating func appendText(_ text: String) { self += text }
    public mutating func appendText(_ text: Substring) { self += text }
    public mutating func appendASCII(_ byte: UInt8) { unicodeScalars.append(Unicode.Scalar(byte)) }
    public mutating func appendInteger(_ value: Int64) { self += String(value) }
    public mutating func appendInteger(_ value: UInt64) { self += String(value) }
    public mutating func append(json: JSON) { json.write(to: &self) }
}

extension Array: JSONTextOutput where Element == UInt8 {
    // Through the text's contiguous UTF-8 (a copy of bytes), not its UTF-8 view as a sequence:
    // most pieces are a few bytes long, and the sequence path's per-call cost was the larger part
    // of encoding a request line (Docs/Performance.md, client round 5).
    public mutating func appendText(_ text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }
    public mutating func appendText(_ text: Substring) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }
    public mutating func appendASCII(_ byte: UInt8) { append(byte) }
    public mutating func appendInteger(_ value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude)
    }
    public mutating func appendInteger(_ value: UInt64) { appendDigits(value) }
    public mutating func append(json: JSON) { json.write(to: &self) }

    /// The digits of `value`, written in place (no `String` made for them).
    private mutating func appendDigits(_ value: UInt64) {
        var count = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        let start = self.count
        append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count))
        withUnsafeMutableBufferPointer { bytes in
            var rest = value
            var i = start + count
            repeat {
                i -= 1
                bytes[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
        }
    }
}

extension JSON {
    /// The compact one-line text of this value.
    public func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    /// Appends the compact text of this value to `out`.
    public func write(to out: inout String) {
        writeText(to: &out)
    }

    /// Appends the compact text of this value to `out`, as UTF-8 bytes.
    public func write(to out: inout [UInt8]) {
        writeText(to: &out)
    }

    /// The writer, for either output (specialised for each in this module).
    func writeText<Output: JSONTextOutput>(to out: inout Output) {
        switch self {
        case .null: out.appendText("null")
        case .bool(let b): out.appendText(b ? "true" : "false")
        case .int(let i): out.appendInteger(i)
        case .double(let d): JSON.writeDouble(d, to: &out)
        case .string(let s): JSON.writeString(s, to: &out)
        case .array(let items):
            out.appendASCII(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.appendASCII(UInt8(ascii: ",")) }
                item.writeText(to: &out)
            }
            out.appendASCII(UInt8(ascii: "]"))
        case .object(let members):
            out.appendASCII(UInt8(ascii: "{"))
            var first = true
            for (key, value) in members {
                if !first { out.appendASCII(UInt8(ascii: ",")) }
                first = false
                JSON.writeString(key, to: &out)
                out.appendASCII(UInt8(ascii: ":"))
                value.writeText(to: &out)
            }
            out.appendASCII(UInt8(ascii: "}"))
        }
    }

    static func writeDouble<Output: JSONTextOutput>(_ d: Double, to out: inout Output) {
        if d.isNaN {
            out.appendText("\"NaN\"")
        } else if d.isInfinite {
            out.appendText(d > 0 ? "\"Infinity\"" : "\"-Infinity\"")
        } else if d == d.rounded(), abs(d) < 1e15, !(d == 0 && d.sign == .minus) {
            // An integral double keeps a fraction so it reads back as a double ("2.0").
            out.appendInteger(Int64(d))
            out.appendText(".0")
        } else {
            out.appendText("\(d)")
        }
    }

    static func writeString<Output: JSONTextOutput>(_ s: String, to out: inout Output) {
        out.appendASCII(UInt8(ascii: "\""))
        // The usual case, a string with nothing to escape, is checked over its bytes at once and
        // appended whole (walking the UTF-8 view index by index costs more than the append).
        let plain = s.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }
        if plain == true {
            out.appendText(s)
            out.appendASCII(UInt8(ascii: "\""))
            return
        }
        var plainStart = s.utf8.startIndex
        let utf8 = s.utf8
        var i = utf8.startIndex
        while i != utf8.endIndex {
            let byte = utf8[i]
            let escape: String?
            switch byte {
            case UInt8(ascii: "\""): escape = "\\\""
            case UInt8(ascii: "\\"): escape = "\\\\"
            case 0x0A: escape = "\\n"
            case 0x0D: escape = "\\r"
            case 0x09: escape = "\\t"
            case 0x08: escape = "\\b"
            case 0x0C: escape = "\\f"
            case 0x00..<0x20:
                let hex = String(byte, radix: 16)
                escape = "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escape = nil
            }
            if let escape {
                out.appendText(s[plainStart..<i])
                out.appendText(escape)
                plainStart = utf8.index(after: i)
            }
            i = utf8.index(after: i)
        }
        out.appendText(s[plainStart..<s.endIndex])
        out.appendASCII(UInt8(ascii: "\""))
    }
}
