// Saving a context's change set: conflicts against the current state, resolution by merge
// policy per property, replay of the change log through GraphRules (so inverses and delete
// rules apply to what is stored now), upserts on unique keys, then the shared pipeline
// (ObjectStore+Commit.swift). Exact rules: Docs/Contexts.md, "Saving".

import KeelStorage

/// An object changed or deleted by another save since the context's snapshot.
struct SaveConflict {
    var id: ObjectID
    /// The version the context's snapshot had (nil: the context did not read it — a target
    /// of a relationship operation that is gone now).
    var snapshotVersion: UInt64?
    /// The stored version now (nil: deleted since).
    var storeVersion: UInt64?
    /// Fields whose stored value differs from the snapshot's.
    var storeChanged: Set<Int>
}

extension ObjectStore {
    /// Saves a context's changes atomically (across stores too) and durably. Fails with CONFLICT
    /// (policy `error`), VALIDATION, DENY, CONSTRAINT, TYPE, NOT_FOUND or BAD_REQUEST and then
    /// writes nothing.
    public func save(_ changes: ChangeSet, mergePolicy: MergePolicy = .error) throws(KeelError) -> SaveResult {
        try save(changes, mergePolicy: mergePolicy, committed: {})
    }

    /// As `save(_:mergePolicy:)`; `committed` runs once the save has committed, before it waits
    /// for durability and runs the automatic checkpoint (`ContextStore`). An empty change set
    /// commits nothing and calls it at once. A single-store save may run in a group led by
    /// another saver's thread (ObjectStore+SaveGroup.swift): `committed` then runs on that thread
    /// while this call waits, so it must not save or block on this thread's work.
    public func save(_ changes: ChangeSet, mergePolicy: MergePolicy, committed: () -> Void) throws(KeelError) -> SaveResult {
        try save(changes, mergePolicy: mergePolicy, committed: committed, wakeUp: nil, durable: { _ in false })
    }

    /// As `save(_:mergePolicy:committed:)`; `durable` runs with the result once the save is
    /// durable, before this call returns (not when it fails). In a save group led by another
    /// saver it runs on the leader's thread before the leader lets this one go on (so the
    /// daemon's reply goes out first), and must therefore not touch what this thread works on
    /// (the saving context); it returns whether this thread may then sleep on until `wakeUp`, its
    /// thread's own wake-up, is posted for other work (ObjectStore+SaveGroup.swift). Otherwise it
    /// runs on this thread and its answer is ignored.
    package func save(
        _ changes: ChangeSet, mergePolicy: MergePolicy, committed: () -> Void, wakeUp: ThreadWakeUp?,
        durable: (SaveResult) -> Bool
    ) throws(KeelError) -> SaveResult {
        if changes.isEmpty {
            committed()
            let result = SaveResult(saveID: nil)
            _ = durable(result)
            return result
        }
        // The stores the save reads or writes: those of its objects (a relationship never joins
        // two configurations, so their targets are in the same stores). Gathered into a set only
        // when there are several (a single-store save, the usual one, needs none).
        var first: Int?
        var touched: Set<Int> = []
        func note(_ entity: EntityID) throws(KeelError) {
            try checkEntity(entity)
            let store = storeIndex(of: entity)
            guard let home = first else {
                first = store
                return
            }
            if store != home {
                if touched.isEmpty { touched.insert(home) }
                touched.insert(store)
            }
        }
        for c in changes.changes { try note(c.object.entity) }
        for id in changes.originals.keys { try note(id.entity) }
        let apply = { (session: SaveSession, marks: [UInt64]) throws(KeelError) -> [ObjectID: ObjectID] in
            var replay = SaveReplay(session: session, policy: mergePolicy, reservedMarks: marks)
            try replay.run(changes)
            return replay.merged
        }
        // A save of one store shares a transaction with the others queued for it (save groups,
        // ObjectStore+SaveGroup.swift); a multi-store save runs alone.
        if touched.isEmpty, let home = first {
            return try performGroupedSave(home: home, onCommit: committed, wakeUp: wakeUp, onDurable: durable, apply)
        }
        let result = try performSave(stores: touched, onCommit: committed, apply)
        _ = durable(result)
        return result
    }

    func checkEntity(_ entity: EntityID) throws(KeelError) {
        guard entity.index < model.entities.count else {
            throw KeelError(.noSuchEntity, "no entity #\(entity.rawValue) in model \(model.name)")
        }
    }
}

