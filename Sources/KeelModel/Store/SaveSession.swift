// The state a save (or batch) builds inside the engine write transactions of the stores it
// touches: the GraphEditor that GraphRules edit. Rows are decoded once and kept here until the
// save flushes them (one encode and one put per changed object, however many fields changed);
// link entries go to their trees at once (the trees are the overlay: `members` reads them back).
// Index and unique trees are brought in step with the rows at flush, so until then they hold the
// state from before the save (what the unique check compares with).
//
// Every engine write goes through `put`/`delete`, which also record the operation when the save
// spans several stores (the redo intent, Decision 0004).
//
// Rows live in one array in the order first touched (`entries`, found by `rowIndex`), so a field
// write edits its row in place and the flush walks them without copying. Unordered link puts are
// held back (`pendingLinks`) and put sorted, tree by tree, the moment anything opens a link tree
// (every read and edit of one does) or the save flushes: a batch's links then arrive in key order
// and each put lands next to the previous one (BTree+Hint.swift).

import KeelStorage

/// One object's state during a save.
struct RowEntry {
    let id: ObjectID
    /// The row when the save began (nil: no such row).
    var original: StoredObject?
    /// The row as the save leaves it (nil: missing or destroyed).
    var current: StoredObject?
    /// To-many fields whose membership changed.
    var linkFields: [Int] = []
    /// Inserted by this save.
    var inserted = false
}

/// The tree handles opened in one set of engine write transactions, by store, searched linearly:
/// a save touches a handful of trees, and the names are the layout's own strings, so `==` is a
/// pointer check where hashing the name would cost a pass over its bytes on every put. A handle is
/// valid for its whole transaction (a tree's root page never moves: BTree.swift, T1), so the saves
/// of a group, which run one after another in one transaction, share them: each tree is looked up
/// in the catalog once per group rather than once per save, and each put starts from the leaf the
/// previous save's put left in the handle's hint (BTree+Hint.swift). A transaction abandoned and
/// run again (Decision 0008) gets new handles with its new transaction.
final class TreeHandles {
    /// An open tree (a struct, not a tuple: an array of tuples looks its metadata up at run time
    /// on every allocation).
    struct Open {
        let name: String
        let tree: Tree
    }
    private var byStore: [[Open]]

    init(storeCount: Int) {
        byStore = []
        byStore.reserveCapacity(storeCount)
        for _ in 0..<storeCount { byStore.append([]) }
    }

    @inline(__always)
    func find(_ store: Int, _ name: String) -> Tree? {
        for open in byStore[store] where open.name == name { return open.tree }
        return nil
    }

    /// Records `tree` (not open yet under `name` in `store`).
    func add(_ store: Int, _ name: String, _ tree: Tree) {
        byStore[store].append(Open(name: name, tree: tree))
    }
}

final class SaveSession: GraphEditor {
    let model: Model
    let layout: TreeLayout
    /// The write transaction of each store this save holds (nil for the others).
    var txns: [WriteTransaction?]
    /// The tree handles opened in this save's transactions: its own, or those of the save group
    /// it runs in (every save of a group runs in the same transaction, one after another).
    private let trees: TreeHandles
    /// Scratch key for link puts and deletes.
    private var linkKey: [UInt8] = []
    /// Every object the save read or changed, in the order first touched.
    var entries: [RowEntry] = []
    /// Where each object's entry is in `entries` (an entry never moves).
    var rowIndex: [ObjectID: Int] = [:]
    /// The last `slot` answer: the target of a batch's to-ones (its department) is asked for
    /// once per inserted object.
    private var lastSlot: (id: ObjectID, index: Int)?
    /// Unordered link puts not yet in their trees, by tree.
    private var pendingLinks: [(store: Int, tree: String, pairs: [(owner: ObjectID, member: ObjectID)])] = []
    private var hasPendingLinks = false
    /// Key-level operations per store (`ops`), kept when `recording` (multi-store saves).
    var recording = false {
        didSet { if recording, ops.count < txns.count { ops = Array(repeating: [], count: txns.count) } }
    }
    /// The ordered to-many lists this save has read, by store, tree and owner, kept in step with
    /// every change the save makes to them (SaveSession+OrderedLinks.swift): adding a member
    /// checks the whole list (an `olink/` key is owner·position, so membership is a scan), and
    /// reading it from the tree per member made loading a large ordered to-many quadratic.
    var orderedLists: [OrderedListKey: [(member: ObjectID, position: UInt64)]] = [:]
    /// Empty until `recording` is set: a single-store save records nothing.
    var ops: [[KeyOp]] = []
    /// Deny rules met by deletes.
    var denials: [DenyFailure] = []
    private var keyBuffer: [UInt8] = []
    /// Per entity: no stored object has a number above this (ObjectStore tracks it), so `entry`
    /// skips the lookup for new objects.
    let freshAbove: [UInt64]

