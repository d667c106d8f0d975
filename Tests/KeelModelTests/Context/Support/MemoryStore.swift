// A small in-memory store behind `ContextStore`, enough to test contexts before ObjectStore is
// on main: snapshots are copies of the state, saves replay the change log through GraphRules
// (as the real save does), detect conflicts by version under `error`, refuse `deny`, validate
// required attributes and numeric bounds (every failure reported at once), and write nothing on
// failure. It records every change set it receives.

import KeelModel
import Synchronization

struct LinkKey: Hashable, Sendable {
    let id: ObjectID
    let field: Int
}

struct MemoryState: Sendable {
    var rows: [ObjectID: StoredObject] = [:]
    /// To-many members (the test models have no ordered relationships).
    var links: [LinkKey: Set<ObjectID>] = [:]
    var next: [EntityID: UInt64] = [:]
    var saves: UInt64 = 0
}

final class MemoryStore: ContextStore {
    /// `.insertRow` as the `.insert` of its non-null fields (what the object store treats it as).
    static func insertAsValues(_ change: Change) -> Change {
        guard case .insertRow(let id, let row) = change else { return change }
        var values: [Int: Value] = [:]
        for (field, value) in row.enumerated() where !value.isNull { values[field] = value }
        return .insert(id, values: values)
    }

    let model: Model
    /// Guards the stored state, the change sets received and the open snapshot count.
    private let guarded: Mutex<(state: MemoryState, received: [(ChangeSet, MergePolicy)], openSnapshots: Int)>

    init(model: Model) {
        self.model = model
        self.guarded = Mutex((MemoryState(), [], 0))
    }

    var state: MemoryState { guarded.withLock { $0.state } }
    var received: [(ChangeSet, MergePolicy)] { guarded.withLock { $0.received } }
    var openSnapshots: Int { guarded.withLock { $0.openSnapshots } }

    func contextSnapshot() throws(KeelError) -> any ContextSnapshot {
        let state = guarded.withLock {
            $0.openSnapshots += 1
            return $0.state
        }
        return MemorySnapshot(model: model, state: state, store: self)
    }

    func snapshotClosed() { guarded.withLock { $0.openSnapshots -= 1 } }

    func newObjectID(for entity: EntityID) throws(KeelError) -> ObjectID {
        guarded.withLock {
            let n = $0.state.next[entity, default: 0] + 1
            $0.state.next[entity] = n
            return ObjectID(entity: entity, number: n)
        }
    }

