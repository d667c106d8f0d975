// Attribute values between the wire and the object layer (spec/model.md, "Wire encoding"):
// `decode` turns the JSON a client sent for an attribute into a `Value` of the attribute's type,
// or refuses it with `TYPE` and a sentence that names the attribute, its type and the problem;
// `encode` writes a `Value` back in the one canonical wire form.
//
// | type | JSON read | Value | JSON written |
// | --- | --- | --- | --- |
// | int16/int32/int64 | integer in the type's range (an integral number like `3.0` or `1e3` is read as that integer) | `.int` | integer |
// | double | number, or `"NaN"`/`"Infinity"`/`"-Infinity"` | `.double` | number or those strings |
// | float | as double, finite values that round to a finite Float (±3.4028235e38) | `.double` holding the Float value | shortest Float digits |
// | decimal | string (WireText) or an integer | `.decimal` | string |
// | string | string | `.string` | string |
// | bool | `true`/`false` | `.bool` | boolean |
// | date | RFC 3339 string (WireDate) | `.date` (ms since epoch) | `YYYY-MM-DDTHH:MM:SS.mmmZ` |
// | binary | base64 string | `.binary` | base64 |
// | uuid | 8-4-4-4-12 string, either case | `.uuid` | lowercase string |
// | uri | absolute URI string | `.uri` | string |
// | json | any JSON but null | `.json` | the JSON |
// `null` is `.null` (an unset optional) for every type; whether the attribute may be unset is
// validation's business, at save.

import Foundation

public enum ValueCodec {
    /// Decodes the wire JSON for an attribute of `type`; `owner` names it in errors
    /// (`"Employee.age"`).
    public static func decode(_ json: JSON, as type: AttributeType, owner: String) throws(KeelError) -> Value {
        if case .null = json { return .null }
        func refuse(_ problem: String) -> KeelError {
            KeelError(.type, "\(owner) is \(type.rawValue): \(problem)", details: ["property": .string(owner)])
        }
        func found() -> String { "found \(json.kindName) \(describe(json))" }
        switch type {
        case .int16, .int32, .int64:
            let range = integerRange(type)
            guard case .int(let i) = json.integerValue else {
                if case .double(let d) = json, d.isFinite {
                    if d.rounded() == d { throw refuse("\(describe(json)) is out of range \(range.lowerBound)…\(range.upperBound)") }
                    throw refuse("\(describe(json)) is not an integer")
                }
                throw refuse("expected an integer, \(found())")
            }
            guard range.contains(i) else { throw refuse("\(i) is out of range \(range.lowerBound)…\(range.upperBound)") }
            return .int(i)
        case .double, .float:
            let d: Double
            switch json {
            case .int(let i): d = Double(i)
            case .double(let v): d = v
            case .string("NaN"): d = .nan
            case .string("Infinity"): d = .infinity
            case .string("-Infinity"): d = -.infinity
            default: throw refuse("expected a number or \"NaN\", \"Infinity\", \"-Infinity\", \(found())")
            }
            guard type == .float else { return .double(d) }
            if d.isFinite && !Float(d).isFinite {
                throw refuse("\(describe(json)) is out of range for a float (±3.4028235e+38)")
            }
            return .double(Double(Float(d)))
        case .decimal:
            switch json {
            case .int(let i): return .decimal(Decimal(i))
            case .string(let text):
                switch WireText.decimal(text) {
                case .success(let value): return .decimal(value)
                case .failure(.malformed):
                    throw refuse("\(describe(json)) is not a decimal number (digits with an optional '-' and '.', like \"1234.50\")")
                case .failure(.tooPrecise(let n)):
                    throw refuse("\(describe(json)) has \(n) significant digits; at most 38 are kept exactly")
                case .failure(.outOfRange):
                    throw refuse("\(describe(json)) is out of the decimal range (exponents -128…127)")
                }
            case .double:
                throw refuse("\(describe(json)) is a JSON number with a fraction; write decimals as strings (\"1234.50\") so no precision is lost")
            default: throw refuse("expected a decimal string like \"1234.50\", \(found())")
            }
        case .string:
            guard case .string(let s) = json else { throw refuse("expected a string, \(found())") }
            return .string(s)
        case .bool:
            guard case .bool(let b) = json else { throw refuse("expected true or false, \(found())") }
            return .bool(b)
        case .date:
            guard case .string(let s) = json else { throw refuse("expected a date string like \"2026-11-21T09:30:00.000Z\", \(found())") }
            guard let ms = WireDate.parse(s) else {
                throw refuse("\(describe(json)) is not an RFC 3339 date-time like \"2026-11-21T09:30:00.000Z\"")
            }
            return .date(ms)
        case .binary:
            guard case .string(let s) = json else { throw refuse("expected a base64 string, \(found())") }
            guard let bytes = WireText.binary(s) else { throw refuse("\(describe(json)) is not valid base64") }
            return .binary(bytes)
        case .uuid:
            guard case .string(let s) = json else { throw refuse("expected a UUID string, \(found())") }
            guard let uuid = WireText.uuid(s) else {
                throw refuse("\(describe(json)) is not a UUID like \"e621e1f8-c36c-495a-93fc-0c247a3e6e5f\"")
            }
            return .uuid(uuid)
        case .uri:
            guard case .string(let s) = json else { throw refuse("expected a URI string, \(found())") }
            guard WireText.isURI(s) else {
                throw refuse("\(describe(json)) is not an absolute URI (a scheme like \"https:\" and no spaces)")
            }
            return .uri(s)
        case .json:
            return .json(json)
        }
    }

