// The object layer's consistency check (what `keelctl verify` and the randomized tests rely on):
// every row decodes, every relationship agrees with its inverse on both sides, link trees hold
// no entries of missing owners, index and unique trees hold exactly the entries the rows call
// for, every key of an object or link tree belongs to an object the model can have there
// (the object trees are walked key by key, not entity by entity as fetches scan them, so a key
// outside every entity's range is seen too), and every tree of a store file is one the model
// keeps in it. Returns the faults found; an empty list means consistent.
//
// Memory: the trees are read in chunks (each its own engine read), so a check holds a chunk of
// entries, not a tree, and nothing per object (a link tree's owners are checked as their
// entries come, in key order).
//
// A to-one or to-many target that no longer exists is a fault unless the relationship's
// inverse has delete rule `noAction` (or there is no inverse): that is the dangling reference
// spec/model.md allows.

import Collections
public import KeelStorage

/// One inconsistency found by a check: the object layer's (`verify`) or a store file's page and
/// tree checks (`verifyAll`, kind `page`), with what it concerns when known.
public struct StoreFault: Sendable, Hashable, CustomStringConvertible {
    /// `page` (a store file's pages, trees or free list), `row`, `inverse`, `dangling`, `link`,
    /// `index`, `unique`, `stray` (a key of an object or link tree that belongs to no object of
    /// the model there: an unknown entity, another tree's entity, no object key), or `read` (a
    /// check stopped by an error).
    public var kind: String
    public var message: String
    /// The configuration of the store file.
    public var store: String?
    public var page: UInt32?
    /// The engine tree (`objects/Person`, `idx/Employee_department_salary`, …).
    public var tree: String?
    /// The object, `Entity/N`.
    public var object: String?

    public init(kind: String, message: String, store: String? = nil, page: UInt32? = nil, tree: String? = nil, object: String? = nil) {
        self.kind = kind
        self.message = message
        self.store = store
        self.page = page
        self.tree = tree
        self.object = object
    }

    /// "Default.keel page 17, tree objects/Person: checksum mismatch" or "inverse, Employee/3: …".
    public var description: String {
        var place: [String] = []
        if let store { place.append(store + ".keel") }
        if let page { place.append("page \(page)") }
        if let tree { place.append("tree \(tree)") }
        if let object { place.append("object \(object)") }
        return "\(kind)" + (place.isEmpty ? "" : " (" + place.joined(separator: ", ") + ")") + ": \(message)"
    }

    /// The wire form (VERIFY's `details.faults`): `kind`, `message` and whichever of `store`,
    /// `page`, `tree`, `object` are known.
    public var json: JSON {
        var members: [(String, JSON)] = [("kind", .string(kind)), ("message", .string(message))]
        if let store { members.append(("store", .string(store))) }
        if let page { members.append(("page", .int(Int64(page)))) }
        if let tree { members.append(("tree", .string(tree))) }
        if let object { members.append(("object", .string(object))) }
        return .object(.init(members, uniquingKeysWith: { a, _ in a }))
    }

    /// Reads the wire form back (keelctl's online verify).
    public init?(json: JSON) {
        guard let kind = json["kind"]?.stringValue, let message = json["message"]?.stringValue else { return nil }
        self.init(
            kind: kind, message: message, store: json["store"]?.stringValue, page: json["page"]?.intValue.flatMap { UInt32(exactly: $0) },
            tree: json["tree"]?.stringValue, object: json["object"]?.stringValue)
    }
}

extension ObjectStore {
    /// Checks the newest committed state of every store.
    public func verify(progress: ProgressHandler = { _ in }) throws(KeelError) -> [StoreFault] {
        var faults: [StoreFault] = []
        try verify(progress: progress) { faults.append($0) }
        return faults
    }

    /// Checks the newest committed state of every store, handing each fault to `report` as it
    /// is found (nothing is kept: what the caller keeps is its choice).
    public func verify(progress: ProgressHandler = { _ in }, report: (StoreFault) -> Void) throws(KeelError) {
        let snapshot = try snapshot()
        defer { snapshot.close() }
        try snapshot.verify(progress: progress, report: report)
    }
}