    /// `trees`: the handles of the transactions this save runs in when other saves share them
    /// (a save group's); nil gives the save handles of its own.
    init(model: Model, layout: TreeLayout, storeCount: Int, freshAbove: [UInt64], trees: TreeHandles? = nil) {
        self.freshAbove = freshAbove
        self.model = model
        self.layout = layout
        // Not `Array(repeating:count:)`, which looks the buffer's type up at run time on every call.
        var txns: [WriteTransaction?] = []
        txns.reserveCapacity(storeCount)
        for _ in 0..<storeCount { txns.append(nil) }
        self.txns = txns
        self.trees = trees ?? TreeHandles(storeCount: storeCount)
    }

    // MARK: Trees

    func txn(_ store: Int) -> WriteTransaction {
        guard let t = txns[store] else { preconditionFailure("the save does not hold store #\(store)") }
        return t
    }

    func readTree(_ store: Int, _ name: String) throws(KeelError) -> Tree? {
        if hasPendingLinks, Self.isLinkTree(name) { try putPendingLinks() }
        if let t = trees.find(store, name) { return t }
        let t = try engine { () throws(StorageError) in try txn(store).tree(name) }
        if let t { trees.add(store, name, t) }
        return t
    }

    func writeTree(_ store: Int, _ name: String) throws(KeelError) -> Tree {
        if hasPendingLinks, Self.isLinkTree(name) { try putPendingLinks() }
        if let t = trees.find(store, name) { return t }
        let t = try engine { () throws(StorageError) in try txn(store).openTree(name) }
        trees.add(store, name, t)
        return t
    }

    func put(_ store: Int, _ tree: String, key: [UInt8], value: [UInt8]) throws(KeelError) {
        let t = try writeTree(store, tree)
        try engine { () throws(StorageError) in try t.put(key: key, value: value) }
        if recording { ops[store].append(KeyOp(store: store, tree: tree, key: key, value: value)) }
    }

    /// Puts `key` with an empty value (index and link entries). A key over the engine's limit
    /// (an indexed or unique attribute's value too long) is `TOO_LARGE`, naming the index.
    func put(_ store: Int, _ tree: String, key: UnsafeRawBufferPointer) throws(KeelError) {
        let t = try writeTree(store, tree)
        do throws(StorageError) {
            try t.put(key: key, value: UnsafeRawBufferPointer(start: nil, count: 0))
        } catch where error.code == .tooLarge {
            throw KeelError(
                .tooLarge,
                "a value is too long for \(tree), whose entries hold the value's bytes and the object's ID: \(error.message)",
                details: ["tree": .string(tree), "bytes": .int(Int64(key.count))], cause: error)
        } catch {
            throw KeelError(error)
        }
        if recording { ops[store].append(KeyOp(store: store, tree: tree, key: [UInt8](key), value: [])) }
    }

    /// Deletes `key` (index entries).
    func delete(_ store: Int, _ tree: String, key: UnsafeRawBufferPointer) throws(KeelError) {
        guard let t = try readTree(store, tree) else { return }
        let found = try engine { () throws(StorageError) in try t.delete(key: key) }
        if found, recording { ops[store].append(KeyOp(store: store, tree: tree, key: [UInt8](key), value: nil)) }
    }