/// One save's replay of a change log onto a SaveSession.
struct SaveReplay {
    let session: SaveSession
    let policy: MergePolicy
    let reservedMarks: [UInt64]
    var conflicts: [ObjectID: SaveConflict] = [:]
    /// Objects inserted by this change set.
    var insertedHere: Set<ObjectID> = []
    var merged: [ObjectID: ObjectID] = [:]
    var model: Model { session.model }

    init(session: SaveSession, policy: MergePolicy, reservedMarks: [UInt64]) {
        self.session = session
        self.policy = policy
        self.reservedMarks = reservedMarks
    }

    /// Saves of more changes than this reserve their sets' room up front.
    static let reserveAbove = 64

    mutating func run(_ changes: ChangeSet) throws(KeelError) {
        session.entries.reserveCapacity(changes.changes.count + changes.originals.count)
        // Reserved only for a large save: `reserveCapacity` of a set or dictionary runs unspecialised
        // (its types looked up at run time), which costs a small save more than growing would.
        if changes.changes.count > Self.reserveAbove {
            insertedHere.reserveCapacity(changes.changes.count)
            session.rowIndex.reserveCapacity(changes.changes.count + changes.originals.count)
        }
        for c in changes.changes {
            switch c {
            case .insert(let id, _), .insertRow(let id, _): insertedHere.insert(id)
            default: continue
            }
        }
        try detectConflicts(changes)
        if policy == .error, !conflicts.isEmpty { throw conflictError() }
        if policy == .overwrite { try restoreOriginals(changes) }
        for c in changes.changes where try keep(c) { try apply(c) }
        if policy == .objectTrumps || policy == .storeTrumps {
            merged = try Upsert.run(session, policy: policy, insertedHere: insertedHere)
        }
    }

    // MARK: Conflicts

    mutating func detectConflicts(_ changes: ChangeSet) throws(KeelError) {
        for (id, original) in changes.originals {
            try checkID(id)
            guard let current = try session.entry(id).original else {
                conflicts[id] = SaveConflict(id: id, snapshotVersion: original.version, storeVersion: nil, storeChanged: [])
                continue
            }
            guard current.version != original.version else { continue }
            var changed: Set<Int> = []
            for f in current.values.indices where f >= original.values.count || current.values[f] != original.values[f] {
                changed.insert(f)
            }
            conflicts[id] = SaveConflict(id: id, snapshotVersion: original.version, storeVersion: current.version, storeChanged: changed)
        }
        // Targets of relationship operations that are gone from the store.
        var checked: Set<ObjectID> = []
        var last: ObjectID?  // inserts into one department name it again and again
        func check(_ t: ObjectID) throws(KeelError) {
            if t == last { return }
            last = t
            // `checked` first: a target seen before (a department named by every tenth insert)
            // costs one lookup.
            guard checked.insert(t).inserted, !insertedHere.contains(t), conflicts[t] == nil else { return }
            try checkID(t)
            if try session.entry(t).original == nil {
                conflicts[t] = SaveConflict(id: t, snapshotVersion: nil, storeVersion: nil, storeChanged: [])
            }
        }
        func check(_ v: Value) throws(KeelError) {
            switch v {
            case .object(let t): try check(t)
            case .objects(let ts): for t in ts { try check(t) }
            default: break
            }
        }
        for c in changes.changes {
            switch c {
            case .insert(_, let values): for v in values.values { try check(v) }
            case .insertRow(_, let row): for v in row where !v.isNull { try check(v) }
            case .set(_, _, let v): try check(v)
            case .add(_, _, let members, _): for t in members { try check(t) }
            case .remove, .delete: break
            }
        }
    }

    func checkID(_ id: ObjectID) throws(KeelError) {
        guard id.entity.index < model.entities.count else {
            throw KeelError(.noSuchEntity, "no entity #\(id.entity.rawValue) in model \(model.name)")
        }
    }

