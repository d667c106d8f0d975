// The rules of the object graph, written once: relating objects with their inverses kept in
// step, and deleting with delete rules. A context runs them on its overlay at the moment of the
// change (so its next read sees the inverse and the cascade), and a save runs the same rules
// again on the stores' current state when it replays the context's change log — so an employee
// that another client added to a department since the snapshot is cascaded or nullified too.
//
// The editor offers raw, one-sided edits; everything two-sided happens here.

/// Raw access to a state of the graph that the rules edit.
public protocol GraphEditor {
    var model: Model { get }
    /// True when the object exists in this state (inserted, or stored and not deleted).
    func exists(_ id: ObjectID) throws(KeelError) -> Bool
    /// An attribute's value or a to-one's target (`.object`/`.null`).
    func value(of id: ObjectID, field: Int) throws(KeelError) -> Value
    /// A to-many's targets (in order when ordered).
    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID]
    /// Stores one field (attribute or to-one) of one object. No inverse logic.
    mutating func write(_ id: ObjectID, field: Int, value: Value) throws(KeelError)
    /// Adds `member` to one side of a to-many (at `position` when ordered; nil: at the end).
    /// Adding a member already there moves it when a position is given, else does nothing.
    mutating func link(_ id: ObjectID, field: Int, member: ObjectID, at position: Int?) throws(KeelError)
    /// Removes `member` from one side of a to-many; no-op when absent.
    mutating func unlink(_ id: ObjectID, field: Int, member: ObjectID) throws(KeelError)
    /// Removes the object, its row and its own side of every to-many. The rules have already
    /// detached it from every other object.
    mutating func destroy(_ id: ObjectID) throws(KeelError)
}

/// A `deny` rule that blocks a delete: the object still held `targets` through `relationship`
/// when it was deleted. A save judges it at its end: targets deleted later in the same save no
/// longer block it (Core Data validates deletes at save, whatever the order of the deletes).
public struct DenyFailure: Sendable, Hashable {
    public var object: ObjectID
    public var relationship: String
    public var targets: [ObjectID]

    public var count: Int { targets.count }
}

public enum GraphRules {
    /// Resolves a relationship field of an entity, or throws `NO_SUCH_PROPERTY` / `TYPE`.
    static func relationship(_ model: Model, _ id: ObjectID, field: Int) throws(KeelError) -> Relationship {
        let entity = model[id.entity]
        guard field >= 0, field < entity.properties.count else {
            throw KeelError(.noSuchProperty, "\(entity.name) has no property #\(field)")
        }
        guard case .relationship(let r) = entity.properties[field] else {
            throw KeelError(.type, "\(entity.name).\(entity.properties[field].name) is an attribute, not a relationship")
        }
        return r
    }

    /// The field of the inverse of `r` on the entity of `target`, if `r` has an inverse.
    static func inverseField(_ model: Model, _ r: Relationship, on target: ObjectID) -> (field: Int, relationship: Relationship)? {
        guard let name = r.inverse, let field = model[target.entity].field(named: name),
            case .relationship(let inverse) = model[target.entity].properties[field]
        else { return nil }
        return (field, inverse)
    }

    /// Throws unless `target` may be a destination of `r` and exists.
    static func checkTarget(
        _ editor: some GraphEditor, _ r: Relationship, _ source: ObjectID, _ target: ObjectID
    ) throws(KeelError) {
        let model = editor.model
        guard model[r.destination].includes(target.entity) else {
            throw KeelError(
                .type,
                "\(model[source.entity].name).\(r.name) takes \(model[r.destination].name) objects, not \(target.text(in: model))")
        }
        guard try editor.exists(target) else {
            throw KeelError(.notFound, "no object \(target.text(in: model)) (it does not exist or is deleted)")
        }
    }

    /// Sets a to-one relationship, keeping the inverse in step: the source leaves its old
    /// target's inverse, joins the new one's, and in a one-to-one the new target's previous
    /// partner is cleared.
    public static func setToOne<E: GraphEditor>(
        _ editor: inout E, _ id: ObjectID, field: Int, to target: ObjectID?
    ) throws(KeelError) {
        let model = editor.model
        let r = try relationship(model, id, field: field)
        precondition(!r.isToMany, "setToOne on a to-many relationship")
        if let target { try checkTarget(editor, r, id, target) }
        let old = try editor.value(of: id, field: field).objectID
        if old == target { return }
        if let old, try editor.exists(old), let (inverseField, inverse) = inverseField(model, r, on: old) {
            if inverse.isToMany {
                try editor.unlink(old, field: inverseField, member: id)
            } else if try editor.value(of: old, field: inverseField).objectID == id {
                try editor.write(old, field: inverseField, value: .null)
            }
        }
        try editor.write(id, field: field, value: target.map(Value.object) ?? .null)
        guard let target, let (inverseField, inverse) = inverseField(model, r, on: target) else { return }
        if inverse.isToMany {
            try editor.link(target, field: inverseField, member: id, at: nil)
        } else {
            if let partner = try editor.value(of: target, field: inverseField).objectID, partner != id,
                try editor.exists(partner), let back = model[partner.entity].field(named: r.name)
            {
                try editor.write(partner, field: back, value: .null)
            }
            try editor.write(target, field: inverseField, value: .object(id))
        }
    }

