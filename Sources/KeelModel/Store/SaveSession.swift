// The state a save (or batch) builds inside the engine write transactions of the stores it
// touches: the GraphEditor that GraphRules edit. Rows are decoded once and kept here until the
// save flushes them (one encode and one put per changed object, however many fields changed);
// link entries go to their trees at once (the trees are the overlay: `members` reads them back).
// Index and unique trees are brought in step with the rows at flush, so until then they hold the
// state from before the save (what the unique check compares with).
//
// Every engine write goes through `put`/`delete`, which also record the operation when the save
// spans several stores (the redo intent, Decision 0004).

import KeelStorage

/// One object's state during a save.
struct RowEntry {
    /// The row when the save began (nil: no such row).
    var original: StoredObject?
    /// The row as the save leaves it (nil: missing or destroyed).
    var current: StoredObject?
    /// To-many fields whose membership changed.
    var linkFields: [Int] = []
    /// Inserted by this save.
    var inserted = false
}

final class SaveSession: GraphEditor {
    let model: Model
    let layout: TreeLayout
    /// The write transaction of each store this save holds (nil for the others).
    var txns: [WriteTransaction?]
    /// Tree handles per store (nil: looked up, absent), searched linearly: a save touches a
    /// handful of trees, and the names are the layout's own strings, so `==` is a pointer check
    /// where hashing the name would cost a pass over its bytes on every put.
    private var trees: [[(name: String, tree: Tree?)]]
    /// Scratch key for link puts and deletes.
    private var linkKey: [UInt8] = []
    var rows: [ObjectID: RowEntry] = [:]
    /// Key-level operations per store, kept when `recording` (multi-store saves).
    var recording = false
    var ops: [[KeyOp]]
    /// Deny rules met by deletes.
    var denials: [DenyFailure] = []
    private var keyBuffer: [UInt8] = []
    /// Per entity: no stored object has a number above this (ObjectStore tracks it), so `entry`
    /// skips the lookup for new objects.
    let freshAbove: [UInt64]

    init(model: Model, layout: TreeLayout, storeCount: Int, freshAbove: [UInt64]) {
        self.freshAbove = freshAbove
        self.model = model
        self.layout = layout
        self.txns = Array(repeating: nil, count: storeCount)
        self.trees = Array(repeating: [], count: storeCount)
        self.ops = Array(repeating: [], count: storeCount)
    }

    // MARK: Trees

    func txn(_ store: Int) -> WriteTransaction {
        guard let t = txns[store] else { preconditionFailure("the save does not hold store #\(store)") }
        return t
    }

    @inline(__always)
    private func cachedTree(_ store: Int, _ name: String) -> Int? {
        for i in trees[store].indices where trees[store][i].name == name { return i }
        return nil
    }

    func readTree(_ store: Int, _ name: String) throws(KeelError) -> Tree? {
        if let i = cachedTree(store, name), let t = trees[store][i].tree { return t }
        let t = try engine { () throws(StorageError) in try txn(store).tree(name) }
        if let t { setTree(store, name, t) }
        return t
    }

    func writeTree(_ store: Int, _ name: String) throws(KeelError) -> Tree {
        if let i = cachedTree(store, name), let t = trees[store][i].tree { return t }
        let t = try engine { () throws(StorageError) in try txn(store).openTree(name) }
        setTree(store, name, t)
        return t
    }

    private func setTree(_ store: Int, _ name: String, _ tree: Tree) {
        if let i = cachedTree(store, name) { trees[store][i].tree = tree } else { trees[store].append((name, tree)) }
    }

    func put(_ store: Int, _ tree: String, key: [UInt8], value: [UInt8]) throws(KeelError) {
        let t = try writeTree(store, tree)
        try engine { () throws(StorageError) in try t.put(key: key, value: value) }
        if recording { ops[store].append(KeyOp(store: store, tree: tree, key: key, value: value)) }
    }

    func delete(_ store: Int, _ tree: String, key: [UInt8]) throws(KeelError) {
        guard let t = try readTree(store, tree) else { return }
        let found = try engine { () throws(StorageError) in try t.delete(key: key) }
        if found, recording { ops[store].append(KeyOp(store: store, tree: tree, key: key, value: nil)) }
    }

    // MARK: Rows