    func delete(_ store: Int, _ tree: String, key: [UInt8]) throws(KeelError) {
        guard let t = try readTree(store, tree) else { return }
        let found = try engine { () throws(StorageError) in try t.delete(key: key) }
        if found, recording { ops[store].append(KeyOp(store: store, tree: tree, key: key, value: nil)) }
    }

    // MARK: Rows

    /// The position of `id`'s entry in `entries`, its row read from its object tree the first time.
    func slot(_ id: ObjectID) throws(KeelError) -> Int {
        if let last = lastSlot, last.id == id { return last.index }
        guard id.entity.index < model.entities.count else {
            throw KeelError(.noSuchEntity, "no entity #\(id.entity.rawValue) in model \(model.name)")
        }
        // One hash: the lookup claims the next position for a new object (a cascade's 10,000
        // employees are each looked up and added once).
        if let i = Self.claim(&rowIndex[id, default: -1], entries.count) {
            lastSlot = (id, i)
            return i
        }
        let store = layout.storeOf[id.entity.index]
        let row: StoredObject?
        if id.number > freshAbove[id.entity.index] {
            row = nil  // above every number ever stored for the entity: no lookup needed
        } else {
            do throws(KeelError) {
                let tree = try readTree(store, layout.objects[id.entity.index])
                row = try TreeReading.row(tree, id, fieldCount: layout.fieldCounts[id.entity.index], key: &keyBuffer)
            } catch {
                rowIndex[id] = nil
                throw error
            }
        }
        entries.append(RowEntry(id: id, original: row, current: row))
        return entries.count - 1
    }

    /// The position in `slot` when it holds one (≥ 0); else nil, and `slot` takes `next`.
    @inline(__always)
    private static func claim(_ slot: inout Int, _ next: Int) -> Int? {
        if slot >= 0 { return slot }
        slot = next
        return nil
    }

    /// The entry of `id`, read from its object tree the first time.
    @discardableResult
    func entry(_ id: ObjectID) throws(KeelError) -> RowEntry { entries[try slot(id)] }

    /// Whether `id` was inserted by this save (false for objects it has not touched).
    func isInserted(_ id: ObjectID) -> Bool {
        guard let i = rowIndex[id] else { return false }
        return entries[i].inserted
    }

    /// Starts a new object (all fields null, version 0 until flushed).
    func insertObject(_ id: ObjectID) throws(KeelError) {
        try insertObject(id, values: Array(repeating: .null, count: layout.fieldCounts[id.entity.index]))
    }

    /// Starts a new object with its row's values (attributes and to-one targets; the caller keeps
    /// the inverses in step).
    func insertObject(_ id: ObjectID, values: [Value]) throws(KeelError) {
        let row = StoredObject(id: id, version: 0, values: values)
        if id.number <= freshAbove[id.entity.index] || rowIndex[id] != nil {
            let i = try slot(id)
            guard entries[i].original == nil, entries[i].current == nil else {
                throw KeelError(.badRequest, "an object \(id.text(in: model)) already exists")
            }
            entries[i] = RowEntry(id: id, original: nil, current: row, inserted: true)
            return
        }
        entries.append(RowEntry(id: id, original: nil, current: row, inserted: true))
        rowIndex[id] = entries.count - 1
    }

    func current(_ id: ObjectID) throws(KeelError) -> StoredObject? { try entry(id).current }

    // MARK: GraphEditor

    func exists(_ id: ObjectID) throws(KeelError) -> Bool {
        entries[try slot(id)].current != nil
    }

    func value(of id: ObjectID, field: Int) throws(KeelError) -> Value {
        let i = try slot(id)
        guard let count = entries[i].current?.values.count, field >= 0, field < count else { return .null }
        return entries[i].current!.values[field]
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
        let i = try slot(id)
        guard entries[i].current != nil else {
            throw KeelError(.notFound, "no object \(id.text(in: model)) (it does not exist or is deleted)")
        }
        entries[i].current!.values[field] = value
    }

