// The Swift type of each attribute type of spec/model.md, and its way to and from the wire.
// Decoding and encoding go through KeelModel's `ValueCodec` — the one reading of the wire
// encoding — so a typed value means exactly what the store means by it.
//
// | attribute type | Swift type | wire |
// | --- | --- | --- |
// | int16, int32, int64 | Int16, Int32, Int64 | number |
// | double, float | Double, Float | number; "NaN", "Infinity", "-Infinity" |
// | decimal | Foundation.Decimal | string of digits ("5200.50"), exact |
// | string | String | string |
// | bool | Bool | true/false |
// | date | Foundation.Date | RFC 3339 UTC with milliseconds (sub-millisecond parts are dropped) |
// | binary | Foundation.Data | base64 |
// | uuid | Foundation.UUID | 8-4-4-4-12 |
// | uri | Foundation.URL | the URI's text (absolute: a scheme, no spaces) |
// | json | KeelModel.JSON | any JSON (Core Data's transformable: encode your Codable into it) |
//
// An optional attribute is the Swift optional of its type; nil is the wire's null.

public import Foundation

/// A Swift type that stands for one attribute type.
public protocol KeelValue: Sendable, Equatable {
    /// The attribute type this Swift type stands for.
    static var attributeType: AttributeType { get }
    /// The object layer's value (`KeelModel.Value`) of this Swift value.
    var keelValue: Value { get }
    /// The Swift value of an object-layer value of `attributeType` (nil for a value of another
    /// kind, or `.null`).
    init?(keelValue: Value)
}

extension KeelValue {
    /// The canonical wire JSON of the value.
    public var wire: JSON { ValueCodec.encode(keelValue, as: Self.attributeType) }

    /// Decodes wire JSON for an attribute of this type; `owner` names it in errors
    /// (`"Employee/3.salary"`). Throws `TYPE` for a value that does not fit, or for null.
    public static func decode(_ json: JSON, owner: String) throws(KeelError) -> Self {
        guard let value = try decodeOptional(json, owner: owner) else {
            throw KeelError(
                .type, "\(owner) is null, but the generated property is not optional (\(attributeType.rawValue))",
                details: ["property": .string(owner)])
        }
        return value
    }

    /// As `decode`, with null read as nil.
    public static func decodeOptional(_ json: JSON, owner: String) throws(KeelError) -> Self? {
        let value = try ValueCodec.decode(json, as: attributeType, owner: owner)
        if value.isNull { return nil }
        guard let typed = Self(keelValue: value) else {
            throw KeelError(.type, "\(owner) (\(attributeType.rawValue)): \(json.serialized()) cannot be read as \(Self.self)")
        }
        return typed
    }
}

extension Optional where Wrapped: KeelValue {
    /// The wire JSON; nil is null.
    public var wire: JSON { map(\.wire) ?? .null }
}

extension Int16: KeelValue {
    public static var attributeType: AttributeType { .int16 }
    public var keelValue: Value { .int(Int64(self)) }
    public init?(keelValue: Value) {
        guard case .int(let i) = keelValue, let v = Int16(exactly: i) else { return nil }
        self = v
    }
}

extension Int32: KeelValue {
    public static var attributeType: AttributeType { .int32 }
    public var keelValue: Value { .int(Int64(self)) }
    public init?(keelValue: Value) {
        guard case .int(let i) = keelValue, let v = Int32(exactly: i) else { return nil }
        self = v
    }
}

extension Int64: KeelValue {
    public static var attributeType: AttributeType { .int64 }
    public var keelValue: Value { .int(self) }
    public init?(keelValue: Value) {
        guard case .int(let i) = keelValue else { return nil }
        self = i
    }
}

extension Double: KeelValue {
    public static var attributeType: AttributeType { .double }
    public var keelValue: Value { .double(self) }
    public init?(keelValue: Value) {
        guard case .double(let d) = keelValue else { return nil }
        self = d
    }
}

extension Float: KeelValue {
    public static var attributeType: AttributeType { .float }
    public var keelValue: Value { .double(Double(self)) }
    public init?(keelValue: Value) {
        guard case .double(let d) = keelValue else { return nil }
        self = Float(d)
    }
}

extension Decimal: KeelValue {
    public static var attributeType: AttributeType { .decimal }
    public var keelValue: Value { .decimal(self) }
    public init?(keelValue: Value) {
        guard case .decimal(let d) = keelValue else { return nil }
        self = d
    }
}

extension String: KeelValue {
    public static var attributeType: AttributeType { .string }
    public var keelValue: Value { .string(self) }
    public init?(keelValue: Value) {
        guard case .string(let s) = keelValue else { return nil }
        self = s
    }
}

extension Bool: KeelValue {
    public static var attributeType: AttributeType { .bool }
    public var keelValue: Value { .bool(self) }
    public init?(keelValue: Value) {
        guard case .bool(let b) = keelValue else { return nil }
        self = b
    }
}

extension Date: KeelValue {
    public static var attributeType: AttributeType { .date }
    /// Milliseconds since 1970, rounded (the wire keeps milliseconds).
    public var keelValue: Value { .date(Int64((timeIntervalSince1970 * 1000).rounded())) }
    public init?(keelValue: Value) {
        guard case .date(let ms) = keelValue else { return nil }
        self.init(keelMilliseconds: ms)
    }

    /// The instant `milliseconds` after 1970-01-01T00:00:00Z (how generated code writes date
    /// defaults).
    public init(keelMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

extension Data: KeelValue {
    public static var attributeType: AttributeType { .binary }
    public var keelValue: Value { .binary([UInt8](self)) }
    public init?(keelValue: Value) {
        guard case .binary(let bytes) = keelValue else { return nil }
        self.init(bytes)
    }
}

extension UUID: KeelValue {
    public static var attributeType: AttributeType { .uuid }
    public var keelValue: Value { .uuid(self) }
    public init?(keelValue: Value) {
        guard case .uuid(let u) = keelValue else { return nil }
        self = u
    }
}

extension URL: KeelValue {
    public static var attributeType: AttributeType { .uri }
    public var keelValue: Value { .uri(absoluteString) }
    /// Nil also for a URI Foundation's `URL` cannot read (decoding then throws `TYPE`).
    public init?(keelValue: Value) {
        guard case .uri(let text) = keelValue, let url = URL(string: text), url.absoluteString == text else { return nil }
        self = url
    }
}

extension JSON: KeelValue {
    public static var attributeType: AttributeType { .json }
    public var keelValue: KeelModel.Value { isNull ? .null : .json(self) }
    public init?(keelValue: KeelModel.Value) {
        guard case .json(let j) = keelValue else { return nil }
        self = j
    }
}

/// Helpers for the default values generated code writes.
public enum KeelDefault {
    /// A `uri` default. `keelctl codegen` only writes URIs that Foundation's `URL(string:)`
    /// reads back unchanged; a file URL of the text stands in should a Foundation ever differ.
    public static func url(_ text: String) -> URL {
        URL(string: text) ?? URL(fileURLWithPath: text)
    }
}
