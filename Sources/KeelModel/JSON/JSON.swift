// A JSON value as the model file and the line protocol carry it. Objects keep their key order
// (replies read `{"$id":…,"$entity":…}` in that order); integers are exact over the whole Int64
// range (spec/model.md: "integers as JSON numbers, exact for the whole int64 range"), so they are
// kept apart from doubles. Parsing: `JSON.parse(_:)` (JSONParser.swift); writing: `serialized()`
// (JSONWriter.swift).

public import Collections

public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits Int64.
    case int(Int64)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSON])
    case object(OrderedDictionary<String, JSON>)

    public subscript(key: String) -> JSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectValue: OrderedDictionary<String, JSON>? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// An integer, also from a double with no fraction that fits Int64 exactly.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && d >= -9.223_372_036_854_775_808e18 && d < 9.223_372_036_854_775_808e18:
            return Int64(d)
        default: return nil
        }
    }

    public var isNull: Bool { self == .null }

    /// The kind of value, for error messages ("expected a string, found a number").
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(OrderedDictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
