import Foundation
import Testing

@testable import KeelModel

@Suite("Value codec (wire encoding)")
struct ValueCodecTests {
    private func decode(_ json: JSON, _ type: AttributeType) throws(KeelError) -> Value {
        try ValueCodec.decode(json, as: type, owner: "Employee.x")
    }

    @Test(
        "canonical values round-trip: decode then encode gives the same JSON",
        arguments: [
            (AttributeType.int16, JSON.int(-32768)), (.int16, .int(32767)), (.int32, .int(-2_147_483_648)), (.int32, .int(2_147_483_647)),
            (.int64, .int(.min)), (.int64, .int(.max)), (.double, .double(0.1)), (.double, .double(-1e300)), (.double, "NaN"),
            (.double, "Infinity"), (.double, "-Infinity"), (.float, .double(0.1)), (.float, .double(3.4028235e38)),
            (.float, "-Infinity"), (.decimal, "1234.5"), (.decimal, "-0.000001"), (.decimal, "99999999999999999999999999999999999999"),
            (.decimal, "0"), (.string, "한국어 é 😀"), (.string, ""), (.bool, true), (.bool, false),
            (.date, "2026-11-21T09:30:00.000Z"), (.date, "1969-12-31T23:59:59.999Z"), (.date, "0000-01-01T00:00:00.000Z"),
            (.date, "9999-12-31T23:59:59.999Z"), (.date, "2024-02-29T12:00:00.000Z"), (.binary, "AAEC/w=="), (.binary, ""),
            (.uuid, "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"), (.uri, "https://example.com/a?b=c#d"), (.uri, "urn:isbn:0451450523"),
            (.json, JSON.object(["a": JSON.array([1, nil, "x"])])), (.json, 3), (.string, nil), (.date, nil),
        ])
    func roundTrip(_ type: AttributeType, _ json: JSON) throws {
        let value = try decode(json, type)
        #expect(ValueCodec.encode(value, as: type) == json)
    }

    @Test(
        "accepted spellings are written in the canonical form",
        arguments: [
            (AttributeType.int16, JSON.double(3.0), JSON.int(3)), (.int64, .double(1e3), .int(1000)), (.double, .int(2), .double(2)),
            (.decimal, "1234.50", "1234.5"), (.decimal, 7, "7"), (.decimal, "-0", "0"),
            (.date, "2026-11-21T09:30:00Z", "2026-11-21T09:30:00.000Z"), (.date, "2026-11-21t09:30:00.5z", "2026-11-21T09:30:00.500Z"),
            (.date, "2026-11-21T18:30:00.123456+09:00", "2026-11-21T09:30:00.123Z"), (.date, "2026-01-01T00:30:00-01:00", "2026-01-01T01:30:00.000Z"),
            (.uuid, "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"),
        ])
    func canonicalSpelling(_ type: AttributeType, _ input: JSON, _ written: JSON) throws {
        #expect(ValueCodec.encode(try decode(input, type), as: type) == written)
    }