    func link(_ id: ObjectID, field: Int, member: ObjectID, at position: Int?) throws(KeelError) {
        guard let (name, ordered) = linkTree(id, field) else { return }
        let store = layout.storeOf[id.entity.index]
        markLink(id, field)
        if !ordered {
            holdLink(store, name, owner: id, member: member)
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
        let slot = try slot(id)
        guard entries[slot].current != nil else { return }
        let store = layout.storeOf[id.entity.index]
        for (field, name) in layout.links[id.entity.index].enumerated() {
            guard let name, let tree = try readTree(store, name) else { continue }
            // The owner's link entries are the keys that start with its object key: one range
            // delete (BTree+RangeDelete.swift), leaf by leaf, instead of a delete per member.
            let prefix = KeyEncoding.objectKey(id)
            if recording {
                // A multi-store save's redo intent lists every key it deletes.
                try engine { () throws(StorageError) in
                    var cursor = try tree.cursor()
                    var valid = try cursor.seek(to: prefix)
                    while valid {
                        let key = try cursor.key
                        guard key.starts(with: prefix) else { break }
                        ops[store].append(KeyOp(store: store, tree: name, key: key, value: nil))
                        valid = try cursor.next()
                    }
                }
            }
            let removed = try engine { () throws(StorageError) in try tree.deleteRange(from: prefix, below: KeyRange.successor(of: prefix)) }
            if removed > 0 { markLink(id, field) }
            orderedLists[OrderedListKey(store: store, tree: name, owner: id)] = nil
        }
        entries[slot].current = nil
    }

    private func linkTree(_ id: ObjectID, _ field: Int) -> (String, Bool)? {
        guard id.entity.index < layout.links.count, field >= 0, field < layout.links[id.entity.index].count,
            let name = layout.links[id.entity.index][field]
        else { return nil }
        return (name, layout.ordered[id.entity.index][field])
    }

    private func markLink(_ id: ObjectID, _ field: Int) {
        let cached = lastSlot.flatMap { $0.id == id ? $0.index : nil }
        guard let i = cached ?? rowIndex[id] else { return }
        if !entries[i].linkFields.contains(field) { entries[i].linkFields.append(field) }
    }

    // MARK: Held-back link puts

    /// `link/…` (unordered to-many) and nothing else starts with an "l".
    @inline(__always)
    static func isLinkTree(_ name: String) -> Bool { name.utf8.first == UInt8(ascii: "l") }

    private func holdLink(_ store: Int, _ tree: String, owner: ObjectID, member: ObjectID) {
        hasPendingLinks = true
        for g in pendingLinks.indices where pendingLinks[g].store == store && pendingLinks[g].tree == tree {
            pendingLinks[g].pairs.append((owner, member))
            return
        }
        pendingLinks.append((store, tree, [(owner, member)]))
    }

    @inline(__always)
    static func precedes(_ a: (owner: ObjectID, member: ObjectID), _ b: (owner: ObjectID, member: ObjectID)) -> Bool {
        a.owner != b.owner ? a.owner < b.owner : a.member < b.member
    }

    /// Puts the held-back links, each tree's in key order (owner then member, as the key is laid out).
    func putPendingLinks() throws(KeelError) {
        guard hasPendingLinks else { return }
        let groups = pendingLinks
        pendingLinks = []
        hasPendingLinks = false
        for g in groups {
            var pairs = g.pairs
            var sorted = true
            for i in pairs.indices.dropFirst() where !Self.precedes(pairs[i - 1], pairs[i]) {
                sorted = false
                break
            }
            if !sorted { pairs.sort(by: Self.precedes) }
            for (owner, member) in pairs {
                linkKey.removeAll(keepingCapacity: true)
                KeyEncoding.appendObjectKey(owner, to: &linkKey)
                KeyEncoding.appendObjectKey(member, to: &linkKey)
                try put(g.store, g.tree, key: linkKey, value: [])
            }
        }
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
