// A context's pending changes, laid over the state it reads (a store snapshot, or its parent
// context): pending rows, pending to-many edits, the deleted set, the change log the save
// replays, and the originals optimistic locking compares.
//
// Layout, chosen so that 100k pending inserts stay small:
// - `rows`: one `PendingRow` per inserted object and per pre-existing object whose row changed —
//   the whole row as an array by field (`Entity.properties` order), never a dictionary of names.
// - `members`: per (object, to-many field) the edits over the base: `added`/`removed` sets for an
//   unordered relationship (read = base − removed + added, sorted by ID; new objects a fast insert
//   linked sit in an array beside `added`, `fresh`, appended without hashing), the whole list for
//   an ordered one (positions matter).
// - `deleted`: pre-existing objects deleted here. Inserted objects that are deleted just vanish.
// - `log`: the `Change` log. An insert's values are read from its row when the change set is
//   built (`liveInsert`) until something else writes that row, when they are copied into the log
//   (`materialize`) — so a bulk insert does not keep every row twice. The fast INSERT, whose row
//   is complete at once, logs `.insertRow` with the row's own array (shared, not copied; a later
//   write of the row copies it, as `materialize` would).
// - `originals`: the base row of every pre-existing object changed or deleted, taken at its first
//   change (what `changes()` reports as updated or deleted, and what a save checks).
// - `transients`: transient attribute values; kept apart so they never dirty an object nor reach
//   a change set.
//
// Every command runs between `begin()` and `commit()`; `undo()` reverses everything since
// `begin()` from the journal, so a command that fails leaves the context as it was.

struct MemberKey: Hashable {
    let id: ObjectID
    let field: Int
}

struct PendingRow {
    var values: [Value]
    var version: UInt64
    var isInserted: Bool
    /// The log position of this inserted object's `.insert` while its values are read from this
    /// row; -1 once copied into the log (or for a pre-existing object).
    var liveInsert: Int
}

struct PendingMembers {
    var added: Set<ObjectID> = []
    /// Added members that were new objects when they joined (a fast insert's object, linked in
    /// the command that made it): in no base list and in neither set, so appended without
    /// hashing. Added ∪ fresh is what was added; `settle` moves them into `added` before any
    /// other edit of the entry.
    var fresh: [ObjectID] = []
    var removed: Set<ObjectID> = []
    /// The whole list, for an ordered relationship.
    var ordered: [ObjectID]?

    mutating func settle() {
        guard !fresh.isEmpty else { return }
        added.formUnion(fresh)
        fresh.removeAll()
    }
}

enum LogEntry {
    case change(Change)
    /// An insert whose values are the object's current pending row.
    case liveInsert(ObjectID)
}

struct ContextOverlay {
    enum Undo {
        case row(ObjectID, PendingRow?)
        case original(ObjectID)
        case deleted(ObjectID)
        case members(MemberKey, PendingMembers?)
        case member(MemberKey, ObjectID, wasAdded: Bool, wasRemoved: Bool, existed: Bool)
        case freshMember(MemberKey, ObjectID, existed: Bool)
        case liveInsert(index: Int, ObjectID)
        case transient(ObjectID, field: Int, previous: Value?)
    }

    let model: Model
    /// What the overlay lies over; nil until the context's first read after open, save, rollback
    /// or refresh.
    var base: (any ObjectReader)? {
        didSet {
            hasBase = base != nil
            baseTargets.removeAll(keepingCapacity: true)
        }
    }
    /// `base != nil`, kept as a plain flag: every command asks, and comparing the existential
    /// with nil copies it (a retain and a release).
    private(set) var hasBase = false

    private(set) var rows: [ObjectID: PendingRow] = [:]
    private(set) var members: [MemberKey: PendingMembers] = [:]
    private(set) var deleted: Set<ObjectID> = []
    private(set) var originals: [ObjectID: StoredObject] = [:]
    private(set) var log: [LogEntry] = []
    private(set) var transients: [ObjectID: [Int: Value]] = [:]
    private(set) var insertedCount = 0

    private var journal: [Undo] = []
    private var journaledRows: Set<ObjectID> = []
    private var journaledMembers: Set<MemberKey> = []
    private var marks: (log: Int, inserted: Int) = (0, 0)
    /// The last object `touchOriginal` found with its original recorded: the next touch of the
    /// same object (every insert of a batch links to the same department) skips the lookup.
    /// Cleared whenever originals are dropped (undo, reset).
    private var lastOriginal: ObjectID?
    /// The to-one targets `targetExists` found in a snapshot base (not pending inserts): each
    /// exists until the context deletes it (`deleted`, checked first) or the base changes
    /// (emptied). A bulk insert spreads its objects over many targets (every employee names one
    /// of a hundred departments): one hash lookup each, instead of reading the snapshot again.
    /// Only a `ContextSnapshot` base (fixed) is remembered; a child context's base is its
    /// parent's live state, which may delete a target at any time. The value says the target's
    /// original is recorded (`originals`), so a fast insert's link skips `touchOriginal`; it is
    /// set by `linkMember` and every entry goes false whenever originals are dropped (undo, reset).
    private var baseTargets: [ObjectID: Bool] = [:]

