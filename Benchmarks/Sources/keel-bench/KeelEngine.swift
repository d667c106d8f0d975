// The Keel side, against the KeelStorage façade (`Store`). Compiled only with KEEL_ENGINE
// (Package.swift: keelEngineAvailable), i.e. once the engine is on main and merged here.
#if KEEL_ENGINE
    import KeelStorage

    /// Keel's storage engine in-process: page 4096, cache 64 MiB (the StoreOptions defaults,
    /// set explicitly here so a change of default cannot silently change the comparison).
    enum KeelEngine: BenchEngine {
        static let name = keelName
        static let fileName = "bench.keel"
        static let treeName = "kv"

        static func options(_ durability: Durability) -> StoreOptions {
            var options = StoreOptions()
            options.pageSize = 4096
            options.cacheSizeBytes = 64 << 20
            switch durability {
            case .full: options.syncMode = .full
            case .normal: options.syncMode = .normal
            }
            return options
        }

        static func openMainStore(directory: String) throws -> any MainStore {
            try KeelMainStore(directory: directory)
        }

        static func openCommitStore(directory: String, durability: Durability) throws -> any CommitStore {
            let store = try Store.open(at: directory + "/" + fileName, options: options(durability))
            try store.write { txn in _ = try txn.createTree(treeName) }
            return KeelCommitStore(store: store)
        }
    }

    /// Keel reports a missing tree as nil; here that can only be a bug, so it is an error.
    func kvTree(_ tree: Tree?) throws -> Tree {
        guard let tree else { throw BenchError("Keel: tree \"\(KeelEngine.treeName)\" is missing") }
        return tree
    }

    final class KeelMainStore: MainStore {
        let directory: String
        private let store: Store

        init(directory: String) throws {
            self.directory = directory
            store = try Store.open(at: directory + "/" + KeelEngine.fileName, options: KeelEngine.options(.full))
        }

        func bulkInsert(_ data: KeyValueSet, count: Int) throws {
            try store.write { txn in
                let tree = try txn.createTree(KeelEngine.treeName)
                for i in 0..<count {
                    try tree.put(key: data.key(i), value: data.value(i))
                }
            }
        }

        func checkpoint() throws { try store.checkpoint() }

        func pointReads(_ keys: [[UInt8]]) throws -> Tally {
            var tally = Tally()
            try store.read { txn in
                let tree = try kvTree(try txn.tree(KeelEngine.treeName))
                for key in keys {
                    let found: Bool? = try tree.withValue(forKey: key) { value in
                        tally.add(value)
                        return true
                    }
                    if found == true { tally.rows += 1 }
                }
            }
            return tally
        }

        func rangeScans(_ data: KeyValueSet, starts: [Int32], length: Int) throws -> Tally {
            var tally = Tally()
            try store.read { txn in
                let tree = try kvTree(try txn.tree(KeelEngine.treeName))
                var cursor = try tree.cursor()
                for i in starts {
                    var n = 0
                    var ok = try cursor.seek(to: data.key(Int(i)))
                    while ok {
                        tally.rows += 1
                        try cursor.withKey { tally.add($0) }
                        try cursor.withValue { tally.add($0) }
                        n += 1
                        if n == length { break }
                        ok = try cursor.next()
                    }
                }
            }
            return tally
        }

        func delete(_ data: KeyValueSet, indices: [Int32]) throws -> Int {
            var deleted = 0
            try store.write { txn in
                let tree = try kvTree(try txn.tree(KeelEngine.treeName))
                for i in indices where try tree.delete(key: data.key(Int(i))) {
                    deleted += 1
                }
            }
            return deleted
        }

        func compact() throws -> [String: Double] {
            let report = try store.compact()
            let stats = try store.statistics()
            return [
                "reportBytesBefore": Double(report.bytesBefore), "reportBytesAfter": Double(report.bytesAfter),
                "reportPageFileBytesBefore": Double(report.pageFileBytesBefore),
                "reportPageFileBytesAfter": Double(report.pageFileBytesAfter), "reportEntries": Double(report.entries),
                "fileBytes": Double(stats.fileBytes), "logBytes": Double(stats.logBytes),
                "pageCount": Double(stats.pageCount), "freePageCount": Double(stats.freePageCount),
            ]
        }

        func fullScan() throws -> Tally {
            var tally = Tally()
            try store.read { txn in
                let tree = try kvTree(try txn.tree(KeelEngine.treeName))
                var cursor = try tree.cursor()
                var ok = try cursor.seekFirst()
                while ok {
                    tally.rows += 1
                    try cursor.withKey { tally.add($0) }
                    try cursor.withValue { tally.add($0) }
                    ok = try cursor.next()
                }
            }
            return tally
        }

        func close() throws { try store.close() }
    }

    /// One Store shared by every committing thread: `write` calls from many threads serialise on
    /// the writer and share fsyncs (group commit).
    struct KeelCommitStore: CommitStore {
        let store: Store

        func makeSession() throws -> any CommitSession { KeelCommitSession(store: store) }

        func keyCount() throws -> Int {
            var count = 0
            try store.read { txn in
                var cursor = try kvTree(try txn.tree(KeelEngine.treeName)).cursor()
                var ok = try cursor.seekFirst()
                while ok {
                    count += 1
                    ok = try cursor.next()
                }
            }
            return count
        }

        func counters() throws -> [String: Double] {
            let stats = try store.statistics()
            return ["logSyncs": Double(stats.logSyncs), "checkpoints": Double(stats.checkpoints)]
        }

        func close() throws { try store.close() }
    }

    struct KeelCommitSession: CommitSession {
        let store: Store

        func commit(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws {
            try store.write { txn in
                try kvTree(try txn.tree(KeelEngine.treeName)).put(key: key, value: value)
            }
        }
    }
#endif
