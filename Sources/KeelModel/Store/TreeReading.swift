// Reading objects out of engine trees, shared by snapshots (ObjectSnapshot) and saves
// (SaveSession): rows by key, link-tree members, scans by entity range.

import KeelStorage

/// Runs engine calls, turning their errors into the object layer's.
@inline(__always)
func engine<R>(_ body: () throws(StorageError) -> R) throws(KeelError) -> R {
    do throws(StorageError) {
        return try body()
    } catch {
        throw KeelError(error)
    }
}

/// Runs a closure-taking engine API (`Store.write`, `Snapshot.read`: untyped throws), keeping the
/// object layer's errors as they are.
func untyped<R>(_ body: () throws -> R) throws(KeelError) -> R {
    do {
        return try body()
    } catch let error as KeelError {
        throw error
    } catch let error as StorageError {
        throw KeelError(error)
    } catch {
        throw KeelError(.internal, "unexpected error: \(error)")
    }
}

enum TreeReading {
    /// The row of `id` in its object tree.
    static func row(_ tree: Tree?, _ id: ObjectID, fieldCount: Int, key: inout [UInt8]) throws(KeelError) -> StoredObject? {
        guard let tree else { return nil }
        key.removeAll(keepingCapacity: true)
        KeyEncoding.appendObjectKey(id, to: &key)
        let result = try engine { () throws(StorageError) in
            try tree.withValue(forKey: key) { bytes in
                Result { () throws(KeelError) -> StoredObject in try RowCodec.decode(bytes, id: id, fieldCount: fieldCount) }
            }
        }
        return try result?.get()
    }

    /// The rows of many objects at once: `ids` looked up in `order` (ascending key order, as
    /// `ObjectSnapshot.keyOrder` gives), with their leaves' cache misses overlapped
    /// (`Cursor.lookUpEach`). The result is indexed like `ids`; nil where an object has no row.
    static func rows(
        _ tree: Tree?, _ ids: [ObjectID], order: [Int], fieldCount: (ObjectID) -> Int
    ) throws(KeelError) -> [StoredObject?] {
        var found = [StoredObject?](filling: nil, count: ids.count)
        try rows(tree, ids, order: order, fieldCount: fieldCount, into: &found)
        return found
    }

    /// The rows of the IDs at `order`'s positions (ascending key order; the other positions of
    /// `ids` are not looked up), each written to its position in `found` (indexed like `ids`);
    /// a position whose object has no row is left as it was. `ObjectSnapshot.objects` looks up
    /// each object tree's share of its IDs this way, into one result.
    static func rows(
        _ tree: Tree?, _ ids: [ObjectID], order: [Int], fieldCount: (ObjectID) -> Int, into found: inout [StoredObject?]
    ) throws(KeelError) {
        guard let tree, !order.isEmpty else { return }
        let size = KeyEncoding.objectKeySize
        var keys: [UInt8] = []
        keys.reserveCapacity(order.count * size)
        for i in order { KeyEncoding.appendObjectKey(ids[i], to: &keys) }
        var failure: KeelError?
        try engine { () throws(StorageError) in
            var cursor = try tree.cursor()
            let done: Result<Void, StorageError> = keys.withUnsafeBytes { all in
                Result { () throws(StorageError) in
                    try cursor.lookUpEach(order.count, key: { UnsafeRawBufferPointer(rebasing: all[($0 * size)..<(($0 + 1) * size)]) }) { j, value in
                        guard failure == nil else { return }
                        let i = order[j]
                        do throws(KeelError) {
                            found[i] = try RowCodec.decode(value, id: ids[i], fieldCount: fieldCount(ids[i]))
                        } catch {
                            failure = error
                        }
                    }
                }
            }
            try done.get()
        }
        if let failure { throw failure }
    }

    /// The members of `id` in a link tree: `link/` keys are source·destination, `olink/` keys
    /// source·position with the destination as value (so members come in position order).
    static func members(_ tree: Tree?, _ id: ObjectID, ordered: Bool) throws(KeelError) -> [ObjectID] {
        var lookup = try MemberLookup(tree, ordered: ordered)
        return try lookup.members(id)
    }

