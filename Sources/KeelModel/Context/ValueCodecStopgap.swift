// STOPGAP until the model branch's `ValueCodec` (Values/ValueCodec.swift) reaches main: the wire
// encoding of spec/model.md, with the signatures contexts call. Delete this file when main has
// the real one (the duplicate type will not compile, which is the reminder).

import Foundation

enum ValueCodec {
    /// Decodes a wire value of `type`; `owner` (`Employee.age`) names it in errors (`TYPE`).
    static func decode(_ json: JSON, as type: AttributeType, owner: String) throws(KeelError) -> Value {
        func refuse(_ why: String) -> KeelError {
            KeelError(.type, "\(owner) is \(type.rawValue): \(why)", details: ["property": .string(owner)])
        }
        if json.isNull { return .null }
        switch type {
        case .int16, .int32, .int64:
            guard case .int(let i) = json else {
                if case .double(let d) = json, let i = JSON.double(d).intValue {
                    return try decode(.int(i), as: type, owner: owner)
                }
                throw refuse("expected an integer, found \(json.kindName)")
            }
            let range: ClosedRange<Int64> =
                switch type {
                case .int16: Int64(Int16.min)...Int64(Int16.max)
                case .int32: Int64(Int32.min)...Int64(Int32.max)
                default: Int64.min...Int64.max
                }
            guard range.contains(i) else {
                throw refuse("\(i) is out of range (\(range.lowerBound)…\(range.upperBound))")
            }
            return .int(i)
        case .double, .float:
            let d: Double
            switch json {
            case .int(let i): d = Double(i)
            case .double(let x): d = x
            case .string("NaN"): d = .nan
            case .string("Infinity"): d = .infinity
            case .string("-Infinity"): d = -.infinity
            default: throw refuse("expected a number, found \(json.kindName)")
            }
            if type == .float, d.isFinite, abs(d) > Double(Float.greatestFiniteMagnitude) {
                throw refuse("\(d) is out of range for a float")
            }
            return .double(d)
        case .decimal:
            switch json {
            case .int(let i): return .decimal(Decimal(i))
            case .string(let s):
                guard isDecimalText(s), let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else {
                    throw refuse("\"\(s)\" is not a decimal number (base-10 digits like \"1234.50\")")
                }
                return .decimal(d)
            default: throw refuse("expected a decimal string, found \(json.kindName)")
            }
        case .string:
            guard case .string(let s) = json else { throw refuse("expected a string, found \(json.kindName)") }
            return .string(s)
        case .bool:
            guard case .bool(let b) = json else { throw refuse("expected true or false, found \(json.kindName)") }
            return .bool(b)
        case .date:
            guard case .string(let s) = json else { throw refuse("expected an RFC 3339 date string, found \(json.kindName)") }
            guard let ms = parseDate(s) else {
                throw refuse("\"\(s)\" is not an RFC 3339 date (like \"2026-11-21T09:30:00.000Z\")")
            }
            return .date(ms)
        case .binary:
            guard case .string(let s) = json else { throw refuse("expected a base64 string, found \(json.kindName)") }
            guard let data = Data(base64Encoded: s) else { throw refuse("the string is not valid base64") }
            return .binary([UInt8](data))
        case .uuid:
            guard case .string(let s) = json else { throw refuse("expected a UUID string, found \(json.kindName)") }
            guard s.utf8.count == 36, let u = UUID(uuidString: s) else {
                throw refuse("\"\(s)\" is not a UUID (8-4-4-4-12 hexadecimal digits)")
            }
            return .uuid(u)
        case .uri:
            guard case .string(let s) = json else { throw refuse("expected a URI string, found \(json.kindName)") }
            return .uri(s)
        case .json:
            return .json(json)
        }
    }

    /// The wire form of a value of `type`.
    static func encode(_ value: Value, as type: AttributeType) -> JSON {
        switch value {
        case .null: .null
        case .int(let i): .int(i)
        case .double(let d):
            d.isNaN ? "NaN" : d == .infinity ? "Infinity" : d == -.infinity ? "-Infinity" : .double(d)
        case .decimal(let d): .string(d.description)
        case .string(let s), .uri(let s): .string(s)
        case .bool(let b): .bool(b)
        case .date(let ms): .string(formatDate(ms))
        case .binary(let bytes): .string(Data(bytes).base64EncodedString())
        case .uuid(let u): .string(u.uuidString.lowercased())
        case .json(let j): j
        case .object, .objects: .null
        }
    }

    private static func isDecimalText(_ s: String) -> Bool {
        var bytes = Substring(s).utf8[...]
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty else { return false }
        return parts.allSatisfy { part in !part.isEmpty && part.allSatisfy { (48...57).contains($0) } }
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fff]` then `Z` or `±HH:MM`, to milliseconds since 1970 UTC.
    static func parseDate(_ s: String) -> Int64? {
        let b = Array(s.utf8)
        func num(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= b.count else { return nil }
            var v = 0
            for i in at..<(at + n) {
                guard (48...57).contains(b[i]) else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, let year = num(0, 4), b[4] == 45, let month = num(5, 2), b[7] == 45, let day = num(8, 2),
            b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"), let hour = num(11, 2), b[13] == 58,
            let minute = num(14, 2), b[16] == 58, let second = num(17, 2)
        else { return nil }
        var i = 19
        var ms = 0
        if b[i] == UInt8(ascii: ".") {
            i += 1
            var digits = 0
            while i < b.count, (48...57).contains(b[i]) {
                if digits < 3 { ms = ms * 10 + Int(b[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            if digits < 3 { for _ in digits..<3 { ms *= 10 } }
        }
        var offset = 0
        guard i < b.count else { return nil }
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            guard let oh = num(i + 1, 2), i + 3 < b.count, b[i + 3] == 58, let om = num(i + 4, 2), oh < 24, om < 60 else {
                return nil
            }
            offset = (oh * 60 + om) * (b[i] == UInt8(ascii: "+") ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count, (1...12).contains(month), hour < 24, minute < 60, second < 61 else { return nil }
        let monthDays = [31, (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...monthDays[month - 1]).contains(day) else { return nil }
        let days = daysFromCivil(year, month, day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset * 60)
        return seconds * 1000 + Int64(ms)
    }

    static func formatDate(_ ms: Int64) -> String {
        let (secs, milli) = ms.quotientAndRemainder(dividingBy: 1000)
        let totalSeconds = milli < 0 ? secs - 1 : secs
        let millis = milli < 0 ? milli + 1000 : milli
        var days = totalSeconds / 86_400
        var rest = totalSeconds % 86_400
        if rest < 0 {
            rest += 86_400
            days -= 1
        }
        let (y, m, d) = civilFromDays(Int(days))
        func pad(_ v: Int, _ n: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(Int(rest / 3600), 2)):\(pad(Int(rest % 3600 / 60), 2)):"
            + "\(pad(Int(rest % 60), 2)).\(pad(Int(millis), 3))Z"
    }

    // Howard Hinnant's civil-calendar algorithms.
    private static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