    init(model: Model) {
        self.model = model
    }

    /// Inserted objects plus changed or deleted pre-existing ones (the daemon's limit counts these).
    var pendingObjectCount: Int { insertedCount + originals.count }

    var hasChanges: Bool { !log.isEmpty }

    func reader() throws(KeelError) -> any ObjectReader {
        guard let base else { throw KeelError(.internal, "the context has no snapshot to read") }
        return base
    }

    // MARK: Commands

    mutating func begin() {
        commit()
        marks = (log.count, insertedCount)
    }

    /// Empties the journal. The sets are cleared only when they hold something: clearing an
    /// empty set that once grew still walks its whole bitmap, and most commands (a fast insert)
    /// never use them.
    mutating func commit() {
        journal.removeAll(keepingCapacity: true)
        if !journaledRows.isEmpty { journaledRows.removeAll(keepingCapacity: true) }
        if !journaledMembers.isEmpty { journaledMembers.removeAll(keepingCapacity: true) }
    }

    /// Reverses everything since `begin()`.
    mutating func undo() {
        lastOriginal = nil
        forgetRecordedOriginals()
        for entry in journal.reversed() {
            switch entry {
            case .row(let id, let previous): rows[id] = previous
            case .original(let id): originals[id] = nil
            case .deleted(let id): deleted.remove(id)
            case .members(let key, let previous): members[key] = previous
            case .member(let key, let member, let wasAdded, let wasRemoved, let existed):
                if !existed {
                    members[key] = nil
                    continue
                }
                if wasAdded { members[key]?.added.insert(member) } else { members[key]?.added.remove(member) }
                if wasRemoved { members[key]?.removed.insert(member) } else { members[key]?.removed.remove(member) }
            case .freshMember(let key, let member, let existed):
                guard existed else {
                    members[key] = nil
                    continue
                }
                if members[key]?.fresh.last == member {
                    members[key]?.fresh.removeLast()
                } else {
                    members[key]?.settle()
                    members[key]?.added.remove(member)
                }
            case .liveInsert(let index, let id): log[index] = .liveInsert(id)
            case .transient(let id, let field, let previous): transients[id, default: [:]][field] = previous
            }
        }
        log.removeSubrange(marks.log...)
        insertedCount = marks.inserted
        commit()
    }

    /// Drops every pending change (after a save, or at rollback). Transient values survive only
    /// when `keepTransients`, for objects that still exist.
    mutating func reset(keepTransients: Bool) {
        let gone = deleted
        // The tables keep their capacity (a context saving batch after batch would regrow them
        // every time), unless they held a very large batch.
        let keep = rows.count <= 65_536
        rows.removeAll(keepingCapacity: keep)
        members.removeAll(keepingCapacity: keep)
        deleted = []
        originals = [:]
        lastOriginal = nil
        forgetRecordedOriginals()
        log.removeAll(keepingCapacity: keep)
        insertedCount = 0
        if keepTransients {
            transients = transients.filter { !gone.contains($0.key) }
        } else {
            transients = [:]
        }
        commit()
    }

    mutating func renameTransients(_ merged: [ObjectID: ObjectID]) {
        for (from, to) in merged {
            if let values = transients.removeValue(forKey: from) { transients[to] = values }
        }
    }

    mutating func append(_ change: Change) {
        log.append(.change(change))
    }

    // MARK: Primitive edits (journaled)

    /// A new object's row; its `.insert` is appended by `sealInsert` once its to-ones are set.
    mutating func insertRow(_ id: ObjectID, values: [Value]) {
        journalRow(id)
        rows[id] = PendingRow(values: values, version: 0, isInserted: true, liveInsert: -1)
        insertedCount += 1
    }

    /// A new object under an ID no row has (one the store has just handed out) and its `.insert`
    /// in the log, in one dictionary write: `insertRow` + `sealInsert` for the fast INSERT, whose
    /// links touch only their targets. The row is complete, so the log takes its values at once
    /// (the same array, shared: no copy until something writes the row, which `materialize`
    /// would copy anyway) and the change set needs no lookup of the row.
    mutating func insertNewRow(_ id: ObjectID, values: [Value]) {
        journal.append(.row(id, nil))
        rows[id] = PendingRow(values: values, version: 0, isInserted: true, liveInsert: -1)
        log.append(.change(.insertRow(id, row: values)))
        insertedCount += 1
    }

