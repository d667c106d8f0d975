// Opening a data folder: one engine store per configuration, the model check against the
// primary's `$meta`, recovery of a multi-store save cut short by a crash (redo intents,
// Decision 0004), and the ID allocator's reserved marks.

public import Logging
import KeelStorage

extension ObjectStore {
    /// The object layer's format, in the primary's `$meta format`. 1: every save's history record
    /// and counter in the primary. 2: in the save's home store (a single-store save's own store).
    /// 3: rows may be in row format 2 (RowCodec.swift), which builds of format 2 cannot read.
    /// An older folder opens as is (its history and rows are all readable here) and is marked 3
    /// at its first writable open, before any row is written, so a format-2 build refuses it by
    /// name ("written by object-store format 3; this build reads formats 1 to 2") instead of
    /// meeting a row it calls damaged; a folder of a newer format than this build reads is
    /// refused the same way. A read-only open writes nothing, so the folder stays readable by the
    /// build that wrote it. (Builds from before format 2 do not check the mark: open a format-2
    /// or later folder only with a format-2 build or newer.)
    static let formatVersion: UInt64 = 3

    /// Opens (or creates) the data folder `directory` for `model`. Refuses a folder created with
    /// another model (`MODEL_MISMATCH`, naming the first differences).
    public static func open(
        directory: String, model: Model, options: ObjectStoreOptions = ObjectStoreOptions(),
        logger: Logger = Logger(label: "keel.objects")
    ) throws(KeelError) -> ObjectStore {
        let fs = options.storage.fileSystem
        try engine { () throws(StorageError) in try fs.createDirectory(directory) }
        var stores: [Store] = []
        do throws(KeelError) {
            // A folder's store files are made together, the primary (which records the model)
            // first: one missing beside others was removed or lost, and opening it would make it
            // anew, empty — its objects silently gone. Only a first open cut short (the primary
            // records no model yet) may still lack the others.
            let names = model.configurations.keys.map { $0 + ".keel" }
            let present = names.map { fs.fileExists(directory + "/" + $0) }
            let missing = zip(names, present).filter { !$1 }.map(\.0)
            if !missing.isEmpty, present.contains(true), !present[0] {
                throw KeelError(
                    .corrupt,
                    "the data folder \(directory) holds \(zip(names, present).filter { $1 }.map(\.0).joined(separator: ", ")) but not \(names[0]), the store file that records its model: it was removed or lost. Restore the folder from a backup",
                    details: ["missing": .array(missing.map { .string($0) })])
            }
            for (index, name) in names.enumerated() {
                if index == 1, !missing.isEmpty, try readMeta(stores[0], MetaKey.modelHash) != nil {
                    try checkModel(model, primary: stores[0], readOnly: true)  // another model is said first
                    throw KeelError(
                        .corrupt,
                        "the data folder \(directory) lacks \(missing.joined(separator: ", ")): a store file of its model was removed or lost, and opening the folder would make it anew, empty. Restore the folder from a backup",
                        details: ["missing": .array(missing.map { .string($0) })])
                }
                let path = directory + "/" + name
                stores.append(try engine { () throws(StorageError) in try Store.open(at: path, options: options.storage, logger: logger) })
            }
            try checkModel(model, primary: stores[0], readOnly: options.storage.readOnly)
            try checkFormat(stores[0], readOnly: options.storage.readOnly)
            if !options.storage.readOnly { try recoverIntents(stores, logger: logger) }
            let layout = TreeLayout(model: model)
            var ranges: [IDRange] = []
            for entity in model.entities {
                let store = stores[layout.storeOf[entity.id.index]]
                let reserved = try readMeta(store, TreeLayout.ids(entity)).flatMap(KeyEncoding.readU64) ?? 0
                ranges.append(IDRange(next: reserved + 1, reserved: reserved))
            }
            var last: UInt64 = 0
            for store in stores { last = max(last, try untyped { try store.read { txn in try lastSave(txn) } }) }
            var stored: [UInt64] = []
            for entity in model.entities {
                stored.append(try lastNumber(stores[layout.storeOf[entity.id.index]], tree: layout.objects[entity.id.index], entity: entity.id))
            }
            return ObjectStore(model: model, directory: directory, options: options, logger: logger, stores: stores,
                               lastSave: last, stored: stored, ids: ranges)
        } catch {
            for s in stores { try? s.close() }
            throw error
        }
    }

    /// The highest object number stored for `entity` (0 when none).
    static func lastNumber(_ store: Store, tree name: String, entity: EntityID) throws(KeelError) -> UInt64 {
        try untyped { () throws -> UInt64 in
            try store.read { txn in
                guard let tree = try txn.tree(name) else { return 0 }
                var cursor = try tree.cursor()
                var end = KeyEncoding.entityPrefix(entity)
                end += [UInt8](repeating: 0xFF, count: 8)
                var valid = try cursor.seek(to: end)
                if valid, let id = KeyEncoding.objectID(try cursor.key), id.entity == entity { return id.number }
                valid = valid ? try cursor.previous() : try cursor.seekLast()
                guard valid, let id = KeyEncoding.objectID(try cursor.key), id.entity == entity else { return 0 }
                return id.number
            }
        }
    }

