// Dates on the wire (spec/model.md, "Wire encoding"): RFC 3339 / ISO 8601 in UTC with
// milliseconds, `2026-11-21T09:30:00.000Z`, stored as Int64 milliseconds since the Unix epoch.
// Hand-written, no DateFormatter: it runs for every date in every protocol line, and formatter
// behaviour varies with locale and platform.
//
// Read: `YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|±HH:MM)`; `T`/`Z` in either case; years 0000–9999; the
// day must exist in its month (leap years per the Gregorian rules, proleptic before 1582); no
// leap second (`:60`); more than three fraction digits are truncated toward the earlier
// millisecond; an offset is applied to get UTC.
// Written: always the canonical `YYYY-MM-DDTHH:MM:SS.mmmZ`. A stored instant outside years
// 0000–9999 (only possible from Swift code, never from the wire) is written in ISO 8601's
// expanded form with a sign and six year digits (`+010000-01-01T00:00:00.000Z`).

public enum WireDate {
    /// Milliseconds since 1970-01-01T00:00:00Z, or nil when `text` is not an RFC 3339 date-time.
    public static func parse(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard b.count >= 20 else { return nil }
        func digits(_ at: Int, _ count: Int) -> Int? {
            var v = 0
            for i in at..<at + count {
                let d = b[i] &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                v = v * 10 + Int(d)
            }
            return v
        }
        guard let year = digits(0, 4), b[4] == UInt8(ascii: "-"), let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
            let day = digits(8, 2), b[10] | 0x20 == UInt8(ascii: "t"), let hour = digits(11, 2),
            b[13] == UInt8(ascii: ":"), let minute = digits(14, 2), b[16] == UInt8(ascii: ":"),
            let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60,
            second < 60
        else { return nil }
        var i = 19
        var millis = 0
        if b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < b.count, b[i] &- UInt8(ascii: "0") < 10 {
                if i - start < 3 { millis = millis * 10 + Int(b[i] - UInt8(ascii: "0")) }
                i += 1
            }
            let count = i - start
            guard count >= 1, count <= 9 else { return nil }
            if count < 3 { for _ in count..<3 { millis *= 10 } }
        }
        guard i < b.count else { return nil }
        var offsetMinutes = 0
        if b[i] | 0x20 == UInt8(ascii: "z") {
            i += 1
        } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            guard b.count - i == 6, let oh = digits(i + 1, 2), b[i + 3] == UInt8(ascii: ":"), let om = digits(i + 4, 2),
                oh < 24, om < 60
            else { return nil }
            offsetMinutes = (oh * 60 + om) * (b[i] == UInt8(ascii: "-") ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = Int64(daysFromCivil(year: year, month: month, day: day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second - offsetMinutes * 60)
        return seconds * 1000 + Int64(millis)
    }

    /// The canonical text of an instant: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public static func format(_ milliseconds: Int64) -> String {
        // Floor division so instants before 1970 land in the right second.
        let (msDays, msRest) = floorDivide(milliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: msDays)
        let h = Int(msRest / 3_600_000)
        let m = Int(msRest / 60_000 % 60)
        let s = Int(msRest / 1000 % 60)
        let ms = Int(msRest % 1000)
        var out = ""
        out.reserveCapacity(24)
        if (0...9999).contains(year) {
            pad(Int(year), 4, &out)
        } else {
            out += year < 0 ? "-" : "+"
            pad(Int(year.magnitude), 6, &out)
        }
        out += "-"
        pad(month, 2, &out)
        out += "-"
        pad(day, 2, &out)
        out += "T"
        pad(h, 2, &out)
        out += ":"
        pad(m, 2, &out)
        out += ":"
        pad(s, 2, &out)
        out += "."
        pad(ms, 3, &out)
        out += "Z"
        return out
    }

    private static func pad(_ v: Int, _ width: Int, _ out: inout String) {
        let text = String(v)
        if text.count < width { out += String(repeating: "0", count: width - text.count) }
        out += text
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a / b
        let r = a % b
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (`civil_from_days`).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = Int(doy - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
