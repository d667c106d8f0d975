// The base class of generated entity classes (Core Data's NSManagedObject). The classes mirror
// the model's inheritance (`Employee: Person`), so a fetch of `Person` hands out `Employee` and
// `Student` objects and `as? Employee` works (Decision 0007).
//
// An object is a snapshot, not a live reference: the context does not track it, and nothing
// changes it behind your back. You change it, then hand it to `context.update(_:)`, which sends
// the properties that differ from the snapshot (and RELATE for to-many edits). It is not
// `Sendable`: the compiler keeps it in the isolation domain that fetched or made it (Core Data's
// "never pass a managed object between threads", enforced); its `objectID` goes anywhere.
//
// Storage: attributes and to-ones are stored properties of the generated class; to-many members
// are kept here (so an object not inserted yet can be added, and resolved to its ID when it is);
// `snapshot` holds the values as the context last gave them (or as they were last sent), which
// `update` compares against.

import Collections

/// Property values in wire JSON by name, in the order written (what generated `encode(into:)`
/// fills).
public struct KeelValues: Sendable {
    var storage: OrderedDictionary<String, JSON> = [:]

    public init() {}

    public subscript(name: String) -> JSON? {
        get { storage[name] }
        set { storage[name] = newValue }
    }
}

/// What every entity class is; generated code hangs its typed keys (`Employee.age`) and the
/// typed `objectID` on it, with `Self` standing for the class they are used on.
public protocol KeelEntity: AnyObject {}

open class KeelObject: KeelEntity, CustomStringConvertible {
    /// The object's ID, nil until it is inserted (`objectID` is the typed form).
    public internal(set) var anyObjectID: KeelObjectID?
    /// Saved changes of the object as last read (0 for one not saved yet).
    public internal(set) var version: UInt64 = 0
    /// The values as the context last gave them, or as last sent to it: what `update` compares.
    var snapshot: OrderedDictionary<String, JSON> = [:]
    /// To-many members by relationship name: IDs, or objects not inserted yet.
    var members: [String: [Member]] = [:]
    /// Set by `delete`.
    public internal(set) var isDeleted = false

    enum Member {
        case id(KeelObjectID)
        case object(KeelObject)

        var objectID: KeelObjectID? {
            switch self {
            case .id(let id): id
            case .object(let object): object.anyObjectID
            }
        }

        func same(as other: Member) -> Bool {
            switch (self, other) {
            case (.object(let a), .object(let b)) where a === b: true
            default: objectID != nil && objectID == other.objectID
            }
        }
    }

    /// The entity's description (generated classes override it).
    open class var entity: KeelEntityDescription {
        preconditionFailure("\(Self.self) is not a generated entity class (keelctl codegen writes `entity`)")
    }

    /// The class of an object of entity `name` that a fetch of this class may return: itself or
    /// a sub-entity's class (generated classes override it).
    open class func concreteType(forEntity name: String) -> KeelObject.Type? {
        nil
    }

    /// A new object, not inserted yet.
    public init() {}

    /// An object read from a context. Generated subclasses read their own properties from `row`
    /// first, then call this.
    public required init(row: KeelRow) throws(KeelError) {
        anyObjectID = row.id
        version = row.version
        snapshot = row.values
        for property in Self.entity.properties {
            guard case .toMany = property.kind else { continue }
            members[property.name] = try row.members(property.name).map(Member.id)
        }
    }

    /// Writes every attribute and to-one as wire JSON (generated subclasses add theirs, then
    /// call `super`).
    open func encode(into values: inout KeelValues) {}

    /// `Employee/3 {name: "Kim", …}`: the ID (or `new Employee`) and every property in wire JSON.
    open var description: String {
        var values = KeelValues()
        encode(into: &values)
        var parts = values.storage.map { "\($0.key): \($0.value.serialized())" }
        for property in Self.entity.properties {
            guard case .toMany = property.kind else { continue }
            let ids = (members[property.name] ?? []).map { $0.objectID?.text ?? "new" }
            parts.append("\(property.name): [\(ids.joined(separator: ", "))]")
        }
        return "\(anyObjectID?.text ?? "new \(Self.entity.name)") {\(parts.joined(separator: ", "))}"
    }

    // MARK: To-many members

    /// The IDs of a to-many's members (members not inserted yet are left out).
    public func memberIDs<T: KeelObject>(_ relationship: String, as type: T.Type = T.self) -> [KeelID<T>] {
        (members[relationship] ?? []).compactMap { $0.objectID.map(KeelID<T>.init(unchecked:)) }
    }

    /// Replaces a to-many's members.
    public func setMembers<T: KeelObject>(_ relationship: String, _ ids: [KeelID<T>]) {
        members[relationship] = ids.map { .id($0.objectID) }
    }

    /// Adds a member (at the end, or at `index` of an ordered to-many) unless it is there.
    /// An object not inserted yet is sent once it is (inserting this object first fails).
    public func addMember(_ object: KeelObject, to relationship: String, at index: Int? = nil) {
        add(.object(object), to: relationship, at: index)
    }

