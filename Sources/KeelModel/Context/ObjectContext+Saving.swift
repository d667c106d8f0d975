// SAVE. A root context hands its change log and originals to the store, which replays the log on
// the stores' current state (GraphRules again), resolves conflicts by the merge policy,
// validates, and writes all or nothing. A child context replays its log into its parent's
// overlay the same way, after resolving conflicts with what the parent changed meanwhile.
// After a successful save the context is clean and its next read takes a new snapshot; after a
// failed one it keeps every pending change, so the client can fix and retry.

extension ObjectContext {
    /// `SAVE`: writes every pending change (to the store, or into the parent for a child
    /// context). A context without changes saves nothing (`saveID` nil).
    @discardableResult
    public func save() throws(KeelError) -> SaveResult {
        try save(wakeUp: nil, whenDurable: { _ in false })
    }

    /// `save()`, calling `durable` with the result once the save is durable (for a child context:
    /// once it is in the parent), before this call returns and before the context has taken in
    /// its result; not at all when the save fails. An object store's save group may call it from
    /// its leader's thread while this one waits: it must not touch this context. Its answer says
    /// whether this thread may then sleep on until `wakeUp` (the thread's own) is posted for other
    /// work (`ObjectStore.save(_:mergePolicy:committed:wakeUp:durable:)`). The daemon writes the
    /// SAVE's reply there.
    @discardableResult
    package func save(wakeUp: ThreadWakeUp?, whenDurable durable: (SaveResult) -> Bool) throws(KeelError) -> SaveResult {
        switch parent {
        case .store(let store): return try saveToStore(store, wakeUp: wakeUp, durable: durable)
        case .context(let parent):
            let result = try saveToParent(parent)
            _ = durable(result)
            return result
        }
    }

    private func saveToStore(_ store: any ContextStore, wakeUp: ThreadWakeUp?, durable: (SaveResult) -> Bool) throws(KeelError) -> SaveResult {
        guard overlay.hasChanges else {
            releaseSnapshot()
            let result = SaveResult(saveID: nil)
            _ = durable(result)
            return result
        }
        let changes = try overlay.changeSet()
        // The snapshot is given back as soon as the save has committed (the context would drop it
        // right after anyway), so the checkpoint the save may run does not find it still open.
        let result: SaveResult
        // The save that takes a thread's wake-up is package API (ThreadWakeUp is not public), so it
        // cannot be a requirement of the public ContextStore; other stores are durable when they
        // return.
        if let store = store as? ObjectStore {
            result = try store.save(changes, mergePolicy: mergePolicy, committed: { releaseSnapshot() }, wakeUp: wakeUp, durable: durable)
        } else {
            result = try store.save(changes, mergePolicy: mergePolicy) { releaseSnapshot() }
            _ = durable(result)
        }
        overlay.reset(keepTransients: true)
        overlay.renameTransients(result.merged)
        releaseSnapshot()
        return result
    }

    /// Conflicts with the parent are objects the child changed or deleted whose row in the parent
    /// differs from the one the child read first (the parent changed them since, or saved and
    /// took in another client's change), or that the parent has deleted since.
    private func saveToParent(_ parent: ObjectContext) throws(KeelError) -> SaveResult {
        let summary = changes()
        guard overlay.hasChanges else { return SaveResult(saveID: nil) }
        let changeSet = try overlay.changeSet()
        let parentState = try parent.readState()
        var changedFields: [ObjectID: Set<Int>] = [:]
        var gone: Set<ObjectID> = []
        // Bounded like every error that lists problems (ProblemReport): the first 100 conflicts,
        // each with three rows, in `details.conflicts`, all of them counted in `conflictCount`.
        var conflicts = ProblemReport()
        for (id, original) in overlay.originals.sorted(by: { $0.key < $1.key }) {
            let current = try parentState.object(id)
            guard current?.values != original.values else { continue }
            if let current {
                changedFields[id] = Set(current.values.indices.filter { current.values[$0] != original.values[$0] })
            } else {
                gone.insert(id)
            }
            guard mergePolicy == .error else { continue }
            let context = conflicts.entries.count < ProblemReport.detailLimit ? try overlay.object(id) : nil
            conflicts.add {
                let name = id.text(in: model)
                let entry: JSON = [
                    "object": .string(name), "original": rowJSON(original),
                    "parent": current.map(rowJSON) ?? .null, "context": context.map(rowJSON) ?? .null,
                ]
                return (entry, current == nil ? "\(name) (deleted there)" : name)
            }
        }
        if !conflicts.isEmpty {
            throw KeelError(
                .conflict,
                "\(conflicts.count) object(s) changed in the parent context since this context read them: \(conflicts.listing(separator: ", ", limit: 5))",
                details: conflicts.details("conflicts", countKey: "conflictCount"))
        }
        let replay = changeSet.changes.compactMap { resolve($0, changedFields: changedFields, gone: gone) }
        var overwrite: [(ObjectID, Int, Value)] = []
        if mergePolicy == .overwrite {
            for id in changedFields.keys.sorted() {
                guard let row = try overlay.object(id) else { continue }
                for (field, property) in model[id.entity].properties.enumerated() {
                    switch property {
                    case .attribute(let a) where !a.isTransient: overwrite.append((id, field, row.values[field]))
                    case .relationship(let r) where !r.isToMany: overwrite.append((id, field, row.values[field]))
                    default: continue
                    }
                }
            }
        }
        let transients = overlay.transients
        try parent.perform { (o) throws(KeelError) in
            for change in replay { try Self.replay(change, into: &o) }
            for (id, field, value) in overwrite where try o.exists(id) {
                if let target = value.objectID, try !o.exists(target) { continue }
                try o.applySet(id, field: field, value: value)
            }
            for (id, values) in transients where try o.exists(id) {
                for (field, value) in values { o.setTransient(id, field: field, value: value) }
            }
        }
        overlay.reset(keepTransients: true)
        return SaveResult(saveID: nil, inserted: summary.inserted, updated: summary.updated, deleted: summary.deleted)
    }