    @Test(
        "a value that does not fit is refused with TYPE and a specific sentence",
        arguments: [
            (AttributeType.int16, JSON.int(70000), "Employee.x is int16: 70000 is out of range -32768…32767"),
            (.int16, .int(-32769), "Employee.x is int16: -32769 is out of range -32768…32767"),
            (.int32, .int(2_147_483_648), "Employee.x is int32: 2147483648 is out of range -2147483648…2147483647"),
            (.int64, .double(9.3e18), "Employee.x is int64: 9.3e+18 is out of range -9223372036854775808…9223372036854775807"),
            (.int16, .double(1.5), "Employee.x is int16: 1.5 is not an integer"),
            (.int16, "12", #"Employee.x is int16: expected an integer, found a string "12""#),
            (.int32, true, "Employee.x is int32: expected an integer, found a boolean true"),
            (.double, "nan", #"Employee.x is double: expected a number or "NaN", "Infinity", "-Infinity", found a string "nan""#),
            (.float, .double(1e39), "Employee.x is float: 1e+39 is out of range for a float (±3.4028235e+38)"),
            (.decimal, "1e5", #"Employee.x is decimal: "1e5" is not a decimal number (digits with an optional '-' and '.', like "1234.50")"#),
            (.decimal, "+1", #"Employee.x is decimal: "+1" is not a decimal number (digits with an optional '-' and '.', like "1234.50")"#),
            (.decimal, "007", #"Employee.x is decimal: "007" is not a decimal number (digits with an optional '-' and '.', like "1234.50")"#),
            (.decimal, "1.", #"Employee.x is decimal: "1." is not a decimal number (digits with an optional '-' and '.', like "1234.50")"#),
            (.decimal, ".5", #"Employee.x is decimal: ".5" is not a decimal number (digits with an optional '-' and '.', like "1234.50")"#),
            (.decimal, " 1", #"Employee.x is decimal: " 1" is not a decimal number (digits with an optional '-' and '.', like "1234.50")"#),
            (.decimal, "", #"Employee.x is decimal: "" is not a decimal number (digits with an optional '-' and '.', like "1234.50")"#),
            (.decimal, "NaN", #"Employee.x is decimal: "NaN" is not a decimal number (digits with an optional '-' and '.', like "1234.50")"#),
            (.decimal, "1234567890123456789012345678901234567.89", #"Employee.x is decimal: "1234567890123456789012345678901234567.89" has 39 significant digits; at most 38 are kept exactly"#),
            (.decimal, .double(12.5), #"Employee.x is decimal: 12.5 is a JSON number with a fraction; write decimals as strings ("1234.50") so no precision is lost"#),
            (.bool, 1, "Employee.x is bool: expected true or false, found a number 1"),
            (.bool, "true", #"Employee.x is bool: expected true or false, found a string "true""#),
            (.string, 5, "Employee.x is string: expected a string, found a number 5"),
            (.date, "2026-02-29T00:00:00Z", #"Employee.x is date: "2026-02-29T00:00:00Z" is not an RFC 3339 date-time like "2026-11-21T09:30:00.000Z""#),
            (.binary, "not base64!", #"Employee.x is binary: "not base64!" is not valid base64"#),
            (.uuid, "e621e1f8c36c495a93fc0c247a3e6e5f", #"Employee.x is uuid: "e621e1f8c36c495a93fc0c247a3e6e5f" is not a UUID like "e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#),
            (.uri, "not a uri", #"Employee.x is uri: "not a uri" is not an absolute URI (a scheme like "https:" and no spaces)"#),
            (.json, .null, ""),
        ])
    func refused(_ type: AttributeType, _ json: JSON, _ message: String) throws {
        if message.isEmpty {  // null is "unset" for every type
            #expect(try decode(json, type) == .null)
            return
        }
        do {
            let value = try decode(json, type)
            Issue.record("accepted as \(value)")
        } catch {
            #expect(error.code == .type)
            #expect(error.message == message)
        }
    }

    @Test(
        "malformed dates are refused",
        arguments: [
            "2026-11-21", "2026-11-21T09:30", "2026-11-21T09:30:00", "2026-11-21 09:30:00Z", "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-21T24:00:00Z", "2026-11-21T23:60:00Z",
            "2026-11-21T23:59:60Z", "2026-11-21T09:30:00.Z", "2026-11-21T09:30:00.1234567890Z", "2026-11-21T09:30:00+0900",
            "2026-11-21T09:30:00+24:00", "2026-11-21T09:30:00Zjunk", "+2026-11-21T09:30:00Z", "２０２６-11-21T09:30:00Z",
            "1900-02-29T00:00:00Z",
        ])
    func badDates(_ text: String) {
        #expect(WireDate.parse(text) == nil)
    }

    @Test("dates: leap years, the epoch, and every day of four centuries round-trip")
    func dates() throws {
        #expect(WireDate.parse("1970-01-01T00:00:00.000Z") == 0)
        #expect(WireDate.parse("2000-02-29T00:00:00Z") == 951_782_400_000)
        #expect(WireDate.parse("1969-12-31T23:59:59.999Z") == -1)
        #expect(WireDate.format(-1) == "1969-12-31T23:59:59.999Z")
        var ms = try #require(WireDate.parse("1800-01-01T00:00:00Z"))
        let end = try #require(WireDate.parse("2200-01-01T00:00:00Z"))
        while ms < end {
            #expect(WireDate.parse(WireDate.format(ms)) == ms)
            ms += 86_400_000 + 3_723_001
        }
    }

    @Test("floats are stored at Float precision and written with Float's shortest digits")
    func floats() throws {
        let value = try decode(.double(0.1), .float)
        #expect(value == .double(Double(Float(0.1))))
        #expect(ValueCodec.encode(value, as: .float) == .double(0.1))
        #expect(ValueCodec.encode(value, as: .double) == .double(Double(Float(0.1))))
    }

    @Test("object IDs are written Entity/N with a model")
    func objects() throws {
        let model = try ModelFixture.sample()
        let id = ObjectID(entity: try #require(model.entity(named: "Employee")).id, number: 17)
        #expect(ValueCodec.encode(.object(id), in: model) == "Employee/17")
        #expect(ValueCodec.encode(.objects([id]), in: model) == ["Employee/17"])
    }
}
