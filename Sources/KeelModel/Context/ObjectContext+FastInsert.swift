// The common INSERT, made cheap: typed values that are all stored attributes of a fitting type
// and to-ones whose inverse is an unordered to-many (an employee and its department). Each
// entity's names are resolved once per context (`InsertPlan`), the values are checked without
// sorting or building inputs, and the row is written whole: the same overlay state, log entry and
// journal as the general path (ObjectContext+Commands.swift), which runs instead — and reports
// the error — whenever anything is out of the ordinary (an unknown name, a value that does not
// fit or needs converting, a missing target, a transient, a to-many, any other relationship).
// The daemon's wire values (JSON) take the same path once each is decoded as the general path
// decodes it (`fastInsert(_:wire:)`; Performance.md, round `savecpu`).

import Collections

/// Per entity: how the fast insert treats each property name. A class: every insert reads it,
/// and a struct of arrays would be retained field by field on each read.
final class InsertPlan {
    enum Kind {
        /// A stored attribute of this type.
        case attribute(AttributeType)
        /// A to-one whose inverse is the unordered to-many `inverseField` of `destination`.
        case toOne(destination: EntityID, inverseField: Int)
    }

    let fieldCount: Int
    /// The names the fast path takes, and for each its field and kind (same positions).
    let names: [String]
    let entries: [(field: Int, kind: Kind)]
    /// For an entity with many such names: position in `names` by name.
    let byName: [String: Int]
    /// Stored attributes with a default value, for the ones the insert leaves out.
    let defaults: [(field: Int, value: Value)]
    /// A transient attribute has a default: the general path handles that.
    let hasTransientDefault: Bool
    /// A row of nulls and a "given" mark per field, copied by each insert: copying an array costs
    /// less than `Array(repeating:count:)`, whose buffer's type is looked up at run time on every
    /// call.
    let nullRow: [Value]
    let noneGiven: [Bool]

    init(_ entity: Entity, model: Model) {
        var names: [String] = []
        var entries: [(field: Int, kind: Kind)] = []
        var defaults: [(field: Int, value: Value)] = []
        var transientDefault = false
        for (field, p) in entity.properties.enumerated() {
            switch p {
            case .attribute(let a):
                if a.isTransient {
                    if a.defaultValue != nil { transientDefault = true }
                    continue
                }
                names.append(a.name)
                entries.append((field, .attribute(a.type)))
                if let d = a.defaultValue { defaults.append((field, d)) }
            case .relationship(let r) where !r.isToMany:
                let destination = model[r.destination]
                guard let name = r.inverse, let inverseField = destination.field(named: name),
                    case .relationship(let inverse) = destination.properties[inverseField], inverse.isToMany, !inverse.isOrdered
                else { continue }
                names.append(r.name)
                entries.append((field, .toOne(destination: r.destination, inverseField: inverseField)))
            case .relationship:
                continue
            }
        }
        self.fieldCount = entity.properties.count
        self.names = names
        self.entries = entries
        self.byName = names.count > Self.linearLookupLimit ? Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) }) : [:]
        self.defaults = defaults
        self.hasTransientDefault = transientDefault
        self.nullRow = Array(repeating: .null, count: entity.properties.count)
        self.noneGiven = Array(repeating: false, count: entity.properties.count)
    }

    /// Up to this many names are searched in order: comparing a few short names (stored inline,
    /// compared as words) costs less than hashing one into the dictionary.
    static let linearLookupLimit = 16

    /// The field and kind of `name`, nil when the fast path does not take it.
    @inline(__always)
    func entry(_ name: String) -> (field: Int, kind: Kind)? {
        if names.count > Self.linearLookupLimit { return byName[name].map { entries[$0] } }
        for i in names.indices where names[i] == name { return entries[i] }
        return nil
    }

    /// The value as `ValueFit.check` would return it, when it fits without conversion; nil when
    /// the general path must decide (a conversion, a range to check, an error to report).
    static func fitting(_ value: Value, _ type: AttributeType) -> Value? {
        switch (type, value) {
        case (_, .null): return .null
        case (.int16, .int(let i)): return Int16(exactly: i) == nil ? nil : value
        case (.int32, .int(let i)): return Int32(exactly: i) == nil ? nil : value
        case (.int64, .int), (.double, .double), (.decimal, .decimal), (.string, .string), (.bool, .bool),
            (.date, .date), (.binary, .binary), (.uuid, .uuid), (.uri, .uri), (.json, .json):
            return value
        default: return nil
        }
    }
}

extension ObjectContext {
    /// The entity's plan, made once per context.
    private func insertPlan(_ entity: Entity) -> InsertPlan {
        let e = entity.id.index
        if insertPlans.count <= e { insertPlans.append(contentsOf: repeatElement(nil, count: e + 1 - insertPlans.count)) }
        if let plan = insertPlans[e] { return plan }
        let plan = InsertPlan(entity, model: model)
        insertPlans[e] = plan
        return plan
    }

