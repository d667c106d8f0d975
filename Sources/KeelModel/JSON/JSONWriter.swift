// Writing JSON: compact (one line, as the protocol needs), object keys in their stored order,
// strings escaped per RFC 8259 (control characters as \u00XX, `/` left alone), integers exact,
// doubles in the shortest form that reads back the same. Non-finite doubles have no JSON form;
// the value codec writes them as the strings "NaN", "Infinity", "-Infinity" before they get here,
// and the writer does the same as a last resort rather than produce invalid JSON.

extension JSON {
    /// The compact one-line text of this value.
    public func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    /// Appends the compact text of this value to `out`.
    public func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d): JSON.writeDouble(d, to: &out)
        case .string(let s): JSON.writeString(s, to: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            var first = true
            for (key, value) in members {
                if !first { out += "," }
                first = false
                JSON.writeString(key, to: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    static func writeDouble(_ d: Double, to out: inout String) {
        if d.isNaN {
            out += "\"NaN\""
        } else if d.isInfinite {
            out += d > 0 ? "\"Infinity\"" : "\"-Infinity\""
        } else if d == d.rounded(), abs(d) < 1e15, !(d == 0 && d.sign == .minus) {
            // An integral double keeps a fraction so it reads back as a double ("2.0").
            out += String(Int64(d)) + ".0"
        } else {
            out += "\(d)"
        }
    }

    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        // The usual case, a string with nothing to escape, is checked over its bytes at once and
        // appended whole (walking the UTF-8 view index by index costs more than the append).
        let plain = s.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }
        if plain == true {
            out += s
            out += "\""
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
                out += s[plainStart..<i]
                out += escape
                plainStart = utf8.index(after: i)
            }
            i = utf8.index(after: i)
        }
        out += s[plainStart..<s.endIndex]
        out += "\""
    }
}