    /// CONFLICT, bounded like every error that lists problems (ProblemReport): the first 100
    /// conflicts in ID order in `details.conflicts`, all of them counted in `conflictCount`,
    /// the first that fit named in the message.
    func conflictError() -> KeelError {
        let list = conflicts.values.sorted { $0.id < $1.id }
        var report = ProblemReport()
        for c in list {
            report.add {
                let name = c.id.text(in: model)
                let entry: JSON = [
                    "object": .string(name), "snapshotVersion": c.snapshotVersion.map { .int(Int64($0)) } ?? .null,
                    "storeVersion": c.storeVersion.map { .int(Int64($0)) } ?? .null,
                ]
                guard let now = c.storeVersion else { return (entry, "\(name) (deleted since the snapshot)") }
                return (entry, "\(name) (version \(c.snapshotVersion.map(String.init) ?? "?") → \(now))")
            }
        }
        return KeelError(
            .conflict, "\(list.count) object\(list.count == 1 ? "" : "s") changed since the snapshot: \(report.listing(separator: ", ", limit: 5))",
            details: report.details("conflicts", countKey: "conflictCount"))
    }

    /// `overwrite`: the context's whole object wins, so every field the store changed since the
    /// snapshot goes back to the snapshot's value first (the context's own changes follow).
    func restoreOriginals(_ changes: ChangeSet) throws(KeelError) {
        var editor = session
        for (id, c) in conflicts.sorted(by: { $0.key < $1.key }) where c.storeVersion != nil {
            guard let original = changes.originals[id] else { continue }
            let entity = model[id.entity]
            for f in c.storeChanged.sorted() where f < original.values.count {
                switch entity.properties[f] {
                case .attribute(let a) where !a.isTransient:
                    try editor.write(id, field: f, value: original.values[f])
                case .relationship(let r) where !r.isToMany:
                    let target = original.values[f].objectID
                    let live = try target.map { t throws(KeelError) in try session.exists(t) } ?? true
                    try GraphRules.setToOne(&editor, id, field: f, to: live ? target : nil)
                default: continue
                }
            }
        }
    }

    // MARK: Replay

    /// Whether a change survives the merge policy (Docs/Contexts.md, "Saving").
    func keep(_ c: Change) throws(KeelError) -> Bool {
        guard let conflict = conflicts[c.object] else { return true }
        if conflict.storeVersion == nil { return false }  // deleted in the store: stays deleted
        switch policy {
        case .error, .objectTrumps, .overwrite: return true
        case .rollback: return false
        case .storeTrumps:
            switch c {
            case .set(_, let field, _): return !conflict.storeChanged.contains(field)
            case .delete: return false
            default: return true
            }
        }
    }

    /// Drops targets that no longer exist (a conflict under every policy but `error`, which has
    /// already failed).
    func live(_ ids: [ObjectID]) throws(KeelError) -> [ObjectID] {
        var out: [ObjectID] = []
        for id in ids where try session.exists(id) { out.append(id) }
        return out
    }

    mutating func apply(_ c: Change) throws(KeelError) {
        var editor = session
        switch c {
        case .insert(let id, let values):
            try checkInsert(id)
            try insert(id, values)
        case .insertRow(let id, let row):
            try checkInsert(id)
            guard row.count == session.layout.insertKinds[id.entity.index].count else {
                throw KeelError(
                    .badRequest, "the row of \(id.text(in: model)) has \(row.count) values; \(model[id.entity].name) has \(model[id.entity].properties.count) properties")
            }
            try insert(id, row: row)
        case .set(let id, let field, let value):
            guard try session.exists(id) else { throw notFound(id) }
            try set(id, field, value)
        case .add(let id, let field, let members, let at):
            guard try session.exists(id) else { throw notFound(id) }
            try GraphRules.add(&editor, id, field: field, members: try live(members), at: at)
        case .remove(let id, let field, let members):
            guard try session.exists(id) else { throw notFound(id) }
            try GraphRules.remove(&editor, id, field: field, members: members)
        case .delete(let id):
            guard try session.exists(id) else {
                if insertedHere.contains(id) { throw notFound(id) }
                return  // already gone (deleted by a cascade earlier in this log)
            }
            let outcome = try GraphRules.delete(&editor, id)
            session.denials.append(contentsOf: outcome.denials)
        }
    }

    /// An inserted ID must be of a concrete entity and handed out by this store.
    func checkInsert(_ id: ObjectID) throws(KeelError) {
        let entity = model[id.entity]
        guard !entity.isAbstract else {
            throw KeelError(.badRequest, "\(entity.name) is abstract: insert one of its sub-entities")
        }
        guard id.number <= reservedMarks[id.entity.index] else {
            throw KeelError(.badRequest, "\(id.text(in: model)) was not handed out by this store (use newObjectID)")
        }
    }

