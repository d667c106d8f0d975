// Swift source text for values: string literals, the literal of a model default in its
// attribute's Swift type (`0`, `"Kim"`, `Decimal(sign: .plus, exponent: -2, significand: 520050)`,
// `Date(keelMilliseconds: …)`, `UUID(uuid: (…))`), and wire JSON as a `JSON` literal. Every
// literal is exact: reading it back gives the model's value.

import Foundation
import KeelModel

enum SwiftLiterals {
    /// A string literal.
    static func string(_ text: String) -> String {
        TextQuoting.quoted(text) { "\\u{\(String($0, radix: 16))}" }
    }

    /// The Swift expression of a default value of `type` (nil for a value this cannot write,
    /// which the generator reports).
    static func value(_ value: Value, as type: AttributeType) -> String? {
        switch (type, value) {
        case (_, .null): "nil"
        case (.int16, .int(let i)), (.int32, .int(let i)), (.int64, .int(let i)): "\(i)"
        case (.double, .double(let d)): double(d)
        case (.float, .double(let d)): float(Float(d))
        case (.decimal, .decimal(let d)): decimal(d)
        case (.string, .string(let s)): string(s)
        case (.bool, .bool(let b)): b ? "true" : "false"
        case (.date, .date(let ms)): "Date(keelMilliseconds: \(ms))"
        case (.binary, .binary(let bytes)): "Data([\(bytes.map { "0x" + hex($0) }.joined(separator: ", "))])"
        case (.uuid, .uuid(let u)): uuid(u)
        case (.uri, .uri(let text)): "KeelDefault.url(\(string(text)))"
        case (.json, .json(let j)): json(j)
        default: nil
        }
    }

    static func double(_ d: Double) -> String {
        if d.isNaN { return ".nan" }
        if d.isInfinite { return d > 0 ? ".infinity" : "-.infinity" }
        return "\(d)"
    }

    static func float(_ f: Float) -> String {
        if f.isNaN { return ".nan" }
        if f.isInfinite { return f > 0 ? ".infinity" : "-.infinity" }
        return "\(f)"
    }

    /// `Decimal(sign:exponent:significand:)` with an integer significand (split in two for more
    /// than 18 digits), so no text is parsed at run time.
    static func decimal(_ d: Decimal) -> String {
        let digits = d.significand.description
        let significand: String
        if digits.count <= 18 {
            significand = digits
        } else {
            let split = digits.index(digits.endIndex, offsetBy: -18)
            significand = "Decimal(\(digits[..<split])) * 1_000_000_000_000_000_000 + Decimal(\(digits[split...]))"
        }
        return "Decimal(sign: .\(d.sign == .minus ? "minus" : "plus"), exponent: \(d.exponent), significand: \(significand))"
    }

    static func uuid(_ u: UUID) -> String {
        let b = u.uuid
        let bytes = [b.0, b.1, b.2, b.3, b.4, b.5, b.6, b.7, b.8, b.9, b.10, b.11, b.12, b.13, b.14, b.15]
        return "UUID(uuid: (\(bytes.map { "0x" + hex($0) }.joined(separator: ", "))))"
    }

    /// Wire JSON as a `JSON` literal (in a context that expects `JSON` or `JSON?`).
    static func json(_ j: JSON) -> String {
        switch j {
        case .null: "nil"
        case .bool(let b): b ? "true" : "false"
        case .int(let i): "\(i)"
        case .double(let d): d.isFinite ? "\(d)" : "JSON.double(\(double(d)))"
        case .string(let s): string(s)
        case .array(let items): "[" + items.map(json).joined(separator: ", ") + "]"
        case .object(let members):
            members.isEmpty ? "[:]" : "[" + members.map { "\(string($0.key)): \(json($0.value))" }.joined(separator: ", ") + "]"
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        (byte < 16 ? "0" : "") + String(byte, radix: 16)
    }
}