extension ObjectSnapshot {
    /// The object layer's checks; reports objects checked against the objects stored.
    public func verify(progress: ProgressHandler = { _ in }) throws(KeelError) -> [StoreFault] {
        var faults: [StoreFault] = []
        try verify(progress: progress) { faults.append($0) }
        return faults
    }

    /// The object layer's checks, each fault handed to `report` as it is found.
    public func verify(progress: ProgressHandler = { _ in }, report: (StoreFault) -> Void) throws(KeelError) {
        func fault(_ kind: String, _ object: ObjectID?, _ tree: String?, _ message: String) {
            report(StoreFault(
                kind: kind, message: message, store: object.map { model.configuration(of: $0.entity) }, tree: tree,
                object: object.map { $0.text(in: model) }))
        }
        let roots = model.entities.filter { $0.parent == nil }
        var total: UInt64 = 0
        for root in roots { total += UInt64((try? count(root.id, includeSubentities: true)) ?? 0) }
        var done: UInt64 = 0
        let inverses = InverseMembers()
        verifyObjectTrees(report: report) { (o) throws(KeelError) in
            done += 1
            if done % 4096 == 0 { progress(WorkProgress(task: "checking objects", done: done, total: total)) }
            try verifyObject(o, inverses) { kind, tree, message in fault(kind, o.id, tree, message) }
        }
        progress(WorkProgress(task: "checking objects", done: done, total: max(done, total)))
        do throws(KeelError) {
            try verifyCatalogs(report: report)
            try verifyTrees(fault, report: report)
        } catch {
            report(StoreFault(kind: "read", message: "checking the indexes and links stopped: \(error.message)", store: nil, tree: nil, object: nil))
        }
    }

    /// At most this many stray keys of one tree are a fault each; the others are one fault that
    /// counts them (a million stray keys are 11 faults, not a million).
    public static let strayKeysListed = 10

    /// Every key of every object tree, in key order: a row of an entity the tree holds goes to
    /// `check`; any other key is a `stray` fault naming the tree and the key
    /// (`KeyEncoding.readable`) — a row of an entity the model does not have, of an entity kept
    /// in another tree, a key that is no object key (not 10 bytes, or object number 0). (A walk
    /// entity by entity, as fetches scan, would never read a key outside the model's entities'
    /// ranges.) Past `strayKeysListed` stray keys in one tree, one fault counts the rest.
    ///
    /// Damage that stops the checks — a row that cannot be decoded, an error of `check` — is one
    /// `read` fault for the tree's rows ("reading the Person objects stopped: …"); its keys are
    /// still walked for stray ones, and the other trees checked. A tree whose pages cannot be
    /// read is one `read` fault too. Rows are read in chunks, each in its own engine read, so
    /// `check` may read this snapshot again.
    private func verifyObjectTrees(report: (StoreFault) -> Void, check: (StoredObject) throws(KeelError) -> Void) {
        // Each object tree once, with its store file; `home[e]`: the tree entity e's rows are in.
        var trees: [(store: Int, name: String, configuration: String, root: String)] = []
        var home: [Int] = []
        for entity in model.entities {
            let (store, name) = (layout.storeOf[entity.id.index], layout.objects[entity.id.index])
            if let t = trees.firstIndex(where: { $0.store == store && $0.name == name }) {
                home.append(t)
            } else {
                home.append(trees.count)
                trees.append((store, name, model.configuration(of: entity.id), model[entity.root].name))
            }
        }
        enum Entry {
            case row(Result<StoredObject, KeelError>)
            case stray([UInt8])
        }
        let chunkSize = 256
        for (t, tree) in trees.enumerated() {
            var stray = StrayKeys(store: tree.configuration, tree: tree.name)
            var rowsStopped = false
            var from: [UInt8]? = []  // where the next chunk starts (empty: the first key); nil: done
            do throws(KeelError) {
                while let start = from {
                    // The entries from `start` on, rows decoded (a stray key's value is not), and
                    // the key the next chunk starts at.
                    let (chunk, next) = try read(store: tree.store) { (txn) throws(KeelError) -> ([Entry], [UInt8]?) in
                        guard let engineTree = try self.tree(txn, tree.name) else { return ([], nil) }
                        return try engine { () throws(StorageError) -> ([Entry], [UInt8]?) in
                            var cursor = try engineTree.cursor()
                            var valid = try start.isEmpty ? cursor.seekFirst() : cursor.seek(to: start)
                            var out: [Entry] = []
                            while valid, out.count < chunkSize {
                                out.append(try cursor.withEntry { key, value -> Entry in
                                    guard key.count == KeyEncoding.objectKeySize, let id = KeyEncoding.objectID(key),
                                        id.entity.index < home.count, home[id.entity.index] == t
                                    else { return .stray([UInt8](key)) }
                                    return .row(Result { () throws(KeelError) -> StoredObject in
                                        try RowCodec.decode(value, id: id, fieldCount: self.layout.fieldCounts[id.entity.index])
                                    })
                                })
                                valid = try cursor.next()
                            }
                            return (out, valid ? try cursor.key : nil)
                        }
                    }
                    from = next
                    for entry in chunk {
                        switch entry {
                        case .stray(let key):
                            stray.add(key, report: report) { key in self.strayKey(key, in: tree.name, of: tree.configuration) }
                        case .row(let decoded):
                            guard !rowsStopped else { continue }
                            do throws(KeelError) {
                                try check(try decoded.get())
                            } catch {
                                rowsStopped = true
                                report(StoreFault(
                                    kind: "read", message: "reading the \(tree.root) objects stopped: \(error.message)", store: tree.configuration))
                            }
                        }
                    }
                }
            } catch {
                report(StoreFault(
                    kind: "read", message: "reading the \(tree.root) objects stopped: \(error.message)", store: tree.configuration, tree: tree.name))
            }
            stray.finish(report)
        }
    }