    /// A new object from values by field: laid out as a row (`insert(_:row:)`); a field the
    /// entity does not have goes through `set`, which reports it.
    func insert(_ id: ObjectID, _ values: [Int: Value]) throws(KeelError) {
        var row = [Value](repeating: .null, count: session.layout.insertKinds[id.entity.index].count)
        var unknown: [(field: Int, value: Value)] = []
        for (field, value) in values {
            if field >= 0, field < row.count { row[field] = value } else { unknown.append((field, value)) }
        }
        try insert(id, row: row, unknown: unknown)
    }

    /// A new object: attributes and to-ones whose inverse is an unordered to-many go straight
    /// into the row (and the target's link tree), in one write of the row; every other non-null
    /// field (to-many, one-to-one, ordered inverse, a value of the wrong shape) and every
    /// `unknown` one then goes through `set`, in field order, exactly as it would without this path.
    func insert(_ id: ObjectID, row given: [Value], unknown: [(field: Int, value: Value)] = []) throws(KeelError) {
        let layout = session.layout
        let kinds = layout.insertKinds[id.entity.index]
        var row = given
        var rest = unknown
        var linked: [Int] = []
        for field in kinds.indices {
            switch kinds[field] {
            case .attribute: continue
            case .transient: row[field] = .null
            case .toOneWithUnorderedInverse(let destination, _):
                switch row[field] {
                case .null: continue
                case .object(let target) where target.entity.index < layout.kindOf.count && layout.kindOf[target.entity.index][destination]:
                    // A target gone from the store is dropped (a conflict), as `set` does.
                    if try session.exists(target) {
                        linked.append(field)
                    } else {
                        row[field] = .null
                    }
                case let value:
                    rest.append((field, value))  // `set` reports the wrong shape or entity
                    row[field] = .null
                }
            case .other:
                if case .null = row[field] { continue }
                rest.append((field, row[field]))
                row[field] = .null
            }
        }
        try session.insertObject(id, values: row)
        for field in linked {
            guard case .toOneWithUnorderedInverse(_, let inverseField) = kinds[field], case .object(let target) = row[field] else { continue }
            try session.link(target, field: inverseField, member: id, at: nil)
        }
        guard !rest.isEmpty else { return }
        if rest.count > 1 { rest.sort { $0.field < $1.field } }
        for (field, value) in rest { try set(id, field, value) }
    }

    func notFound(_ id: ObjectID) -> KeelError {
        KeelError(.notFound, "no object \(id.text(in: model)) (it does not exist or is deleted)")
    }

    /// Sets one field: attributes directly (transient ones are never stored), to-one through
    /// GraphRules (inverse kept in step), a to-many to exactly the given members.
    func set(_ id: ObjectID, _ field: Int, _ value: Value) throws(KeelError) {
        var editor = session
        let entity = model[id.entity]
        guard field >= 0, field < entity.properties.count else {
            throw KeelError(.noSuchProperty, "\(entity.name) has no property #\(field)")
        }
        switch entity.properties[field] {
        case .attribute(let a):
            if a.isTransient { return }
            try session.write(id, field: field, value: value)
        case .relationship(let r) where !r.isToMany:
            switch value {
            case .null: try GraphRules.setToOne(&editor, id, field: field, to: nil)
            case .object(let target):
                guard try session.exists(target) else { return }  // gone from the store (a conflict)
                try GraphRules.setToOne(&editor, id, field: field, to: target)
            default:
                throw KeelError(.type, "\(entity.name).\(r.name) takes an object ID or null")
            }
        case .relationship(let r):
            let wanted: [ObjectID]
            switch value {
            case .null: wanted = []
            case .objects(let ids): wanted = try live(ids)
            default: throw KeelError(.type, "\(entity.name).\(r.name) takes a list of object IDs")
            }
            let current = try session.members(of: id, field: field)
            let keep = Set(wanted)
            let gone = current.filter { !keep.contains($0) }
            if !gone.isEmpty { try GraphRules.remove(&editor, id, field: field, members: gone) }
            let have = Set(current)
            let new = wanted.filter { !have.contains($0) }
            if r.isOrdered {
                // Exactly the given order: re-add every member at its position.
                for (i, m) in wanted.enumerated() { try GraphRules.add(&editor, id, field: field, members: [m], at: i) }
            } else if !new.isEmpty {
                try GraphRules.add(&editor, id, field: field, members: new, at: nil)
            }
        }
    }
}