    /// Calls `body` with each member and its position (ordered) or 0.
    static func forEachLink(
        _ tree: Tree?, _ id: ObjectID, ordered: Bool, _ body: (ObjectID, UInt64) throws(KeelError) -> Void
    ) throws(KeelError) {
        var lookup = try MemberLookup(tree, ordered: ordered)
        try lookup.forEach(id, body)
    }

    /// Link-tree members of many owners with one cursor: each owner's entries
    /// are found by seeking forward from where the previous owner's ended (`Cursor.seekForward`),
    /// so owners asked in ascending key order (`ObjectSnapshot.keyOrder`) whose entries share a
    /// leaf cost a leaf search each, and owners without members — the common case of a to-many
    /// on a fetched row — a comparison or two, instead of a descent from the root each. Owners
    /// in any order give the same members (a target behind the cursor is a plain seek).
    struct MemberLookup {
        private let tree: Tree?
        private let ordered: Bool
        private var cursor: Cursor?
        private var prefix: [UInt8] = []

        init(_ tree: Tree?, ordered: Bool) throws(KeelError) {
            self.tree = tree
            self.ordered = ordered
            cursor = try tree.map { (t) throws(KeelError) in try engine { () throws(StorageError) in try t.cursor() } }
            prefix.reserveCapacity(KeyEncoding.objectKeySize)
        }

        /// The members of `id`, in key order (`olink/`: position order).
        mutating func members(_ id: ObjectID) throws(KeelError) -> [ObjectID] {
            var out: [ObjectID] = []
            try forEach(id) { member, _ in out.append(member) }
            return out
        }

        /// Calls `body` with each member of `id` and its position (ordered) or 0.
        mutating func forEach(_ id: ObjectID, _ body: (ObjectID, UInt64) throws(KeelError) -> Void) throws(KeelError) {
            guard cursor != nil, let tree else { return }
            prefix.removeAll(keepingCapacity: true)
            KeyEncoding.appendObjectKey(id, to: &prefix)
            let prefix = prefix
            let ordered = ordered
            var valid = try engine { () throws(StorageError) in try cursor?.seekForward(to: prefix) ?? false }
            while valid {
                let entry = try engine { () throws(StorageError) -> (ObjectID?, UInt64)? in
                    try cursor?.withEntry { k, v -> (ObjectID?, UInt64)? in
                        guard k.count == KeyEncoding.objectKeySize + (ordered ? 8 : KeyEncoding.objectKeySize), k.starts(with: prefix)
                        else { return nil }
                        if ordered {
                            return (KeyEncoding.objectID(v), KeyEncoding.readU64(k, at: KeyEncoding.objectKeySize))
                        }
                        return (KeyEncoding.objectID(k, at: KeyEncoding.objectKeySize), 0)
                    } ?? nil
                }
                guard let (member, position) = entry else { break }
                guard let member else { throw KeelError(.corrupt, "damaged link entry in \(tree.name)") }
                try body(member, position)
                valid = try engine { () throws(StorageError) in try cursor?.next() ?? false }
            }
        }
    }

    /// How many members `id` has (keys only, nothing decoded).
    static func memberCount(_ tree: Tree?, _ id: ObjectID) throws(KeelError) -> Int {
        guard let tree else { return 0 }
        let prefix = KeyEncoding.objectKey(id)
        return try engine { () throws(StorageError) -> Int in
            var cursor = try tree.cursor()
            var valid = try cursor.seek(to: prefix)
            var n = 0
            while valid {
                guard try cursor.withKey({ $0.starts(with: prefix) }) else { break }
                n += 1
                valid = try cursor.next()
            }
            return n
        }
    }

    /// The concrete entities a scan of `entity` covers, in ID order.
    static func scanEntities(_ model: Model, _ entity: EntityID, includeSubentities: Bool) -> [EntityID] {
        includeSubentities ? model[entity].family.sorted() : [entity]
    }