    /// What is wrong with `key`, found in object tree `tree` though no walk of it reads it there,
    /// and the object it names when the model has its entity.
    private func strayKey(_ key: [UInt8], in tree: String, of configuration: String) -> (message: String, object: String?) {
        let text = KeyEncoding.readable(key)
        guard key.count == KeyEncoding.objectKeySize else {
            return ("\(tree) holds key \(text): \(key.count) byte\(key.count == 1 ? "" : "s"), not an object key (2 bytes of entity, 8 of object number)", nil)
        }
        guard let id = KeyEncoding.objectID(key) else {
            return ("\(tree) holds key \(text): object number 0, which no object has", nil)
        }
        let entity = id.entity
        guard entity.index < model.entities.count else {
            return ("\(tree) holds key \(text), object \(id.number) of entity #\(entity.rawValue): the model has no entity #\(entity.rawValue) (it has \(model.entities.count))", nil)
        }
        let name = id.text(in: model)
        let kept = model.configuration(of: entity)
        let file = kept == configuration ? "" : " of \(kept).keel"
        return ("\(tree) holds key \(text), \(name): \(model[entity].name) objects are kept in \(layout.objects[entity.index])\(file)", name)
    }

    /// Whether `member` is in `owner`'s to-many `field` — what the inverse check asks once per
    /// object on the other side, so it must not cost the owner's whole list each time (a
    /// department of 100,000 employees would make the check quadratic): one look-up of the link
    /// entry (owner key, member key) in an unordered link tree; for an ordered one, whose keys
    /// hold positions, the owner's members read once and kept in `inverses`.
    private func hasMember(_ owner: ObjectID, field: Int, _ member: ObjectID, _ inverses: InverseMembers) throws(KeelError) -> Bool {
        guard let name = layout.links[owner.entity.index][field] else { return false }
        if layout.ordered[owner.entity.index][field] {
            if let known = inverses.members(owner, field) { return known.contains(member) }
            let members = Set(try members(of: owner, field: field))
            inverses.keep(owner, field, members)
            return members.contains(member)
        }
        let key = KeyEncoding.objectKey(owner) + KeyEncoding.objectKey(member)
        return try read(store: layout.storeOf[owner.entity.index]) { (txn) throws(KeelError) -> Bool in
            guard let tree = try self.tree(txn, name) else { return false }
            return try engine { () throws(StorageError) in try tree.contains(key) }
        }
    }

