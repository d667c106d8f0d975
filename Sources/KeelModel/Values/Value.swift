// A property value inside the object layer: attributes in their typed form (decoded from the
// wire encoding of spec/model.md by ValueCodec.swift), relationships as object IDs. Values of
// `int16`/`int32`/`int64` are all `.int`, `float`/`double` are `.double` (range checked on the
// way in), so comparisons by value across number types are direct.

public import Foundation

public enum Value: Sendable, Hashable {
    case null
    case int(Int64)
    case double(Double)
    case decimal(Decimal)
    case string(String)
    case bool(Bool)
    /// Milliseconds since 1970-01-01T00:00:00Z (the wire has millisecond precision).
    case date(Int64)
    case binary([UInt8])
    case uuid(UUID)
    case uri(String)
    case json(JSON)
    /// A to-one relationship's target.
    case object(ObjectID)
    /// A to-many relationship's targets (in order when ordered).
    case objects([ObjectID])

    public var isNull: Bool { self == .null }
}
