// A managed-object context in the typed API (Core Data's NSManagedObjectContext), embedded or
// behind keeld — it holds an `any ContextBackend` and nothing else, so the same code runs on both.
// Objects: `insert`, `update` (sends what changed), `delete`, `get`; relationship edits by ID;
// fetches (KeelContext+Fetch.swift); `save`, `rollback`, `refresh`, `changes`; child contexts.
//
// The context is `Sendable` (share it between tasks freely; its calls are serialised, in order
// per task). The objects it hands out are not: every method that takes or returns objects runs
// in the caller's isolation (`isolation: #isolation`), so objects never cross it.

public final class KeelContext: Sendable {
    public let backend: any ContextBackend
    let store: StoreCore

    init(backend: any ContextBackend, core: StoreCore) {
        self.backend = backend
        self.store = core
    }

    /// The context's name (`main` for the store's main context).
    public var name: String { backend.name }

    // MARK: Objects

    /// `INSERT`: sends every property of `object` and gives it its permanent ID. The object must
    /// be new (not inserted before). Returns it, for `let e = try await context.insert(Employee(…))`.
    @discardableResult
    public func insert<E: KeelObject>(_ object: E, isolation: isolated (any Actor)? = #isolation) async throws(KeelError) -> E {
        let type = type(of: object)
        try store.check(type)
        guard object.anyObjectID == nil else {
            throw KeelError(.badRequest, "\(object.describe()) is inserted already: change it and call update(_:)")
        }
        guard !type.entity.isAbstract else {
            throw KeelError(.badRequest, "\(type.entity.name) is abstract: insert one of its sub-entities")
        }
        let values = try object.currentValues()
        let text = try await backend.insert(entity: type.entity.name, values: type.insertValues(values))
        object.anyObjectID = try KeelObjectID(parsing: .string(text), "INSERT's $id")
        object.version = 0
        object.snapshot = values
        return object
    }

    /// Sends the changes made to `object` since it was read (or last inserted or updated): one
    /// `UPDATE` with the attributes and to-ones that differ, and a `RELATE` per to-many whose
    /// members changed (members added and removed; an ordered to-many whose order changed is
    /// re-sent from the first moved member). Nothing when nothing changed.
    public func update<E: KeelObject>(_ object: E, isolation: isolated (any Actor)? = #isolation) async throws(KeelError) {
        try store.check(type(of: object))
        guard let id = object.anyObjectID else {
            throw KeelError(.badRequest, "\(object.describe()) is not inserted: insert it first")
        }
        let current = try object.currentValues()
        let original = object.snapshotValues()
        var changed: [(String, JSON)] = []
        var edits: [(name: String, add: [String], remove: [String])] = []
        for property in type(of: object).entity.properties {
            let now = current[property.name] ?? .null
            let before = original[property.name] ?? .null
            guard now != before else { continue }
            switch property.kind {
            case .attribute, .toOne:
                changed.append((property.name, now))
            case .toMany(_, let ordered, _, _):
                let edit = MemberEdit(before: Self.texts(before), after: Self.texts(now), ordered: ordered)
                if !edit.add.isEmpty || !edit.remove.isEmpty { edits.append((property.name, edit.add, edit.remove)) }
            }
        }
        if !changed.isEmpty {
            try await backend.update(id.text, values: .object(.init(changed, uniquingKeysWith: { a, _ in a })))
        }
        for edit in edits {
            try await backend.relate(id.text, relationship: edit.name, add: edit.add, remove: edit.remove)
        }
        object.snapshot = current
    }

    /// `DELETE`: deletes the object in this context (delete rules applied at once: cascaded
    /// objects are in the result, nullified inverses cleared; `deny` is checked at save).
    /// Returns every object deleted, this one first.
    @discardableResult
    public func delete<E: KeelObject>(_ object: E, isolation: isolated (any Actor)? = #isolation) async throws(KeelError) -> [KeelObjectID] {
        guard let id = object.anyObjectID else {
            throw KeelError(.badRequest, "\(object.describe()) is not inserted: there is nothing to delete")
        }
        let deleted = try await delete(id)
        object.isDeleted = true
        return deleted
    }

    /// `DELETE` by ID.
    @discardableResult
    public func delete(_ id: some AnyKeelID) async throws(KeelError) -> [KeelObjectID] {
        var out: [KeelObjectID] = []
        for text in try await backend.delete(id.objectID.text) {
            out.append(try KeelObjectID(parsing: .string(text), "DELETE's result"))
        }
        return out
    }

    /// `GET`: the object as this context sees it (its pending changes included), as an object of
    /// its concrete entity's class. `NOT_FOUND` when it does not exist here (or is deleted).
    public func get<E: KeelObject>(
        _ id: KeelID<E>, including: [any IncludableKey<E>] = [], isolation: isolated (any Actor)? = #isolation
    ) async throws(KeelError) -> E {
        try store.check(E.self)
        let json = try await backend.get(id.text, include: including.map(\.includeName))
        return try KeelObject.make(json, as: E.self, check: store.check)
    }

    /// As `get`, nil when the object does not exist in this context (or is deleted).
    public func existing<E: KeelObject>(_ id: KeelID<E>, isolation: isolated (any Actor)? = #isolation) async throws(KeelError) -> E? {
        do {
            return try await get(id)
        } catch where error.code == .notFound {
            return nil
        }
    }