    private func allowsDangling(_ r: Relationship) -> Bool {
        guard let inv = r.inverse, let f = model[r.destination].field(named: inv),
            case .relationship(let inverse) = model[r.destination].properties[f]
        else { return true }
        return inverse.deleteRule == .noAction
    }

    private func verifyObject(
        _ o: StoredObject, _ inverses: InverseMembers, _ fault: (_ kind: String, _ tree: String?, _ message: String) -> Void
    ) throws(KeelError) {
        let entity = model[o.id.entity]
        let name = o.id.text(in: model)
        for (field, r) in entity.relationships {
            let targets: [ObjectID]
            if r.isToMany {
                targets = try members(of: o.id, field: field)
                if Set(targets).count != targets.count { fault("link", layout.links[o.id.entity.index][field], "\(name).\(r.name) lists a member twice") }
            } else {
                targets = o.values[field].objectID.map { [$0] } ?? []
            }
            for t in targets {
                let tn = t.text(in: model)
                guard model[r.destination].includes(t.entity) else {
                    fault("row", nil, "\(name).\(r.name) points to \(tn), not a \(model[r.destination].name)")
                    continue
                }
                guard let target = try object(t) else {
                    if !allowsDangling(r) { fault("dangling", nil, "\(name).\(r.name) points to missing \(tn)") }
                    continue
                }
                guard let invName = r.inverse, let invField = model[t.entity].field(named: invName),
                    case .relationship(let inv) = model[t.entity].properties[invField]
                else { continue }
                if inv.isToMany {
                    if !(try hasMember(t, field: invField, o.id, inverses)) {
                        fault("inverse", nil, "\(name).\(r.name) holds \(tn), but \(tn).\(invName) does not hold \(name)")
                    }
                } else if target.values[invField].objectID != o.id {
                    fault("inverse", nil, "\(name).\(r.name) holds \(tn), but \(tn).\(invName) is \(target.values[invField].objectID.map { $0.text(in: model) } ?? "null")")
                }
            }
        }
        for index in entity.indexes + entity.uniqueConstraints {
            let values = index.fields.map { o.values[$0] }
            try read(store: layout.storeOf[o.id.entity.index]) { (txn) throws(KeelError) in
                let tree = try engine { () throws(StorageError) in try txn.tree(TreeLayout.index(index)) }
                if index.isUnique {
                    if values.contains(where: \.isNull) { return }
                    if try TreeReading.holder(tree, key: KeyEncoding.valuesKey(values)) != o.id {
                        fault("unique", TreeLayout.index(index), "\(name) has no entry in \(TreeLayout.index(index))")
                    }
                } else {
                    var key = KeyEncoding.valuesKey(values)
                    KeyEncoding.appendObjectKey(o.id, to: &key)
                    let present = try engine { () throws(StorageError) in try tree?.contains(key) ?? false }
                    if !present { fault("index", TreeLayout.index(index), "\(name) has no entry in \(TreeLayout.index(index))") }
                }
            }
        }
    }