    /// Every row of the given entities in ID order; `body` returns false to stop.
    static func scan(
        _ tree: Tree?, entities: [EntityID], model: Model, _ body: (StoredObject) throws(KeelError) -> Bool
    ) throws(KeelError) {
        guard let tree else { return }
        var cursor = try engine { () throws(StorageError) in try tree.cursor() }
        for entity in entities {
            let prefix = KeyEncoding.entityPrefix(entity)
            let fieldCount = model[entity].properties.count
            var valid = try engine { () throws(StorageError) in try cursor.seek(to: prefix) }
            while valid {
                let decoded = try engine { () throws(StorageError) -> Result<StoredObject, KeelError>? in
                    try cursor.withEntry { k, v -> Result<StoredObject, KeelError>? in
                        guard k.count >= 2, k[0] == prefix[0], k[1] == prefix[1] else { return nil }
                        guard let id = KeyEncoding.objectID(k) else {
                            return .failure(KeelError(.corrupt, "damaged object key in \(tree.name)"))
                        }
                        return Result { () throws(KeelError) -> StoredObject in try RowCodec.decode(v, id: id, fieldCount: fieldCount) }
                    }
                }
                guard let decoded else { break }
                guard try body(try decoded.get()) else { return }
                valid = try engine { () throws(StorageError) in try cursor.next() }
            }
        }
    }

    /// Up to `limit` rows of one entity from object number `from` on, in ID order.
    static func chunk(_ tree: Tree?, entity: EntityID, from: UInt64, limit: Int, model: Model) throws(KeelError) -> [StoredObject] {
        guard let tree else { return [] }
        var out: [StoredObject] = []
        var start = KeyEncoding.entityPrefix(entity)
        KeyEncoding.appendU64(from, to: &start)
        let fieldCount = model[entity].properties.count
        var cursor = try engine { () throws(StorageError) in try tree.cursor() }
        var valid = try engine { () throws(StorageError) in try cursor.seek(to: start) }
        while valid, out.count < limit {
            let decoded = try engine { () throws(StorageError) -> Result<StoredObject, KeelError>? in
                try cursor.withEntry { k, v -> Result<StoredObject, KeelError>? in
                    guard k.count >= 2, k[0] == start[0], k[1] == start[1] else { return nil }
                    guard let id = KeyEncoding.objectID(k) else {
                        return .failure(KeelError(.corrupt, "damaged object key in \(tree.name)"))
                    }
                    return Result { () throws(KeelError) -> StoredObject in try RowCodec.decode(v, id: id, fieldCount: fieldCount) }
                }
            }
            guard let decoded else { break }
            out.append(try decoded.get())
            valid = try engine { () throws(StorageError) in try cursor.next() }
        }
        return out
    }

    /// How many rows the given entities have (keys only).
    static func count(_ tree: Tree?, entities: [EntityID]) throws(KeelError) -> Int {
        guard let tree else { return 0 }
        return try engine { () throws(StorageError) -> Int in
            var cursor = try tree.cursor()
            var n = 0
            for entity in entities {
                let prefix = KeyEncoding.entityPrefix(entity)
                var valid = try cursor.seek(to: prefix)
                while valid {
                    guard try cursor.withKey({ $0.count >= 2 && $0[0] == prefix[0] && $0[1] == prefix[1] }) else { break }
                    n += 1
                    valid = try cursor.next()
                }
            }
            return n
        }
    }

    /// The holder of a unique key.
    static func holder(_ tree: Tree?, key: [UInt8]) throws(KeelError) -> ObjectID? {
        guard let tree else { return nil }
        guard let value = try engine({ () throws(StorageError) in try tree.get(key) }) else { return nil }
        guard let id = KeyEncoding.objectID(value), value.count == KeyEncoding.objectKeySize else {
            throw KeelError(.corrupt, "damaged unique entry in \(tree.name)")
        }
        return id
    }
}