    /// The entry of `id`, read from its object tree the first time.
    @discardableResult
    func entry(_ id: ObjectID) throws(KeelError) -> RowEntry {
        if let e = rows[id] { return e }
        guard id.entity.index < model.entities.count else {
            throw KeelError(.noSuchEntity, "no entity #\(id.entity.rawValue) in model \(model.name)")
        }
        let store = layout.storeOf[id.entity.index]
        let row: StoredObject?
        if id.number > freshAbove[id.entity.index] {
            row = nil  // above every number ever stored for the entity: no lookup needed
        } else {
            let tree = try readTree(store, layout.objects[id.entity.index])
            row = try TreeReading.row(tree, id, fieldCount: layout.fieldCounts[id.entity.index], key: &keyBuffer)
        }
        let e = RowEntry(original: row, current: row)
        rows[id] = e
        return e
    }

    /// Starts a new object (all fields null, version 0 until flushed).
    func insertObject(_ id: ObjectID) throws(KeelError) {
        let e = try entry(id)
        guard e.original == nil, e.current == nil else {
            throw KeelError(.badRequest, "an object \(id.text(in: model)) already exists")
        }
        let fields = layout.fieldCounts[id.entity.index]
        rows[id] = RowEntry(original: nil, current: StoredObject(id: id, version: 0, values: Array(repeating: .null, count: fields)),
                            inserted: true)
    }

    /// Starts a new object with its row's values (attributes and to-one targets; the caller keeps
    /// the inverses in step).
    func insertObject(_ id: ObjectID, values: [Value]) throws(KeelError) {
        if id.number <= freshAbove[id.entity.index] || rows.index(forKey: id) != nil {
            let e = try entry(id)
            guard e.original == nil, e.current == nil else {
                throw KeelError(.badRequest, "an object \(id.text(in: model)) already exists")
            }
        }
        rows[id] = RowEntry(original: nil, current: StoredObject(id: id, version: 0, values: values), inserted: true)
    }

    func current(_ id: ObjectID) throws(KeelError) -> StoredObject? { try entry(id).current }

    // MARK: GraphEditor

    func exists(_ id: ObjectID) throws(KeelError) -> Bool {
        if let i = rows.index(forKey: id) { return rows.values[i].current != nil }
        return try entry(id).current != nil
    }

    func value(of id: ObjectID, field: Int) throws(KeelError) -> Value {
        guard let c = try entry(id).current, field >= 0, field < c.values.count else { return .null }
        return c.values[field]
    }

    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID] {
        guard let (name, ordered) = linkTree(id, field) else { return [] }
        return try TreeReading.members(try readTree(layout.storeOf[id.entity.index], name), id, ordered: ordered)
    }

    func memberCount(of id: ObjectID, field: Int) throws(KeelError) -> Int {
        guard let (name, _) = linkTree(id, field) else { return 0 }
        return try TreeReading.memberCount(try readTree(layout.storeOf[id.entity.index], name), id)
    }

    func write(_ id: ObjectID, field: Int, value: Value) throws(KeelError) {
        if rows.index(forKey: id) == nil { try entry(id) }
        guard let i = rows.index(forKey: id), rows.values[i].current != nil else {
            throw KeelError(.notFound, "no object \(id.text(in: model)) (it does not exist or is deleted)")
        }
        rows.values[i].current!.values[field] = value
    }

    func link(_ id: ObjectID, field: Int, member: ObjectID, at position: Int?) throws(KeelError) {
        guard let (name, ordered) = linkTree(id, field) else { return }
        let store = layout.storeOf[id.entity.index]
        markLink(id, field)
        if !ordered {
            linkKey.removeAll(keepingCapacity: true)
            KeyEncoding.appendObjectKey(id, to: &linkKey)
            KeyEncoding.appendObjectKey(member, to: &linkKey)
            try put(store, name, key: linkKey, value: [])
            return
        }
        try OrderedLinks.insert(self, store: store, tree: name, owner: id, member: member, at: position)
    }

    func unlink(_ id: ObjectID, field: Int, member: ObjectID) throws(KeelError) {
        guard let (name, ordered) = linkTree(id, field) else { return }
        let store = layout.storeOf[id.entity.index]
        markLink(id, field)
        if !ordered {
            var key = KeyEncoding.objectKey(id)
            KeyEncoding.appendObjectKey(member, to: &key)
            try delete(store, name, key: key)
            return
        }
        try OrderedLinks.remove(self, store: store, tree: name, owner: id, member: member)
    }

    func destroy(_ id: ObjectID) throws(KeelError) {
        guard try entry(id).current != nil else { return }
        let store = layout.storeOf[id.entity.index]
        for (field, name) in layout.links[id.entity.index].enumerated() {
            guard let name, let tree = try readTree(store, name) else { continue }
            let prefix = KeyEncoding.objectKey(id)
            let keys = try engine { () throws(StorageError) -> [[UInt8]] in
                var out: [[UInt8]] = []
                var cursor = try tree.cursor()
                var valid = try cursor.seek(to: prefix)
                while valid {
                    let key = try cursor.key
                    guard key.starts(with: prefix) else { break }
                    out.append(key)
                    valid = try cursor.next()
                }
                return out
            }
            if !keys.isEmpty { markLink(id, field) }
            for key in keys { try delete(store, name, key: key) }
        }
        rows[id]?.current = nil
    }

    private func linkTree(_ id: ObjectID, _ field: Int) -> (String, Bool)? {
        guard id.entity.index < layout.links.count, field >= 0, field < layout.links[id.entity.index].count,
            let name = layout.links[id.entity.index][field]
        else { return nil }
        return (name, layout.ordered[id.entity.index][field])
    }

    private func markLink(_ id: ObjectID, _ field: Int) {
        guard let i = rows.index(forKey: id) else { return }
        if !rows.values[i].linkFields.contains(field) { rows.values[i].linkFields.append(field) }
    }

    // MARK: Scans (batch requests)

    /// Objects of `entity` as stored when the save began, filtered by `body`.
    func scanStored(_ entity: EntityID, includeSubentities: Bool, _ body: (StoredObject) throws(KeelError) -> Bool) throws(KeelError) {
        let store = layout.storeOf[entity.index]
        let tree = try readTree(store, layout.objects[entity.index])
        try TreeReading.scan(tree, entities: TreeReading.scanEntities(model, entity, includeSubentities: includeSubentities),
                             model: model, body)
    }
}