    /// Entries of link, index and unique trees that no row calls for; a link tree's keys that
    /// are no link entry (`stray`, to `report`).
    private func verifyTrees(
        _ fault: (_ kind: String, _ object: ObjectID?, _ tree: String?, _ message: String) -> Void, report: (StoreFault) -> Void
    ) throws(KeelError) {
        var seenLinks: Set<String> = []
        var seenIndexes: Set<String> = []
        for entity in model.entities {
            let store = layout.storeOf[entity.id.index]
            for (field, name) in layout.links[entity.id.index].enumerated() {
                guard let name, seenLinks.insert(name).inserted else { continue }
                // A link key starts with its owner's key, so an owner's entries are adjacent: each
                // owner is checked once, when its first entry comes, and only the last is kept.
                var lastOwner: ObjectID? = nil
                var stray = StrayKeys(store: model.configuration(of: entity.id), tree: name)
                try forEachEntry(store: store, tree: name) { (key, _) throws(KeelError) in
                    // An owner's key and a member's ID (`link/`) or position (`olink/`).
                    if let owner = KeyEncoding.objectID(key), owner.entity.index < model.entities.count,
                        key.count == KeyEncoding.objectKeySize + (name.hasPrefix("olink/") ? 8 : KeyEncoding.objectKeySize)
                    {
                        guard owner != lastOwner else { return }
                        lastOwner = owner
                        if try object(owner) == nil {
                            fault("link", owner, name, "\(name) holds entries of missing \(owner.text(in: model))")
                        }
                        return
                    }
                    stray.add(key, report: report) { key in
                        ("\(name) holds key \(KeyEncoding.readable(key)), which is no link entry of an object of the model", nil)
                    }
                }
                stray.finish(report)
                _ = field
            }
            for index in entity.indexes + entity.uniqueConstraints {
                let name = TreeLayout.index(index)
                guard seenIndexes.insert(name).inserted else { continue }
                try forEachEntry(store: store, tree: name) { (key, value) throws(KeelError) in
                    let holder = index.isUnique ? KeyEncoding.objectID(value) : KeyEncoding.objectID(key, at: key.count - KeyEncoding.objectKeySize)
                    let valueKey = index.isUnique ? key : Array(key.dropLast(KeyEncoding.objectKeySize))
                    if let holder, holder.entity.index >= model.entities.count {
                        fault(index.isUnique ? "unique" : "index", nil, name, "\(name) has an entry of entity #\(holder.entity.rawValue), which the model does not have")
                    } else if let holder, let o = try object(holder) {
                        if KeyEncoding.valuesKey(index.fields.map { o.values[$0] }) != valueKey {
                            fault(index.isUnique ? "unique" : "index", holder, name, "\(name) has a stale entry for \(holder.text(in: model))")
                        }
                    } else {
                        fault(index.isUnique ? "unique" : "index", holder, name, "\(name) has an entry of a missing object")
                    }
                }
            }
        }
    }

    /// Trees of a store file that the model does not keep in it (`stray`, one fault a tree,
    /// with its entries counted): every object, link, index and unique tree of the file's
    /// entities, and the store's own (`$meta`, `$history`, `$intents`), are expected; a store
    /// file is only ever opened with the model that made it (MODEL_MISMATCH otherwise), and no
    /// tree is ever dropped, so any other is damage or a bug.
    private func verifyCatalogs(report: (StoreFault) -> Void) throws(KeelError) {
        let configurations = Array(model.configurations.keys)
        var expected = [Set<String>](repeating: [TreeLayout.meta, TreeLayout.history, TreeLayout.intents], count: configurations.count)
        var keptIn: [String: Int] = [:]
        for entity in model.entities {
            let store = layout.storeOf[entity.id.index]
            let names = [layout.objects[entity.id.index]] + layout.links[entity.id.index].compactMap { $0 } + layout.keyedTrees[entity.id.index]
            for name in names {
                expected[store].insert(name)
                keptIn[name] = store
            }
        }
        for (store, configuration) in configurations.enumerated() {
            let names = try read(store: store) { (txn) throws(KeelError) in try engine { () throws(StorageError) in try txn.treeNames() } }
            for name in names where !expected[store].contains(name) {
                var entries = 0
                try forEachEntry(store: store, tree: name) { _, _ in entries += 1 }
                let elsewhere = keptIn[name].map { " (the model keeps it in \(configurations[$0]).keel)" } ?? ""
                report(StoreFault(
                    kind: "stray",
                    message: "\(configuration).keel holds tree \(name) (\(entries) entr\(entries == 1 ? "y" : "ies")), which the model does not keep there\(elsewhere)",
                    store: configuration, tree: name))
            }
        }
    }

    /// Every entry of tree `name` of `store`, in key order, read in chunks of `chunkSize`, each in
    /// its own engine read (so `body` may read this snapshot, and a large tree is never held
    /// whole). A missing tree has no entries.
    private func forEachEntry(
        store: Int, tree name: String, chunkSize: Int = 1024, _ body: ([UInt8], [UInt8]) throws(KeelError) -> Void
    ) throws(KeelError) {
        var from: [UInt8]? = []  // where the next chunk starts (empty: the first key); nil: done
        while let start = from {
            let (chunk, next) = try read(store: store) { (txn) throws(KeelError) -> ([([UInt8], [UInt8])], [UInt8]?) in
                guard let tree = try self.tree(txn, name) else { return ([], nil) }
                return try engine { () throws(StorageError) -> ([([UInt8], [UInt8])], [UInt8]?) in
                    var out: [([UInt8], [UInt8])] = []
                    var cursor = try tree.cursor()
                    var valid = try start.isEmpty ? cursor.seekFirst() : cursor.seek(to: start)
                    while valid, out.count < chunkSize {
                        out.append((try cursor.key, try cursor.value()))
                        valid = try cursor.next()
                    }
                    return (out, valid ? try cursor.key : nil)
                }
            }
            from = next
            for (key, value) in chunk { try body(key, value) }
        }
    }
}