    /// One change of the child's log under the child's merge policy (`error` never gets here with
    /// a conflict): nil drops it.
    private func resolve(_ change: Change, changedFields: [ObjectID: Set<Int>], gone: Set<ObjectID>) -> Change? {
        switch change {
        case .add(let id, let field, let members, let at):
            if gone.contains(id) { return nil }
            let kept = members.filter { !gone.contains($0) }
            return kept.isEmpty ? nil : .add(id, field: field, members: kept, at: at)
        case .remove(let id, let field, let members):
            if gone.contains(id) { return nil }
            let kept = members.filter { !gone.contains($0) }
            return kept.isEmpty ? nil : .remove(id, field: field, members: kept)
        default: break
        }
        let id = change.object
        if gone.contains(id) { return nil }
        if case .set(_, _, let value) = change, let target = value.objectID, gone.contains(target) { return nil }
        guard let fields = changedFields[id] else { return change }
        switch mergePolicy {
        case .rollback: return nil
        case .storeTrumps:
            if case .set(_, let field, _) = change, fields.contains(field) { return nil }
            return change
        case .error, .objectTrumps, .overwrite: return change
        }
    }

    /// Applies one change of a child's log to the parent's overlay (logged there in turn).
    static func replay(_ change: Change, into o: inout ContextOverlay) throws(KeelError) {
        switch change {
        case .insert(let id, let values):
            try replayInsert(id, values.sorted(by: { $0.key < $1.key }), into: &o)
        case .insertRow(let id, let row):
            try replayInsert(id, row.enumerated().filter { !$0.element.isNull }.map { ($0.offset, $0.element) }, into: &o)
        case .set(let id, let field, let value):
            try o.applySet(id, field: field, value: value)
        case .add(let id, let field, let members, let at):
            try o.applyAdd(id, field: field, members: members, at: at)
        case .remove(let id, let field, let members):
            try o.applyRemove(id, field: field, members: members)
        case .delete(let id):
            if try o.exists(id) { _ = try o.applyDelete(id) }
        }
    }

    /// An insert of a child's log (its values by field, in field order) into the parent's overlay.
    private static func replayInsert(_ id: ObjectID, _ values: [(Int, Value)], into o: inout ContextOverlay) throws(KeelError) {
        let entity = o.model[id.entity]
        var row = [Value](repeating: .null, count: entity.properties.count)
        var inputs: [PropertyInput] = []
        for (field, value) in values where entity.properties.indices.contains(field) {
            switch entity.properties[field] {
            case .attribute: row[field] = value
            case .relationship(let r) where !r.isToMany:
                // A target the parent deleted since (non-`error` policies) is left out.
                guard let target = value.objectID, try o.exists(target) else { continue }
                inputs.append(.toOne(field: field, target))
            case .relationship: continue
            }
        }
        try o.applyInsert(id, row: row, inputs: inputs)
    }

    /// A row for a conflict report: `$id`, `$version`, attributes and to-ones.
    func rowJSON(_ row: StoredObject) -> JSON {
        let entity = model[row.id.entity]
        var members: [(String, JSON)] = [("$id", .string(row.id.text(in: model))), ("$version", .int(Int64(row.version)))]
        for (field, property) in entity.properties.enumerated() where row.values.indices.contains(field) {
            switch property {
            case .attribute(let a) where !a.isTransient: members.append((a.name, ValueCodec.encode(row.values[field], as: a.type)))
            case .relationship(let r) where !r.isToMany:
                members.append((r.name, row.values[field].objectID.map { .string($0.text(in: model)) } ?? .null))
            default: continue
            }
        }
        return .object(.init(members, uniquingKeysWith: { first, _ in first }))
    }
}