    /// Adds objects to a to-many relationship (at `position` for an ordered one), keeping the
    /// inverse in step: a member whose inverse is to-one leaves its previous owner.
    public static func add<E: GraphEditor>(
        _ editor: inout E, _ id: ObjectID, field: Int, members: [ObjectID], at position: Int?
    ) throws(KeelError) {
        let model = editor.model
        let r = try relationship(model, id, field: field)
        precondition(r.isToMany, "add on a to-one relationship")
        for member in members { try checkTarget(editor, r, id, member) }
        for (offset, member) in members.enumerated() {
            let at = position.map { $0 + offset }
            guard let (inverseField, inverse) = inverseField(model, r, on: member) else {
                try editor.link(id, field: field, member: member, at: at)
                continue
            }
            if inverse.isToMany {
                try editor.link(id, field: field, member: member, at: at)
                try editor.link(member, field: inverseField, member: id, at: nil)
            } else {
                if let owner = try editor.value(of: member, field: inverseField).objectID, owner != id,
                    try editor.exists(owner), let ownerField = model[owner.entity].field(named: r.name)
                {
                    try editor.unlink(owner, field: ownerField, member: member)
                }
                try editor.write(member, field: inverseField, value: .object(id))
                try editor.link(id, field: field, member: member, at: at)
            }
        }
    }

    /// Removes objects from a to-many relationship, keeping the inverse in step. Objects that are
    /// not members are ignored.
    public static func remove<E: GraphEditor>(
        _ editor: inout E, _ id: ObjectID, field: Int, members: [ObjectID]
    ) throws(KeelError) {
        let model = editor.model
        let r = try relationship(model, id, field: field)
        precondition(r.isToMany, "remove on a to-one relationship")
        let current = Set(try editor.members(of: id, field: field))
        for member in members where current.contains(member) {
            try editor.unlink(id, field: field, member: member)
            guard try editor.exists(member), let (inverseField, inverse) = inverseField(model, r, on: member) else { continue }
            if inverse.isToMany {
                try editor.unlink(member, field: inverseField, member: id)
            } else if try editor.value(of: member, field: inverseField).objectID == id {
                try editor.write(member, field: inverseField, value: .null)
            }
        }
    }

    /// Deletes an object with its delete rules: `cascade` deletes the destinations too
    /// (recursively), `nullify` removes the deleted objects from each destination's inverse,
    /// `noAction` leaves the destinations' references dangling, and `deny` is reported (a
    /// destination that is not itself deleted here blocks the delete; the caller decides when
    /// that fails — a context at save, a save at once). Returns every object deleted, the first
    /// one first.
    public static func delete<E: GraphEditor>(
        _ editor: inout E, _ id: ObjectID
    ) throws(KeelError) -> (deleted: [ObjectID], denials: [DenyFailure]) {
        let model = editor.model
        guard try editor.exists(id) else {
            throw KeelError(.notFound, "no object \(id.text(in: model)) (it does not exist or is deleted)")
        }
        // The cascade closure first, so nullify and deny see the whole set being deleted.
        var order: [ObjectID] = [id]
        var doomed: Set<ObjectID> = [id]
        var next = 0
        while next < order.count {
            let x = order[next]
            next += 1
            for (field, r) in model[x.entity].relationships where r.deleteRule == .cascade {
                let all = try targets(editor, x, field: field, r)
                // A department's 10,000 employees: the set grows once, not by doubling through
                // each size (still geometrically, so a long chain of single targets stays linear).
                let need = doomed.count + all.count
                if need > doomed.capacity { doomed.reserveCapacity(max(need, 2 * doomed.capacity)) }
                // One hash per target (insert first; a target that no longer exists, rare, is
                // taken out again).
                for target in all where doomed.insert(target).inserted {
                    guard try editor.exists(target) else {
                        doomed.remove(target)
                        continue
                    }
                    order.append(target)
                }
            }
        }
        var denials: [DenyFailure] = []
        for x in order {
            // A cascade's destinations that exist are all in `doomed` (the closure above put
            // them there, and nothing below deletes anything): none survives to be detached, so
            // its members are not read a second time (10,000 link entries for a department).
            for (field, r) in model[x.entity].relationships where r.deleteRule != .cascade {
                let survivors = try targets(editor, x, field: field, r).filter { !doomed.contains($0) }
                switch r.deleteRule {
                case .deny:
                    var live: [ObjectID] = []
                    for target in survivors where try editor.exists(target) { live.append(target) }
                    if !live.isEmpty { denials.append(DenyFailure(object: x, relationship: r.name, targets: live)) }
                    fallthrough
                case .nullify, .cascade:
                    for target in survivors where try editor.exists(target) {
                        guard let (inverseField, inverse) = inverseField(model, r, on: target) else { continue }
                        if inverse.isToMany {
                            try editor.unlink(target, field: inverseField, member: x)
                        } else if try editor.value(of: target, field: inverseField).objectID == x {
                            try editor.write(target, field: inverseField, value: .null)
                        }
                    }
                case .noAction:
                    break
                }
            }
        }
        for x in order { try editor.destroy(x) }
        return (order, denials)
    }

    static func targets(
        _ editor: some GraphEditor, _ id: ObjectID, field: Int, _ r: Relationship
    ) throws(KeelError) -> [ObjectID] {
        if r.isToMany { return try editor.members(of: id, field: field) }
        return try editor.value(of: id, field: field).objectID.map { [$0] } ?? []
    }
}

extension Value {
    /// The target of a to-one value, nil for `.null` (and for anything else).
    public var objectID: ObjectID? {
        if case .object(let id) = self { return id }
        return nil
    }
}