    /// A fetched property, evaluated now (`Book.feedbackList`: the feedback of this book, in its
    /// own store), as objects.
    public func fetch<R: KeelObject, T: KeelObject>(
        _ property: FetchedPropertyKey<R, T>, of id: KeelID<R>, isolation: isolated (any Actor)? = #isolation
    ) async throws(KeelError) -> [T] {
        try store.check(R.self)
        try store.check(T.self)
        let json = try await backend.get(id.text, include: [property.name])
        return try KeelObject.make(json, as: R.self, check: store.check).embedded(property.name, as: T.self)
    }

    // MARK: Relationships by ID

    /// `RELATE`: adds members to a to-many (inverses kept in step by the store).
    public func add<R: KeelObject, T: KeelObject>(_ members: [KeelID<T>], to relationship: ToManyKey<R, T>, of id: KeelID<R>) async throws(KeelError) {
        try await backend.relate(id.text, relationship: relationship.name, add: members.map(\.text), remove: [])
    }

    /// `RELATE`: removes members from a to-many.
    public func remove<R: KeelObject, T: KeelObject>(_ members: [KeelID<T>], from relationship: ToManyKey<R, T>, of id: KeelID<R>) async throws(KeelError) {
        try await backend.relate(id.text, relationship: relationship.name, add: [], remove: members.map(\.text))
    }

    /// `UPDATE` of one to-one: points it at `target` (nil: clears it).
    public func set<R: KeelObject, T: KeelObject>(_ relationship: ToOneKey<R, T>, of id: KeelID<R>, to target: KeelID<T>?) async throws(KeelError) {
        try await backend.update(id.text, values: [relationship.path.joined(separator: "."): target.wire])
    }

    // MARK: The context

    /// `SAVE`: writes every pending change atomically (into the parent, for a child context).
    /// `VALIDATION`, `DENY`, `CONSTRAINT` or `CONFLICT` write nothing and keep the changes
    /// pending (`KeelError.validationFailures`, `.conflicts`).
    @discardableResult
    public func save() async throws(KeelError) -> KeelSaveResult {
        try KeelSaveResult(try await backend.save())
    }

    /// `ROLLBACK`: drops every pending change.
    public func rollback() async throws(KeelError) {
        try await backend.rollback()
    }

    /// `REFRESH`: the next read sees other contexts' saves; pending changes are kept.
    public func refresh() async throws(KeelError) {
        try await backend.refresh()
    }

    /// `CHANGES`: what a save would write.
    public func changes() async throws(KeelError) -> KeelChanges {
        try KeelChanges(try await backend.changes())
    }

    /// Whether the context has pending changes.
    public var hasChanges: Bool {
        get async throws(KeelError) { try await changes().hasChanges }
    }

    /// A child context: it reads this context's current state (pending changes included) and
    /// saves into it, not into the store.
    public func newChildContext(mergePolicy: MergePolicy = .error, name: String? = nil) async throws(KeelError) -> KeelContext {
        let backend = try await backend.openContext(
            name: name ?? store.nextContextName("child"), child: true, mergePolicy: mergePolicy.rawValue)
        return KeelContext(backend: backend, core: store)
    }

    /// Ends the context (its pending changes are dropped). The main context cannot be closed.
    public func close() async {
        await backend.close()
    }

    static func texts(_ json: JSON) -> [String] {
        (json.arrayValue ?? []).compactMap(\.stringValue)
    }
}

/// `SAVE`'s reply.
public struct KeelSaveResult: Sendable, Hashable {
    public let inserted: Int
    public let updated: Int
    public let deleted: Int
    /// The save's transaction number; nil when there was nothing to save (or for a child context).
    public let transaction: Int64?

    init(_ json: JSON) throws(KeelError) {
        func count(_ key: String) throws(KeelError) -> Int {
            guard let n = json[key]?.intValue else { throw KeelError(.type, "SAVE's reply lacks \"\(key)\": \(json.serialized())") }
            return Int(n)
        }
        inserted = try count("inserted")
        updated = try count("updated")
        deleted = try count("deleted")
        transaction = json["txn"]?.intValue
    }
}

/// `CHANGES`' reply: the objects a save would insert, update and delete.
public struct KeelChanges: Sendable, Hashable {
    public let hasChanges: Bool
    public let inserted: [KeelObjectID]
    public let updated: [KeelObjectID]
    public let deleted: [KeelObjectID]

    init(_ json: JSON) throws(KeelError) {
        func ids(_ key: String) throws(KeelError) -> [KeelObjectID] {
            var out: [KeelObjectID] = []
            for item in json[key]?.arrayValue ?? [] { out.append(try KeelObjectID(parsing: item, "CHANGES' \(key)")) }
            return out
        }
        hasChanges = json["hasChanges"]?.boolValue ?? false
        inserted = try ids("inserted")
        updated = try ids("updated")
        deleted = try ids("deleted")
    }
}

/// How a to-many's members changed, as RELATE removes and adds. Unordered: the members gone and
/// the members new. Ordered (RELATE appends): members kept in their order with new ones at the
/// end are a plain remove + add; otherwise everything from the first position where the lists
/// part is removed and added again, in the new order.
struct MemberEdit {
    var add: [String] = []
    var remove: [String] = []

    init(before: [String], after: [String], ordered: Bool) {
        let afterSet = Set(after)
        let beforeSet = Set(before)
        remove = before.filter { !afterSet.contains($0) }
        add = after.filter { !beforeSet.contains($0) }
        guard ordered else { return }
        let kept = before.filter(afterSet.contains)
        if Array(after.prefix(kept.count)) == kept { return }
        let common = zip(kept, after).prefix { $0 == $1 }.count
        let moved = Array(after[common...])
        let movedSet = Set(moved)
        remove = before.filter { !afterSet.contains($0) || movedSet.contains($0) }
        add = moved
    }
}