/// Members of ordered to-many relationships read by verify's inverse check, kept for the next
/// object that asks about the same owner; at most `limit` members in all (then forgotten and
/// read again), so memory stays bounded whatever the store's size.
private final class InverseMembers {
    private struct Owner: Hashable {
        var id: ObjectID
        var field: Int
    }
    private var kept: [Owner: Set<ObjectID>] = [:]
    private var count = 0
    private let limit = 1 << 20

    func members(_ owner: ObjectID, _ field: Int) -> Set<ObjectID>? { kept[Owner(id: owner, field: field)] }

    func keep(_ owner: ObjectID, _ field: Int, _ members: Set<ObjectID>) {
        if count + members.count > limit {
            kept.removeAll(keepingCapacity: true)
            count = 0
        }
        kept[Owner(id: owner, field: field)] = members
        count += members.count
    }
}

/// One tree's stray keys (verify): the first `ObjectSnapshot.strayKeysListed` are a fault each,
/// the others are counted, and `finish` adds one fault for them naming the last.
private struct StrayKeys {
    let store: String
    let tree: String
    private(set) var count = 0
    private var last: [UInt8] = []

    init(store: String, tree: String) {
        self.store = store
        self.tree = tree
    }

    /// `describe` (the message, and the object the key names when known) runs only for a key
    /// that is listed.
    mutating func add(_ key: [UInt8], report: (StoreFault) -> Void, _ describe: ([UInt8]) -> (message: String, object: String?)) {
        count += 1
        guard count <= ObjectSnapshot.strayKeysListed else {
            last = key
            return
        }
        let (message, object) = describe(key)
        report(StoreFault(kind: "stray", message: message, store: store, tree: tree, object: object))
    }

    func finish(_ report: (StoreFault) -> Void) {
        let more = count - ObjectSnapshot.strayKeysListed
        guard more > 0 else { return }
        report(StoreFault(
            kind: "stray",
            message: "\(tree) holds \(more) more stray key\(more == 1 ? "" : "s") (\(count) in all), the last \(KeyEncoding.readable(last))",
            store: store, tree: tree))
    }
}

extension StoreFault {
    /// VERIFY's `CORRUPT` for `faults` (at least one), bounded like every error that lists
    /// problems (ProblemReport; Docs/Protocol.md, "Errors that list problems"): `details.faults`
    /// holds the first 100 (`json`), `details.faultCount` counts them all, and the message names
    /// the first three that fit — "verification found N faults: …; …; …; … and M more" — so a
    /// million faults are a reply of a few tens of kilobytes. The members of `extra` (an object)
    /// join `details`.
    public static func verificationError(_ faults: [StoreFault], details extra: JSON = [:]) -> KeelError {
        var report = ProblemReport()
        for fault in faults { report.add(fault) }
        return verificationError(report, details: extra)
    }

    /// The same from faults gathered into `report` (`ProblemReport.add(_:)`): the first of them
    /// kept, every one counted.
    public static func verificationError(_ report: ProblemReport, details extra: JSON = [:]) -> KeelError {
        var details = report.details("faults", countKey: "faultCount").objectValue ?? [:]
        for (key, value) in extra.objectValue ?? [:] { details[key] = value }
        return KeelError(
            .corrupt, "verification found \(report.count) fault\(report.count == 1 ? "" : "s"): \(report.listing(limit: 3))",
            details: .object(details))
    }
}

extension ProblemReport {
    /// Adds a verify fault: its wire form for `details.faults`, its description for the message.
    public mutating func add(_ fault: StoreFault) {
        add { (fault.json, fault.description) }
    }
}