    func save(_ changes: ChangeSet, mergePolicy: MergePolicy) throws(KeelError) -> SaveResult {
        let outcome: Result<SaveResult, KeelError> = guarded.withLock { guarded in
            guarded.received.append((changes, mergePolicy))
            do throws(KeelError) {
                let (state, result) = try apply(changes, mergePolicy: mergePolicy, to: guarded.state)
                guarded.state = state
                return .success(result)
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    private func apply(
        _ changes: ChangeSet, mergePolicy: MergePolicy, to state: MemoryState
    ) throws(KeelError) -> (MemoryState, SaveResult) {
        var conflicts: [JSON] = []
        for (id, original) in changes.originals.sorted(by: { $0.key < $1.key }) {
            let current = state.rows[id]
            guard current?.version != original.version else { continue }
            conflicts.append([
                "object": .string(id.text(in: model)), "snapshotVersion": .int(Int64(original.version)),
                "storeVersion": current.map { .int(Int64($0.version)) } ?? .null,
            ])
        }
        if !conflicts.isEmpty && mergePolicy == .error {
            throw KeelError(.conflict, "\(conflicts.count) conflict(s)", details: ["conflicts": .array(conflicts)])
        }
        var editor = MemoryEditor(model: model, state: state)
        var inserted: [ObjectID] = []
        var deleted: [ObjectID] = []
        var denials: [DenyFailure] = []
        for change in changes.changes.map(Self.insertAsValues) {
            switch change {
            case .insertRow: preconditionFailure("insertAsValues rewrote it")
            case .insert(let id, let values):
                let entity = model[id.entity]
                var row = [Value](repeating: .null, count: entity.properties.count)
                var toOnes: [(Int, ObjectID)] = []
                for (field, value) in values {
                    if case .relationship = entity.properties[field], let target = value.objectID {
                        toOnes.append((field, target))
                    } else {
                        row[field] = value
                    }
                }
                editor.state.rows[id] = StoredObject(id: id, version: 0, values: row)
                inserted.append(id)
                for (field, target) in toOnes { try GraphRules.setToOne(&editor, id, field: field, to: target) }
            case .set(let id, let field, let value):
                guard try editor.exists(id) else { throw KeelError(.notFound, "no \(id.text(in: model))") }
                if case .relationship = model[id.entity].properties[field] {
                    try GraphRules.setToOne(&editor, id, field: field, to: value.objectID)
                } else {
                    try editor.write(id, field: field, value: value)
                }
            case .add(let id, let field, let members, let at):
                try GraphRules.add(&editor, id, field: field, members: members, at: at)
            case .remove(let id, let field, let members):
                try GraphRules.remove(&editor, id, field: field, members: members)
            case .delete(let id):
                guard try editor.exists(id) else { continue }
                let (gone, denied) = try GraphRules.delete(&editor, id)
                deleted.append(contentsOf: gone)
                denials.append(contentsOf: denied)
            }
        }
        // As the object store: a deny counts the targets still there at the end of the save.
        denials = denials.filter { $0.targets.contains { editor.state.rows[$0] != nil } }
        if !denials.isEmpty {
            throw KeelError(
                .deny, "\(denials.count) delete(s) denied",
                details: .array(denials.map { ["$id": .string($0.object.text(in: model)), "relationship": .string($0.relationship)] }))
        }
        var failures: [JSON] = []
        let checked = Set(inserted).union(editor.touched).filter { editor.state.rows[$0] != nil }
        for id in checked.sorted() {
            guard let row = editor.state.rows[id] else { continue }
            for (field, a) in model[id.entity].attributes where !a.isTransient {
                let value = row.values[field]
                let failure: String? =
                    if value.isNull { a.isOptional ? nil : "required" } else if case .int(let i) = value,
                        case .int(let lo)? = a.minValue, i < lo
                    {
                        "minValue"
                    } else if case .int(let i) = value, case .int(let hi)? = a.maxValue, i > hi { "maxValue" } else { nil }
                if let failure {
                    failures.append(["$id": .string(id.text(in: model)), "property": .string(a.name), "rule": .string(failure)])
                }
            }
        }
        if !failures.isEmpty {
            throw KeelError(.validation, "\(failures.count) validation failure(s)", details: .array(failures))
        }
        var next = editor.state
        next.saves += 1
        let deletedSet = Set(deleted)
        var updated: [ObjectID] = []
        for id in Set(inserted).union(editor.touched) where !deletedSet.contains(id) {
            guard next.rows[id] != nil else { continue }
            next.rows[id]?.version += 1
            if state.rows[id] != nil { updated.append(id) }
        }
        let result = SaveResult(
            saveID: SaveID(rawValue: next.saves), inserted: inserted.filter { !deletedSet.contains($0) }.sorted(),
            updated: updated.sorted(), deleted: deleted.filter { state.rows[$0] != nil }.sorted())
        return (next, result)
    }
}

/// The store's state edited by GraphRules during a save.
struct MemoryEditor: GraphEditor {
    let model: Model
    var state: MemoryState
    var touched: Set<ObjectID> = []

    func exists(_ id: ObjectID) throws(KeelError) -> Bool { state.rows[id] != nil }

    func value(of id: ObjectID, field: Int) throws(KeelError) -> Value {
        guard let row = state.rows[id] else { throw KeelError(.notFound, "no \(id.text(in: model))") }
        return row.values[field]
    }

    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID] {
        (state.links[LinkKey(id: id, field: field)] ?? []).sorted()
    }

    mutating func write(_ id: ObjectID, field: Int, value: Value) throws(KeelError) {
        guard state.rows[id] != nil else { throw KeelError(.notFound, "no \(id.text(in: model))") }
        state.rows[id]?.values[field] = value
        touched.insert(id)
    }

    mutating func link(_ id: ObjectID, field: Int, member: ObjectID, at position: Int?) throws(KeelError) {
        state.links[LinkKey(id: id, field: field), default: []].insert(member)
        touched.insert(id)
    }

    mutating func unlink(_ id: ObjectID, field: Int, member: ObjectID) throws(KeelError) {
        state.links[LinkKey(id: id, field: field)]?.remove(member)
        touched.insert(id)
    }

    mutating func destroy(_ id: ObjectID) throws(KeelError) {
        state.rows[id] = nil
        for (field, r) in model[id.entity].relationships where r.isToMany {
            state.links[LinkKey(id: id, field: field)] = nil
        }
    }
}

final class MemorySnapshot: ContextSnapshot {
    let model: Model
    let state: MemoryState
    let store: MemoryStore

    init(model: Model, state: MemoryState, store: MemoryStore) {
        self.model = model
        self.state = state
        self.store = store
    }

    func close() { store.snapshotClosed() }

    func object(_ id: ObjectID) throws(KeelError) -> StoredObject? { state.rows[id] }

    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID] {
        (state.links[LinkKey(id: id, field: field)] ?? []).sorted()
    }

    func scan(
        _ entity: EntityID, includeSubentities: Bool, _ body: (StoredObject) throws(KeelError) -> Bool
    ) throws(KeelError) {
        let family = includeSubentities ? Set(model[entity].family) : [entity]
        for id in state.rows.keys.filter({ family.contains($0.entity) }).sorted() {
            guard let row = state.rows[id] else { continue }
            if try !body(row) { return }
        }
    }

    func count(_ entity: EntityID, includeSubentities: Bool) throws(KeelError) -> Int {
        let family = includeSubentities ? Set(model[entity].family) : [entity]
        return state.rows.keys.filter { family.contains($0.entity) }.count
    }

    func holder(of constraint: Index, values: [Value]) throws(KeelError) -> ObjectID? {
        let family = Set(model[constraint.declaredIn].family)
        return state.rows.values.first { row in family.contains(row.id.entity) && constraint.fields.map { row.values[$0] } == values }?.id
    }
}