    /// The fast INSERT of wire values (the daemon's `INSERT`), or nil (having changed nothing and
    /// taken no ID) when the general path must run: each value is decoded exactly as the general
    /// path decodes it (`ValueCodec.decode` for an attribute — its result is what that path
    /// stores —, `Entity/N` or null for a to-one) and then taken as the typed fast path takes a
    /// value; anything that does not decode, or that the plan does not take, goes to the general
    /// path, which reports it.
    func fastInsert(_ entity: Entity, wire members: OrderedDictionary<String, JSON>) throws(KeelError) -> ObjectID? {
        let plan = insertPlan(entity)
        guard !plan.hasTransientDefault else { return nil }
        // Structs, not tuples: an array of tuples looks its type up at run time when allocated.
        struct Named {
            let name: String
            let value: Value
        }
        var values: [Named] = []
        values.reserveCapacity(members.count)
        for (name, json) in members {
            guard let (_, kind) = plan.entry(name) else { return nil }
            switch kind {
            case .attribute(let type):
                guard let value = try? ValueCodec.decode(json, as: type, owner: name) else { return nil }
                values.append(Named(name: name, value: value))
            case .toOne:
                switch json {
                case .null: values.append(Named(name: name, value: .null))
                case .string(let text):
                    guard let id = model.objectID(text) else { return nil }
                    values.append(Named(name: name, value: .object(id)))
                default: return nil
                }
            }
        }
        return try fastInsert(entity, plan: plan, values.lazy.map { (key: $0.name, value: $0.value) }, decoded: true)
    }

    /// The fast INSERT, or nil (having changed nothing and taken no ID) when the general path
    /// must run. Only a to-one target makes it read (and take the context's snapshot, if it has
    /// none): an insert of attributes alone reads nothing.
    func fastInsert(_ entity: Entity, _ values: [String: Value]) throws(KeelError) -> ObjectID? {
        let plan = insertPlan(entity)
        guard !plan.hasTransientDefault else { return nil }
        return try fastInsert(entity, plan: plan, values, decoded: false)
    }

    /// The fast path's body. `decoded`: the attributes' values are already what the general path
    /// stores for their type (decoded from the wire), so they are taken as they are; otherwise
    /// each must fit its type without conversion (`InsertPlan.fitting`).
    private func fastInsert(
        _ entity: Entity, plan: InsertPlan, _ values: some Sequence<(key: String, value: Value)>, decoded: Bool
    ) throws(KeelError) -> ObjectID? {
        var row = plan.nullRow
        // Which fields were given (null included), when some attribute has a default.
        var given = plan.defaults.isEmpty ? [] : plan.noneGiven
        var links: [(target: ObjectID, field: Int, inverseField: Int, state: ContextOverlay.TargetState)] = []
        for (name, value) in values {
            guard let (field, kind) = plan.entry(name) else { return nil }
            switch kind {
            case .attribute(let type):
                if decoded {
                    row[field] = value
                } else {
                    guard let v = InsertPlan.fitting(value, type) else { return nil }
                    row[field] = v
                }
            case .toOne(let destination, let inverseField):
                switch value {
                case .null: break
                case .object(let target):
                    guard model[destination].includes(target.entity) else { return nil }
                    try prepare()
                    guard let state = try? overlay.targetExists(target) else { return nil }
                    row[field] = value
                    links.append((target, field, inverseField, state))
                default: return nil
                }
            }
            if !given.isEmpty { given[field] = true }
        }
        // Attributes left out take their default (a given null stays null).
        for (field, value) in plan.defaults where !given[field] { row[field] = value }
        let id = try root.newObjectID(for: entity.id)
        guard id.entity == entity.id else {
            throw KeelError(.internal, "the store gave \(id.text(in: model)) for a new \(entity.name)")
        }
        let finalRow = row
        let finalLinks = links
        try perform(reads: !links.isEmpty) { (o) throws(KeelError) in try o.applyPlainInsert(id, row: finalRow, links: finalLinks) }
        return id
    }
}

extension ContextOverlay {
    /// A new object whose row is complete (attributes, defaults and to-one targets) and whose
    /// only inverses are unordered to-manys of its targets: the state `applyInsert` leaves for
    /// the same values (row, each target's pending member, the live insert in the log).
    /// `links` carry what `targetExists` found: a remembered target whose original is recorded
    /// skips `touchOriginal`, one whose original this link records remembers it.
    mutating func applyPlainInsert(
        _ id: ObjectID, row: [Value], links: [(target: ObjectID, field: Int, inverseField: Int, state: TargetState)]
    ) throws(KeelError) {
        insertNewRow(id, values: row)
        for link in links {
            try linkMember(
                link.target, field: link.inverseField, member: id, at: nil, ordered: false,
                originalRecorded: link.state == .rememberedWithOriginal, fresh: true)
            if link.state == .remembered { rememberOriginal(link.target) }
        }
    }
}
