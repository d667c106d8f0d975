// One object as a context replied it (spec/protocol.md, "Values and objects"), for generated
// `init(row:)`: `$id`, `$entity`, `$version` and every property by name. A relationship named in a
// fetch's or GET's `include` holds embedded objects instead of IDs: the relationship reads as
// their IDs, and the objects stay in the snapshot for `KeelObject.included(_:)`.

public import Collections

public struct KeelRow: Sendable {
    public let id: KeelObjectID
    public let version: UInt64
    /// The properties as replied (embedded objects included).
    public let values: OrderedDictionary<String, JSON>

    /// Reads a reply object; `TYPE` when it is not one.
    public init(_ json: JSON) throws(KeelError) {
        guard let members = json.objectValue, let idJSON = members["$id"] else {
            throw KeelError(.type, "expected an object with \"$id\" in the reply, found \(json.kindName)")
        }
        id = try KeelObjectID(parsing: idJSON, "$id")
        guard let version = members["$version"]?.intValue, version >= 0 else {
            throw KeelError(.type, "\(id.text): the reply has no \"$version\"")
        }
        self.version = UInt64(version)
        var values = members
        values.removeValue(forKey: "$id")
        values.removeValue(forKey: "$entity")
        values.removeValue(forKey: "$version")
        self.values = values
    }

    /// The concrete entity's name (from the ID).
    public var entityName: String { id.entityName }

    private func owner(_ name: String) -> String { "\(id.text).\(name)" }

    /// A non-optional attribute: `TYPE` when null or of the wrong type.
    public func value<T: KeelValue>(_ name: String) throws(KeelError) -> T {
        try T.decode(values[name] ?? .null, owner: owner(name))
    }

    /// An optional attribute.
    public func value<T: KeelValue>(_ name: String) throws(KeelError) -> T? {
        try T.decodeOptional(values[name] ?? .null, owner: owner(name))
    }

    /// A to-one's target (an embedded object reads as its ID).
    public func toOne<T: KeelObject>(_ name: String) throws(KeelError) -> KeelID<T>? {
        let json = values[name] ?? .null
        if json.isNull { return nil }
        guard let idJSON = Self.idJSON(json) else {
            throw KeelError(.type, "\(owner(name)): expected an object ID or null, found \(json.kindName)")
        }
        return KeelID(unchecked: try KeelObjectID(parsing: idJSON, owner(name)))
    }

    /// A to-many's members, in order.
    func members(_ name: String) throws(KeelError) -> [KeelObjectID] {
        let json = values[name] ?? .array([])
        guard let items = json.arrayValue else {
            if json.isNull { return [] }
            throw KeelError(.type, "\(owner(name)): expected an array of object IDs, found \(json.kindName)")
        }
        var ids: [KeelObjectID] = []
        ids.reserveCapacity(items.count)
        for item in items {
            guard let idJSON = Self.idJSON(item) else {
                throw KeelError(.type, "\(owner(name)): expected object IDs, found \(item.kindName)")
            }
            ids.append(try KeelObjectID(parsing: idJSON, owner(name)))
        }
        return ids
    }

    /// An ID as wire JSON: the string itself, or an embedded object's `$id`; nil otherwise.
    static func idJSON(_ json: JSON) -> JSON? {
        switch json {
        case .string: json
        case .object(let members): members["$id"].flatMap { $0.stringValue != nil ? $0 : nil }
        default: nil
        }
    }
}