    static func readMeta(_ store: Store, _ name: String) throws(KeelError) -> [UInt8]? {
        try untyped { try store.read { txn in try txn.tree(TreeLayout.meta)?.get(Array(name.utf8)) } }
    }

    /// A new folder records the model; an existing one must have been created with the same.
    static func checkModel(_ model: Model, primary: Store, readOnly: Bool) throws(KeelError) {
        guard let stored = try readMeta(primary, MetaKey.modelHash) else {
            if readOnly { return }
            try untyped {
                try primary.write { txn in
                    let meta = try txn.openTree(TreeLayout.meta)
                    try meta.put(key: Array(MetaKey.modelHash.utf8), value: Array(model.hash.utf8))
                    try meta.put(key: Array(MetaKey.modelJSON.utf8), value: Array(model.canonical.serialized().utf8))
                    try meta.put(key: Array(MetaKey.format.utf8), value: KeyEncoding.u64(formatVersion))
                }
            }
            return
        }
        let storedHash = String(decoding: stored, as: UTF8.self)
        if storedHash == model.hash { return }
        var differences: [String]
        do throws(KeelError) {
            let text = try readMeta(primary, MetaKey.modelJSON).map { String(decoding: $0, as: UTF8.self) } ?? ""
            differences = model.differences(from: try ModelLoader.load(text: text))
        } catch {
            differences = ["the stored model cannot be read back (\(error.message))"]
        }
        if differences.isEmpty { differences = ["the model's hash differs (\(storedHash) → \(model.hash))"] }
        let shown = differences.prefix(5).joined(separator: "; ")
        throw KeelError(
            .modelMismatch,
            "the data folder was created with another model: \(shown)\(differences.count > 5 ? "; …" : "")",
            details: ["storedHash": .string(storedHash), "modelHash": .string(model.hash),
                      "differences": .array(differences.map { .string($0) })])
    }

    /// Refuses a folder written by a newer format than this build's, and marks an older one with
    /// this build's (the changes from 1 to 2 and 2 to 3 need no rewriting: see `formatVersion`).
    static func checkFormat(_ primary: Store, readOnly: Bool) throws(KeelError) {
        let stored = try readMeta(primary, MetaKey.format).flatMap(KeyEncoding.readU64) ?? 1
        if stored > formatVersion {
            throw KeelError(
                .corrupt,
                "the data folder was written by object-store format \(stored); this build reads formats 1 to \(formatVersion) (open it with a newer build)",
                details: ["format": .int(Int64(clamping: stored)), "supported": .int(Int64(formatVersion))])
        }
        guard stored < formatVersion, !readOnly else { return }
        try untyped {
            try primary.write { txn in
                try txn.openTree(TreeLayout.meta).put(key: Array(MetaKey.format.utf8), value: KeyEncoding.u64(formatVersion))
            }
        }
    }

    /// Completes every multi-store save whose first store committed but whose other stores did
    /// not (the process stopped in between): replays the intent's operations on each store whose
    /// `applied` mark is below the save id, then deletes the intent.
    static func recoverIntents(_ stores: [Store], logger: Logger) throws(KeelError) {
        for (s, store) in stores.enumerated() {
            let intents = try untyped { () throws -> [(UInt64, [UInt8])] in
                try store.read { txn in
                    guard let tree = try txn.tree(TreeLayout.intents) else { return [] }
                    var out: [(UInt64, [UInt8])] = []
                    var cursor = try tree.cursor()
                    var valid = try cursor.seekFirst()
                    while valid {
                        let key = try cursor.key
                        out.append((KeyEncoding.readU64(key) ?? 0, try cursor.value()))
                        valid = try cursor.next()
                    }
                    return out
                }
            }
            for (saveID, bytes) in intents {
                let ops = try IntentRecord.decode(bytes, storeCount: stores.count)
                let targets = Set(ops.map(\.store)).sorted()
                for t in targets {
                    let applied = try readMeta(stores[t], MetaKey.applied).flatMap(KeyEncoding.readU64) ?? 0
                    guard applied < saveID else { continue }
                    logger.notice("completing an interrupted multi-store save", metadata: [
                        "txn.id": "\(saveID)", "store.path": "\(stores[t].path)", "intent.store": "\(stores[s].path)",
                    ])
                    try untyped { () throws in
                        try stores[t].write { txn in
                            for op in ops where op.store == t {
                                let tree = try txn.openTree(op.tree)
                                if let value = op.value { try tree.put(key: op.key, value: value) } else { try tree.delete(key: op.key) }
                            }
                            try txn.openTree(TreeLayout.meta).put(key: Array(MetaKey.applied.utf8), value: KeyEncoding.u64(saveID))
                        }
                    }
                }
                try untyped { try store.write { txn in _ = try txn.openTree(TreeLayout.intents).delete(key: KeyEncoding.u64(saveID)) } }
            }
        }
    }
}