/// Ordered to-many links (`olink/`): keys owner·position (u64 BE), value the member's key.
/// Positions leave gaps of 2^20 so an insert between two members usually takes their midpoint;
/// when there is no room the owner's list is renumbered.
enum OrderedLinks {
    static let gap: UInt64 = 1 << 20

    static func entries(_ s: SaveSession, store: Int, tree: String, owner: ObjectID) throws(KeelError) -> [(ObjectID, UInt64)] {
        var out: [(ObjectID, UInt64)] = []
        try TreeReading.forEachLink(try s.readTree(store, tree), owner, ordered: true) { m, p in out.append((m, p)) }
        return out
    }

    static func key(_ owner: ObjectID, _ position: UInt64) -> [UInt8] {
        var k = KeyEncoding.objectKey(owner)
        KeyEncoding.appendU64(position, to: &k)
        return k
    }

    static func insert(_ s: SaveSession, store: Int, tree: String, owner: ObjectID, member: ObjectID, at index: Int?) throws(KeelError) {
        var list = try entries(s, store: store, tree: tree, owner: owner)
        if let existing = list.firstIndex(where: { $0.0 == member }) {
            guard index != nil else { return }
            try s.delete(store, tree, key: key(owner, list[existing].1))
            list.remove(at: existing)
        }
        let i = min(max(index ?? list.count, 0), list.count)
        let below: UInt64 = i > 0 ? list[i - 1].1 : 0
        let above: UInt64? = i < list.count ? list[i].1 : nil
        if let above {
            if above - below >= 2 {
                try s.put(store, tree, key: key(owner, below + (above - below) / 2), value: KeyEncoding.objectKey(member))
                return
            }
            // No room: renumber the whole list with the new member in place.
            for (_, p) in list { try s.delete(store, tree, key: key(owner, p)) }
            var members = list.map(\.0)
            members.insert(member, at: i)
            for (n, m) in members.enumerated() {
                try s.put(store, tree, key: key(owner, UInt64(n + 1) * gap), value: KeyEncoding.objectKey(m))
            }
            return
        }
        try s.put(store, tree, key: key(owner, below + gap), value: KeyEncoding.objectKey(member))
    }

    static func remove(_ s: SaveSession, store: Int, tree: String, owner: ObjectID, member: ObjectID) throws(KeelError) {
        for (m, p) in try entries(s, store: store, tree: tree, owner: owner) where m == member {
            try s.delete(store, tree, key: key(owner, p))
        }
    }
}