    mutating func sealInsert(_ id: ObjectID) {
        log.append(.liveInsert(id))
        rows[id]?.liveInsert = log.count - 1
    }

    mutating func setTransient(_ id: ObjectID, field: Int, value: Value) {
        journal.append(.transient(id, field: field, previous: transients[id]?[field]))
        transients[id, default: [:]][field] = value
    }

    /// Makes sure `id` has a pending row (copying the base row) and journals it once per command.
    mutating func touchRow(_ id: ObjectID) throws(KeelError) {
        if rows[id] != nil {
            journalRow(id)
            return
        }
        guard !deleted.contains(id), let stored = try reader().object(id) else {
            throw KeelError(.notFound, "no object \(id.text(in: model)) (it does not exist or is deleted)")
        }
        recordOriginal(stored)
        journalRow(id)
        rows[id] = PendingRow(values: stored.values, version: stored.version, isInserted: false, liveInsert: -1)
    }

    /// `exists` for the to-one target of a fast insert: the inserts of a batch name the same few
    /// departments, so the targets found in a snapshot base are remembered (`baseTargets`)
    /// instead of being read from the snapshot again. `mutating` also lets the context call it in
    /// place: a non-mutating call on its stored overlay copied the whole overlay first (a retain
    /// per table, per insert).
    /// Nil when `id` does not exist; else where it was found.
    mutating func targetExists(_ id: ObjectID) throws(KeelError) -> TargetState? {
        if !deleted.isEmpty, deleted.contains(id) { return nil }
        if !baseTargets.isEmpty, let recorded = baseTargets[id] {
            return recorded ? .rememberedWithOriginal : .remembered
        }
        if rows[id] != nil { return .pending }
        let base = try reader()
        guard try base.object(id) != nil else { return nil }
        guard base is any ContextSnapshot else { return .pending }
        let recorded = originals[id] != nil
        baseTargets[id] = recorded
        return recorded ? .rememberedWithOriginal : .remembered
    }

    enum TargetState {
        /// A pending row of this context, or an object of a parent context: not remembered.
        case pending
        /// In `baseTargets`, its original not known to be recorded.
        case remembered
        /// In `baseTargets`, its original recorded in `originals`: a link to it need not look.
        case rememberedWithOriginal
    }

    /// A remembered target's original has just been recorded (by `touchOriginal`).
    mutating func rememberOriginal(_ id: ObjectID) {
        guard originals[id] != nil, let i = baseTargets.index(forKey: id) else { return }
        baseTargets.values[i] = true
    }

    /// Records the base row of a pre-existing object at its first change.
    mutating func touchOriginal(_ id: ObjectID) throws(KeelError) {
        if id == lastOriginal { return }
        if originals[id] != nil {
            lastOriginal = id
            return
        }
        if rows[id]?.isInserted == true { return }
        if let row = rows[id] {
            // A pending row always has its original; keep going defensively.
            recordOriginal(StoredObject(id: id, version: row.version, values: row.values))
            return
        }
        guard let stored = try reader().object(id) else {
            throw KeelError(.notFound, "no object \(id.text(in: model)) (it does not exist or is deleted)")
        }
        recordOriginal(stored)
    }

    mutating func writeField(_ id: ObjectID, field: Int, value: Value) throws(KeelError) {
        try touchRow(id)
        try materialize(id)
        rows[id]?.values[field] = value
    }

    /// `originalRecorded`: the caller knows `id`'s original is in `originals` (`targetExists`).
    /// `fresh`: `member` is an object the store has just handed out in this command (in no list
    /// yet), joining an unordered relationship.
    mutating func linkMember(
        _ id: ObjectID, field: Int, member: ObjectID, at position: Int?, ordered: Bool, originalRecorded: Bool = false,
        fresh: Bool = false
    ) throws(KeelError) {
        if !originalRecorded { try touchOriginal(id) }
        let key = MemberKey(id: id, field: field)
        if fresh, !ordered {
            let existing = members.index(forKey: key)
            if let existing {
                members.values[existing].fresh.append(member)
            } else {
                var entry = PendingMembers()
                entry.fresh.append(member)
                members[key] = entry
            }
            journal.append(.freshMember(key, member, existed: existing != nil))
            return
        }
        if ordered {
            var list = try orderedList(key)
            if let existing = list.firstIndex(of: member) {
                guard let position else { return }
                list.remove(at: existing)
                list.insert(member, at: min(max(position, 0), list.count))
            } else if let position {
                list.insert(member, at: min(max(position, 0), list.count))
            } else {
                list.append(member)
            }
            members[key, default: PendingMembers()].ordered = list
            return
        }
        // The entry edited in place, in one lookup when it exists (a department gains thousands
        // of members in a row; each `members[key]` access hashes the key).
        let wasAdded: Bool, wasRemoved: Bool
        let existing = members.index(forKey: key)
        if let existing {
            (wasAdded, wasRemoved) = Self.add(member, to: &members.values[existing])
        } else {
            var entry = PendingMembers()
            (wasAdded, wasRemoved) = Self.add(member, to: &entry)
            members[key] = entry
        }
        journal.append(.member(key, member, wasAdded: wasAdded, wasRemoved: wasRemoved, existed: existing != nil))
    }