    /// The canonical wire JSON of an attribute value of `type`.
    public static func encode(_ value: Value, as type: AttributeType) -> JSON {
        switch value {
        case .double(let d) where type == .float:
            let f = Float(d)
            guard f.isFinite else { return encode(.double(d), as: .double) }
            return .double(Double(f.description) ?? d)
        default:
            return encode(value)
        }
    }

    /// The canonical wire JSON of a value (floats written with Double digits; object IDs need a
    /// model: see `encode(_:in:)`).
    public static func encode(_ value: Value) -> JSON {
        switch value {
        case .null: .null
        case .int(let i): .int(i)
        case .double(let d):
            d.isNaN ? .string("NaN") : d.isInfinite ? .string(d > 0 ? "Infinity" : "-Infinity") : .double(d)
        case .decimal(let d): .string(WireText.text(of: d))
        case .string(let s): .string(s)
        case .bool(let b): .bool(b)
        case .date(let ms): .string(WireDate.format(ms))
        case .binary(let bytes): .string(WireText.text(of: bytes))
        case .uuid(let u): .string(WireText.text(of: u))
        case .uri(let s): .string(s)
        case .json(let j): j
        case .object(let id): .string("\(id.entity.rawValue)/\(id.number)")
        case .objects(let ids): .array(ids.map { .string("\($0.entity.rawValue)/\($0.number)") })
        }
    }

    /// As `encode(_:)`, with object IDs written `Entity/N` (spec/protocol.md).
    public static func encode(_ value: Value, in model: Model) -> JSON {
        switch value {
        case .object(let id): .string(id.text(in: model))
        case .objects(let ids): .array(ids.map { .string($0.text(in: model)) })
        default: encode(value)
        }
    }

    /// The inclusive range of an integer type.
    public static func integerRange(_ type: AttributeType) -> ClosedRange<Int64> {
        switch type {
        case .int16: Int64(Int16.min)...Int64(Int16.max)
        case .int32: Int64(Int32.min)...Int64(Int32.max)
        default: Int64.min...Int64.max
        }
    }

    /// A short rendering of a refused value for an error sentence (long strings cut).
    static func describe(_ json: JSON) -> String {
        let text = json.serialized()
        return text.count > 60 ? String(text.prefix(57)) + "…" : text
    }
}

extension JSON {
    /// `.int` for an integer or an integral double within Int64, else self.
    fileprivate var integerValue: JSON {
        if let i = intValue { return .int(i) }
        return self
    }
}

extension Attribute {
    /// Decodes the wire JSON for this attribute (`ValueCodec.decode`), naming it `Entity.name`.
    public func decode(_ json: JSON, entity: String) throws(KeelError) -> Value {
        try ValueCodec.decode(json, as: type, owner: "\(entity).\(name)")
    }

    /// The canonical wire JSON of a value of this attribute.
    public func encode(_ value: Value) -> JSON { ValueCodec.encode(value, as: type) }
}