    public func addMember(_ id: some AnyKeelID, to relationship: String, at index: Int? = nil) {
        add(.id(id.objectID), to: relationship, at: index)
    }

    public func removeMember(_ object: KeelObject, from relationship: String) {
        members[relationship]?.removeAll { $0.same(as: .object(object)) }
    }

    public func removeMember(_ id: some AnyKeelID, from relationship: String) {
        members[relationship]?.removeAll { $0.same(as: .id(id.objectID)) }
    }

    private func add(_ member: Member, to relationship: String, at index: Int?) {
        var list = members[relationship] ?? []
        guard !list.contains(where: { $0.same(as: member) }) else { return }
        list.insert(member, at: min(max(index ?? list.count, 0), list.count))
        members[relationship] = list
    }

    // MARK: Values

    /// Every property's current wire value: attributes and to-ones (`encode`), to-many members
    /// as ID arrays. `BAD_REQUEST` when a member has not been inserted yet.
    func currentValues() throws(KeelError) -> OrderedDictionary<String, JSON> {
        var encoded = KeelValues()
        encode(into: &encoded)
        var values = encoded.storage
        for property in Self.entity.properties {
            guard case .toMany = property.kind else { continue }
            var ids: [JSON] = []
            for member in members[property.name] ?? [] {
                guard let id = member.objectID else {
                    throw KeelError(
                        .badRequest,
                        "\(describe()).\(property.name) holds an object that is not inserted yet: insert it first")
                }
                ids.append(.string(id.text))
            }
            values[property.name] = .array(ids)
        }
        return values
    }

    /// What an insert sends of `values` (`currentValues()`): every property in the entity's
    /// order, except an empty one (null, no members) without a default — the store starts it empty.
    static func insertValues(_ values: OrderedDictionary<String, JSON>) -> JSON {
        var sent: OrderedDictionary<String, JSON> = [:]
        for property in entity.properties {
            guard let value = values[property.name] else { continue }
            if property.defaultValue == nil, value.isNull || value == .array([]) { continue }
            sent[property.name] = value
        }
        return .object(sent)
    }

    /// The snapshot in canonical wire form (what `currentValues` would give for it): values
    /// re-encoded by their attribute type, embedded objects reduced to their IDs.
    func snapshotValues() -> OrderedDictionary<String, JSON> {
        var out: OrderedDictionary<String, JSON> = [:]
        for property in Self.entity.properties {
            let raw = snapshot[property.name] ?? .null
            switch property.kind {
            case .attribute(let type, _, _):
                out[property.name] = (try? ValueCodec.decode(raw, as: type, owner: property.name)).map {
                    ValueCodec.encode($0, as: type)
                } ?? raw
            case .toOne:
                out[property.name] = KeelRow.idJSON(raw) ?? .null
            case .toMany:
                out[property.name] = .array((raw.arrayValue ?? []).compactMap(KeelRow.idJSON))
            }
        }
        return out
    }

    /// `Employee/3`, or `a new Employee`.
    func describe() -> String {
        anyObjectID?.text ?? "a new \(Self.entity.name)"
    }

    /// An object of `T` (or of the sub-entity the row names) from a reply object; `check` vets
    /// the class chosen before it reads the row (the store's model check).
    static func make<T: KeelObject>(
        _ json: JSON, as type: T.Type, check: (KeelObject.Type) throws(KeelError) -> Void = { _ in }
    ) throws(KeelError) -> T {
        let row = try KeelRow(json)
        guard let concrete = T.concreteType(forEntity: row.entityName) else {
            throw KeelError(
                .type, "\(row.id.text) is not a \(T.entity.name) (the reply names entity \(row.entityName))")
        }
        try check(concrete)
        guard let object = try concrete.init(row: row) as? T else {
            throw KeelError(.internal, "\(concrete) is not a subclass of \(T.self)")
        }
        return object
    }

    /// The objects a read embedded under `name` (by `include`); `BAD_REQUEST` when it did not.
    func embedded<T: KeelObject>(_ name: String, as type: T.Type) throws(KeelError) -> [T] {
        let json = snapshot[name] ?? .null
        let items: [JSON]
        switch json {
        case .null: return []
        case .object: items = [json]
        case .array(let list) where list.allSatisfy({ $0.objectValue != nil }): items = list
        default:
            throw KeelError(
                .badRequest, "\(describe()).\(name) was not included when it was read: fetch or get it with including: its key")
        }
        var out: [T] = []
        out.reserveCapacity(items.count)
        for item in items { out.append(try Self.make(item, as: T.self)) }
        return out
    }
}

extension KeelEntity where Self: KeelObject {
    /// The object's typed ID, nil until it is inserted.
    public var objectID: KeelID<Self>? {
        anyObjectID.map(KeelID<Self>.init(unchecked:))
    }
}
