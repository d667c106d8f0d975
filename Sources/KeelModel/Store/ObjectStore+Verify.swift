// The object layer's consistency check (what `keelctl verify` and the randomized tests rely on):
// every row decodes, every relationship agrees with its inverse on both sides, link trees hold
// no entries of missing owners, and index and unique trees hold exactly the entries the rows
// call for. Returns the faults found; an empty list means consistent.
//
// A to-one or to-many target that no longer exists is a fault unless the relationship's
// inverse has delete rule `noAction` (or there is no inverse): that is the dangling reference
// spec/model.md allows.

public import KeelStorage

/// One inconsistency found by a check: the object layer's (`verify`) or a store file's page and
/// tree checks (`verifyAll`, kind `page`), with what it concerns when known.
public struct StoreFault: Sendable, Hashable, CustomStringConvertible {
    /// `page` (a store file's pages, trees or free list), `row`, `inverse`, `dangling`, `link`,
    /// `index`, `unique`, or `read` (a check stopped by an error).
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
        let snapshot = try snapshot()
        defer { snapshot.close() }
        return try snapshot.verify(progress: progress)
    }
}

extension ObjectSnapshot {
    /// The object layer's checks; reports objects checked against the objects stored.
    public func verify(progress: ProgressHandler = { _ in }) throws(KeelError) -> [StoreFault] {
        var faults: [StoreFault] = []
        func fault(_ kind: String, _ object: ObjectID?, _ tree: String?, _ message: String) {
            faults.append(StoreFault(
                kind: kind, message: message, store: object.map { model.configuration(of: $0.entity) }, tree: tree,
                object: object.map { $0.text(in: model) }))
        }
        let roots = model.entities.filter { $0.parent == nil }
        var total: UInt64 = 0
        for root in roots { total += UInt64((try? count(root.id, includeSubentities: true)) ?? 0) }
        var done: UInt64 = 0
        // Damage that stops a walk (a row or key that cannot be read) is a fault of its own; the
        // other entities and the trees are still checked.
        for root in roots {
            do throws(KeelError) {
                try scan(root.id, includeSubentities: true) { (o) throws(KeelError) -> Bool in
                    done += 1
                    if done % 4096 == 0 { progress(WorkProgress(task: "checking objects", done: done, total: total)) }
                    try verifyObject(o) { kind, tree, message in fault(kind, o.id, tree, message) }
                    return true
                }
            } catch {
                faults.append(StoreFault(
                    kind: "read", message: "reading the \(root.name) objects stopped: \(error.message)",
                    store: model.configuration(of: root.id), tree: nil, object: nil))
            }
        }
        progress(WorkProgress(task: "checking objects", done: done, total: max(done, total)))
        do throws(KeelError) {
            try verifyTrees(fault)
        } catch {
            faults.append(StoreFault(kind: "read", message: "checking the indexes and links stopped: \(error.message)", store: nil, tree: nil, object: nil))
        }
        return faults
    }

    private func allowsDangling(_ r: Relationship) -> Bool {
        guard let inv = r.inverse, let f = model[r.destination].field(named: inv),
            case .relationship(let inverse) = model[r.destination].properties[f]
        else { return true }
        return inverse.deleteRule == .noAction
    }

    private func verifyObject(_ o: StoredObject, _ fault: (_ kind: String, _ tree: String?, _ message: String) -> Void) throws(KeelError) {
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
                    if !(try members(of: t, field: invField)).contains(o.id) {
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

    /// Entries of link, index and unique trees that no row calls for.
    private func verifyTrees(_ fault: (_ kind: String, _ object: ObjectID?, _ tree: String?, _ message: String) -> Void) throws(KeelError) {
        var seenLinks: Set<String> = []
        var seenIndexes: Set<String> = []
        for entity in model.entities {
            let store = layout.storeOf[entity.id.index]
            for (field, name) in layout.links[entity.id.index].enumerated() {
                guard let name, seenLinks.insert(name).inserted else { continue }
                let owners = try keys(store: store, tree: name).compactMap { KeyEncoding.objectID($0) }
                for owner in Set(owners) where try object(owner) == nil {
                    fault("link", owner, name, "\(name) holds entries of missing \(owner.text(in: model))")
                }
                _ = field
            }
            for index in entity.indexes + entity.uniqueConstraints {
                let name = TreeLayout.index(index)
                guard seenIndexes.insert(name).inserted else { continue }
                for (key, value) in try entries(store: store, tree: name) {
                    let holder = index.isUnique ? KeyEncoding.objectID(value) : KeyEncoding.objectID(key, at: key.count - KeyEncoding.objectKeySize)
                    let valueKey = index.isUnique ? key : Array(key.dropLast(KeyEncoding.objectKeySize))
                    if let holder, let o = try object(holder) {
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

    private func keys(store: Int, tree name: String) throws(KeelError) -> [[UInt8]] {
        try entries(store: store, tree: name).map(\.0)
    }

    private func entries(store: Int, tree name: String) throws(KeelError) -> [([UInt8], [UInt8])] {
        try read(store: store) { (txn) throws(KeelError) -> [([UInt8], [UInt8])] in
            guard let tree = try engine({ () throws(StorageError) in try txn.tree(name) }) else { return [] }
            return try engine { () throws(StorageError) -> [([UInt8], [UInt8])] in
                var out: [([UInt8], [UInt8])] = []
                var cursor = try tree.cursor()
                var valid = try cursor.seekFirst()
                while valid {
                    out.append((try cursor.key, try cursor.value()))
                    valid = try cursor.next()
                }
                return out
            }
        }
    }
}
