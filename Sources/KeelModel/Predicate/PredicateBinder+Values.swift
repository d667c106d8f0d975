// Constants in a predicate — literals, `%@` arguments (JSON), `$VAR` values (JSON) — are typed
// by the key path they are compared with, the way the wire encoding types attribute values
// (ValueCodec), so that dates and decimals compare by value:
//
// | compared with | accepted | becomes |
// | --- | --- | --- |
// | int16/32/64, double, float | numbers | `.int` / `.double` (compared by value; `age > 29.5` is fine) |
// | decimal | numbers, decimal strings (`"5200.00"`) | a written fraction (`5200.10`) or a string exactly as `.decimal` |
// | string | strings | `.string` |
// | bool | `TRUE`/`FALSE`, 0 and 1 | `.bool` |
// | date | RFC 3339 strings | `.date` |
// | uuid, binary | their wire strings | `.uuid`, `.binary` |
// | uri | strings | `.uri` |
// | json | anything | `.json` |
// | a relationship, SELF | `"Entity/N"` of that entity or a sub-entity | `.object` |
// | nothing typed (a constant against a constant) | anything | numbers, strings, booleans as they are |
// `nil` is `.null` against anything. Anything else is refused with the constant's position.

import Foundation

/// What a key path yields, for typing the constants it meets.
enum OperandType: Equatable, Sendable {
    case attribute(AttributeType)
    /// An object of this entity (or below): a relationship or SELF.
    case object(EntityID)
    case unknown
}

/// A constant before it is typed.
struct RawConstant: Sendable {
    enum Kind: Sendable {
        case json(JSON)
        /// A number literal with a fraction or exponent, as written (exact for decimals).
        case real(String)
        case list([RawConstant])
    }

    var kind: Kind
    var position: SourcePosition

    init(kind: Kind, position: SourcePosition) {
        self.kind = kind
        self.position = position
    }

    init(literal: Literal) {
        position = literal.position
        switch literal.kind {
        case .null: kind = .json(.null)
        case .bool(let b): kind = .json(.bool(b))
        case .int(let i): kind = .json(.int(i))
        case .real(let text): kind = .real(text)
        case .string(let s): kind = .json(.string(s))
        }
    }

    /// An argument or variable: a JSON array is a list (for `IN %@`).
    init(json: JSON, position: SourcePosition, limits: PredicateLimits) throws(KeelError) {
        self.position = position
        if case .array(let elements) = json {
            guard elements.count <= limits.maximumListCount else {
                throw PredicateError.at(position, expected: "a list of at most \(limits.maximumListCount) elements", found: "\(elements.count)")
            }
            var raws: [RawConstant] = []
            for element in elements {
                if case .array = element { throw PredicateError.at(position, expected: "a list of values", found: "a nested list") }
                raws.append(try RawConstant(json: element, position: position, limits: limits))
            }
            kind = .list(raws)
        } else {
            kind = .json(json)
        }
    }

    var naturalType: OperandType { .unknown }

    var described: String {
        switch kind {
        case .json(let j): ValueCodec.describe(j)
        case .real(let text): text
        case .list(let elements): "a list of \(elements.count)"
        }
    }
}

extension PredicateBinder {
    /// Converts a constant for comparison with a `type`d side.
    func convert(_ raw: RawConstant, to type: OperandType, allowList: Bool) throws(KeelError) -> BoundExpression {
        switch raw.kind {
        case .list(let elements):
            guard allowList else { throw PredicateError.at(raw.position, expected: "a single value", found: "a {list}") }
            var values: [Value] = []
            values.reserveCapacity(elements.count)
            for element in elements { values.append(try value(element, as: type)) }
            return .list(values)
        default:
            return .constant(try value(raw, as: type))
        }
    }

    /// One constant as a value of `type`.
    func value(_ raw: RawConstant, as type: OperandType) throws(KeelError) -> Value {
        func refuse(_ expected: String) -> KeelError {
            PredicateError.at(raw.position, expected: expected, found: raw.described)
        }
        switch raw.kind {
        case .list: throw refuse("a single value, not a list")
        case .real(let text):
            switch type {
            case .attribute(.decimal):
                if let d = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) { return .decimal(d) }
                return .double(Double(text) ?? .nan)
            case .unknown, .attribute(.int16), .attribute(.int32), .attribute(.int64), .attribute(.double), .attribute(.float):
                return .double(Double(text) ?? .nan)
            case .attribute(let t): throw refuse("a \(t.rawValue) value")
            case .object(let e): throw refuse("an object ID like \"\(model[e].name)/1\"")
            }
        case .json(let json):
            if case .null = json { return .null }
            switch type {
            case .unknown:
                switch json {
                case .bool(let b): return .bool(b)
                case .int(let i): return .int(i)
                case .double(let d): return .double(d)
                case .string(let s): return .string(s)
                default: throw refuse("a number, a string or a boolean")
                }
            case .object(let entity):
                guard case .string(let text) = json, let id = model.objectID(text), model[entity].includes(id.entity) else {
                    throw refuse("an object ID like \"\(model[entity].name)/1\"")
                }
                return .object(id)
            case .attribute(let t):
                return try attributeValue(json, t, refuse)
            }
        }
    }

    private func attributeValue(_ json: JSON, _ type: AttributeType, _ refuse: (String) -> KeelError) throws(KeelError) -> Value {
        switch type {
        case .int16, .int32, .int64, .double, .float:
            switch json {
            case .int(let i): return .int(i)
            case .double(let d): return .double(d)
            default: throw refuse("a number (compared with a \(type.rawValue))")
            }
        case .decimal:
            switch json {
            case .int(let i): return .int(i)
            case .double(let d): return .double(d)
            case .string:
                do { return try ValueCodec.decode(json, as: .decimal, owner: "the constant") } catch {
                    throw refuse("a decimal number or a decimal string like \"5200.00\"")
                }
            default: throw refuse("a decimal number or a decimal string like \"5200.00\"")
            }
        case .string:
            guard case .string(let s) = json else { throw refuse("a string") }
            return .string(s)
        case .uri:
            guard case .string(let s) = json else { throw refuse("a string") }
            return .uri(s)
        case .bool:
            switch json {
            case .bool(let b): return .bool(b)
            case .int(0): return .bool(false)
            case .int(1): return .bool(true)
            default: throw refuse("TRUE, FALSE, YES, NO, 0 or 1")
            }
        case .date, .uuid, .binary:
            guard case .string = json else { throw refuse(Self.expectedText(type)) }
            do { return try ValueCodec.decode(json, as: type, owner: "the constant") } catch { throw refuse(Self.expectedText(type)) }
        case .json:
            return .json(json)
        }
    }

    private static func expectedText(_ type: AttributeType) -> String {
        switch type {
        case .date: "a date string like \"2026-11-21T09:30:00.000Z\""
        case .uuid: "a UUID string like \"e621e1f8-c36c-495a-93fc-0c247a3e6e5f\""
        default: "a base64 string"
        }
    }
}
