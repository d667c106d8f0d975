// One result of a fetch, as `ObjectContext.fetch(_:_:)` hands it over and as a `ROW` line
// carries it: an object (with included relationships and fetched properties embedded), an ID,
// or a dictionary of the requested properties.

public struct FetchRow: Sendable {
    /// The object's ID. A group's row (a grouped fetch: FetchGrouping.swift) has the group's first
    /// object's; the one row of aggregates over no objects has its entity with number
    /// `UInt64.max`, which no object has.
    public let id: ObjectID
    public let result: FetchRequest.ResultType
    /// The object for `objects` and `dictionaries`; nil for `ids`.
    public let object: ManagedObject?
    /// `properties` as fields (nil: all).
    let fields: [Int]?
    /// For `dictionaries` with key paths or `"$id"` in `properties`: every requested name in its
    /// order, with its property and value (PreparedFetch.keyPaths); nil otherwise.
    let projected: [ProjectedValue]?

    struct ProjectedValue: Sendable {
        let name: String
        /// The value's property; nil for the object's ID (`"$id"`, a `.object` value).
        let property: Property?
        let value: Value

        /// The value in the wire form: its property's, or the ID's `"Entity/N"`.
        func wire(in model: Model) -> JSON {
            if let property { return property.wire(value, in: model) }
            if case .object(let id) = value { return .string(id.text(in: model)) }
            return .null
        }
    }

    init(id: ObjectID, result: FetchRequest.ResultType, object: ManagedObject?, fields: [Int]?, projected: [ProjectedValue]? = nil) {
        self.id = id
        self.result = result
        self.object = object
        self.fields = fields
        self.projected = projected
    }

    /// For `dictionaries`: the requested properties by name (relationships as `.object`/`.objects`;
    /// a key path by itself, `"department.name"`).
    public var dictionary: [String: Value] {
        if let projected { return Dictionary(projected.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a }) }
        guard let object else { return [:] }
        let selected = fields ?? Array(object.entity.properties.indices)
        return Dictionary(selected.map { (object.entity.properties[$0].name, object.values[$0]) }, uniquingKeysWith: { a, _ in a })
    }

    /// For `dictionaries`: the values of `properties`, in their order.
    var values: [Value] {
        if let projected { return projected.map(\.value) }
        guard let object else { return [] }
        return (fields ?? Array(object.entity.properties.indices)).map { object.values[$0] }
    }

    /// The wire form: the object JSON (only `properties` when given), `{"$id":…}` for `ids`, or
    /// `{"name":…, …}` with the requested properties for `dictionaries`.
    public func json(in model: Model) -> JSON {
        switch result {
        case .ids, .count:
            return ["$id": .string(id.text(in: model))]
        case .objects:
            return object?.json(in: model, fields: fields) ?? ["$id": .string(id.text(in: model))]
        case .dictionaries:
            if let projected {
                return .object(.init(projected.map { ($0.name, $0.wire(in: model)) }, uniquingKeysWith: { first, _ in first }))
            }
            guard let object else { return [:] }
            var members: [(String, JSON)] = []
            for field in fields ?? Array(object.entity.properties.indices) {
                let property = object.entity.properties[field]
                members.append((property.name, property.wire(object.values[field], in: model)))
            }
            return .object(.init(members, uniquingKeysWith: { first, _ in first }))
        }
    }

    /// Appends the wire form's compact text to `out` as UTF-8, the text of `json(in:)`: an
    /// object's written straight from its values (ManagedObject+Wire.swift), an ID's as
    /// `{"$id":"Entity/N"}`, a dictionary's through its `JSON`.
    public func write(to out: inout [UInt8], in model: Model) {
        switch result {
        case .objects where object != nil:
            object?.write(to: &out, in: model, fields: fields)
        case .ids, .count, .objects:
            out.appendText(#"{"$id":"#)
            id.writeText(to: &out, in: model)
            out.appendText("}")
        case .dictionaries:
            json(in: model).write(to: &out)
        }
    }
}