    private static func add(_ member: ObjectID, to entry: inout PendingMembers) -> (wasAdded: Bool, wasRemoved: Bool) {
        entry.settle()
        let wasRemoved = !entry.removed.isEmpty && entry.removed.remove(member) != nil
        return (!entry.added.insert(member).inserted, wasRemoved)
    }

    mutating func unlinkMember(_ id: ObjectID, field: Int, member: ObjectID, ordered: Bool) throws(KeelError) {
        try touchOriginal(id)
        let key = MemberKey(id: id, field: field)
        if ordered {
            var list = try orderedList(key)
            guard let index = list.firstIndex(of: member) else { return }
            list.remove(at: index)
            members[key, default: PendingMembers()].ordered = list
            return
        }
        members[key]?.settle()
        journalMember(key, member)
        members[key, default: PendingMembers()].added.remove(member)
        if rows[id]?.isInserted != true { members[key, default: PendingMembers()].removed.insert(member) }
    }

    mutating func destroyObject(_ id: ObjectID) throws(KeelError) {
        let inserted = rows[id]?.isInserted == true
        if !inserted {
            try touchOriginal(id)
            deleted.insert(id)
            journal.append(.deleted(id))
        }
        if rows[id] != nil {
            journalRow(id)
            try materialize(id)
            rows[id] = nil
            if inserted { insertedCount -= 1 }
        }
        for (field, r) in model[id.entity].relationships where r.isToMany {
            let key = MemberKey(id: id, field: field)
            guard let previous = members[key] else { continue }
            journal.append(.members(key, previous))
            journaledMembers.insert(key)
            members[key] = nil
        }
        if let values = transients[id] {
            for (field, value) in values { journal.append(.transient(id, field: field, previous: value)) }
            transients[id] = nil
        }
    }

    // MARK: Change set

    /// The log as the save replays it.
    func changeSet() throws(KeelError) -> ChangeSet {
        var changes: [Change] = []
        changes.reserveCapacity(log.count)
        for entry in log {
            switch entry {
            case .change(let change): changes.append(change)
            case .liveInsert(let id):
                guard let row = rows[id] else {
                    throw KeelError(.internal, "the insert of \(id.text(in: model)) lost its row")
                }
                changes.append(.insertRow(id, row: row.values))
            }
        }
        return ChangeSet(changes: changes, originals: originals)
    }

    // MARK: Internals

    /// Originals were dropped: no remembered target may claim its original is recorded.
    private mutating func forgetRecordedOriginals() {
        guard !baseTargets.isEmpty else { return }
        for i in baseTargets.indices { baseTargets.values[i] = false }
    }

    private mutating func recordOriginal(_ stored: StoredObject) {
        guard originals[stored.id] == nil else { return }
        originals[stored.id] = stored
        journal.append(.original(stored.id))
    }

    private mutating func journalRow(_ id: ObjectID) {
        guard journaledRows.insert(id).inserted else { return }
        journal.append(.row(id, rows[id]))
    }

    private mutating func journalMember(_ key: MemberKey, _ member: ObjectID) {
        let existing = members[key]
        journal.append(
            .member(
                key, member, wasAdded: existing?.added.contains(member) ?? false,
                wasRemoved: existing?.removed.contains(member) ?? false, existed: existing != nil))
    }

    private mutating func orderedList(_ key: MemberKey) throws(KeelError) -> [ObjectID] {
        if journaledMembers.insert(key).inserted { journal.append(.members(key, members[key])) }
        if let list = members[key]?.ordered { return list }
        if rows[key.id]?.isInserted == true { return [] }
        return try reader().members(of: key.id, field: key.field)
    }

    /// Copies a live insert's values into the log before its row changes or goes.
    private mutating func materialize(_ id: ObjectID) throws(KeelError) {
        guard let row = rows[id], row.liveInsert >= 0 else { return }
        let index = row.liveInsert
        log[index] = .change(.insertRow(id, row: row.values))
        journal.append(.liveInsert(index: index, id))
        rows[id]?.liveInsert = -1
    }
}
