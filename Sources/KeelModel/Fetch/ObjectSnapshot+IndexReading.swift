// Index range reads on a store snapshot. Entries are read in chunks (64, then 256), each in
// its own engine read together with the rows it names (so `body` may read the snapshot again
// between chunks, as `scan` allows). An index key is the values' keys then the object key; a
// unique key the values' keys, with the object key as its value.
//
// Descending reads keep objects with equal keys in ascending ID order (the tie order of
// `ObjectOrdering`): a chunk never ends inside a run of equal values, and each run is reversed.

import KeelStorage

extension ObjectSnapshot: IndexReading {
    static let indexChunkSize = 256
    static let firstChunkSize = 64

    public var indexReading: (any IndexReading)? { self }
    public var objectSnapshot: ObjectSnapshot? { self }

    /// Where a chunked range read stands: the range being read and the last key delivered.
    struct IndexPosition {
        var range: Int
        var after: [UInt8]?
        var done = false
    }

    public func indexRows(
        _ index: Index, ranges: [KeyRange], reverse: Bool, family: Set<EntityID>, expected: Int?,
        _ body: (StoredObject) throws(KeelError) -> Bool
    ) throws(KeelError) {
        try checkEntity(index.declaredIn)
        let store = layout.storeOf[index.declaredIn.index]
        let objectTree = layout.objects[index.declaredIn.index]
        var position = IndexPosition(range: reverse ? ranges.count - 1 : 0)
        // Small first chunks, growing: a `limit 10` reads about 10 rows, a long read 256 at a time.
        // Without a limit the first chunk is 64 rows: a fetch materializes its first rows in one
        // read anyway (ObjectContext.pinnedRows), and an equality matching a few dozen objects
        // is one chunk, not two (a second engine read, index seek and row cursor).
        var size = max(1, min(expected ?? Self.firstChunkSize, Self.firstChunkSize))
        while !position.done {
            var rows = try read(store: store) { (txn) throws(KeelError) -> [StoredObject] in
                let tree = try self.tree(txn, layout.indexTree(index))
                guard let tree else {
                    position.done = true
                    return []
                }
                let ids = try Self.indexChunk(tree, index, ranges, reverse: reverse, family: family, &position, size: size)
                size = min(size * 4, Self.indexChunkSize)
                if ids.isEmpty { return [] }  // nothing to look up: no object tree, no cursor
                // The rows looked up in key order (their leaves prefetched a few at a time),
                // handed on in index order.
                var found = try TreeReading.rows(
                    try self.tree(txn, objectTree), ids, order: Self.keyOrder(ids), fieldCount: { layout.fieldCounts[$0.entity.index] })
                // Last row first: they are handed on by `popLast`, in index order. Each is moved
                // out of `found` (`take`), not copied: no reference to its values taken here and
                // dropped again when `found` goes.
                var rows: [StoredObject] = []
                rows.reserveCapacity(ids.count)
                for i in found.indices.reversed() {
                    guard let row = found[i].take() else {
                        throw KeelError(.corrupt, "\(TreeLayout.index(index)) names \(ids[i].text(in: model)), which has no row")
                    }
                    rows.append(row)
                }
                return rows
            }
            // Each row is moved out of the chunk before `body` sees it, so a consumer that keeps it
            // (the materializer) holds the only reference to its values and changes them in place
            // instead of copying them (a copy per row, with every value retained).
            while let row = rows.popLast() { guard try body(row) else { return } }
        }
    }

    public func indexIDs(
        _ index: Index, ranges: [KeyRange], family: Set<EntityID>, _ body: (ObjectID) throws(KeelError) -> Bool
    ) throws(KeelError) {
        try checkEntity(index.declaredIn)
        let store = layout.storeOf[index.declaredIn.index]
        var position = IndexPosition(range: 0)
        while !position.done {
            let ids = try read(store: store) { (txn) throws(KeelError) -> [ObjectID] in
                let tree = try self.tree(txn, layout.indexTree(index))
                guard let tree else {
                    position.done = true
                    return []
                }
                return try Self.indexChunk(tree, index, ranges, reverse: false, family: family, &position, size: 4096)
            }
            for id in ids { guard try body(id) else { return } }
        }
    }

    /// Counts entries in one engine read with one cursor; stops at `cap`. When `family` holds
    /// every entity that can have keys in the index (the declaring entity's whole family), no key
    /// needs its entity looked at: each leaf's keys in a range are counted by a binary search for
    /// the range's upper bound (`Cursor.countEntries`). Otherwise the cursor walks the leaves,
    /// looking at each key in place (no key copied, no ID list built).
    public func indexCount(_ index: Index, ranges: [KeyRange], family: Set<EntityID>, cap: Int) throws(KeelError) -> Int {
        try checkEntity(index.declaredIn)
        guard cap > 0 else { return 0 }
        let everyKey = model.entities[index.declaredIn.index].familySet.isSubset(of: family)
        let counts = Self.familyMask(everyKey ? [] : family)
        let unique = index.isUnique
        return try read(store: layout.storeOf[index.declaredIn.index]) { (txn) throws(KeelError) -> Int in
            let tree = try self.tree(txn, layout.indexTree(index))
            guard let tree else { return 0 }
            return try engine { () throws(StorageError) -> Int in
                var cursor = try tree.cursor()
                var n = 0
                if everyKey {
                    for range in ranges {
                        guard try cursor.seek(to: range.lower) else { continue }
                        n += try cursor.countEntries(below: range.upper, limit: cap - n)
                        if n >= cap { return n }
                    }
                    return n
                }
                // 1: counted, 0: not of the family.
                func classify(_ bytes: UnsafeRawBufferPointer, at: Int) -> Int {
                    guard at >= 0, bytes.count - at >= KeyEncoding.objectKeySize else { return 0 }
                    let e = Int(UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1]))
                    return counts.contains(e) ? 1 : 0
                }
                for range in ranges {
                    guard try cursor.seek(to: range.lower) else { continue }
                    // One walk over the leaves (Cursor.walk): each key looked at in place.
                    try cursor.walk { k, v -> Bool in
                        guard range.isBelowUpper(k) else { return false }
                        n += unique ? classify(v, at: 0) : classify(k, at: k.count - KeyEncoding.objectKeySize)
                        return n < cap
                    }
                    if n >= cap { return n }
                }
                return n
            }
        }
    }

    public func indexKeys(
        _ index: Index, ranges: [KeyRange], family: Set<EntityID>, _ body: (UnsafeRawBufferPointer) throws(KeelError) -> Bool
    ) throws(KeelError) -> Bool {
        try checkEntity(index.declaredIn)
        guard !index.isUnique else { return false }
        let everyKey = model.entities[index.declaredIn.index].familySet.isSubset(of: family)
        let keeps = Self.familyMask(everyKey ? [] : family)
        try read(store: layout.storeOf[index.declaredIn.index]) { (txn) throws(KeelError) in
            guard let tree = try self.tree(txn, layout.indexTree(index)) else { return }
            var failure: KeelError?
            try engine { () throws(StorageError) in
                var cursor = try tree.cursor()
                for range in ranges {
                    guard try cursor.seek(to: range.lower) else { continue }
                    var stopped = false
                    // One walk over the leaves (Cursor.walk): each key handed on in place.
                    try cursor.walk { k, _ -> Bool in
                        guard range.isBelowUpper(k) else { return false }
                        if !everyKey {
                            let at = k.count - KeyEncoding.objectKeySize
                            guard at >= 0, keeps.contains(Int(UInt16(k[at]) << 8 | UInt16(k[at + 1]))) else { return true }
                        }
                        do throws(KeelError) {
                            if try body(k) { return true }
                        } catch {
                            failure = error
                        }
                        stopped = true
                        return false
                    }
                    if stopped { return }
                }
            }
            if let failure { throw failure }
        }
        return true
    }

    public func treeSize(of index: Index) throws(KeelError) -> Int {
        try checkEntity(index.declaredIn)
        return try read(store: layout.storeOf[index.declaredIn.index]) { (txn) throws(KeelError) -> Int in
            try engine { () throws(StorageError) -> Int in try txn.tree(TreeLayout.index(index))?.count() ?? 0 }
        }
    }

    public func treeSize(objectsOf entity: EntityID) throws(KeelError) -> Int {
        try checkEntity(entity)
        return try read(store: layout.storeOf[entity.index]) { (txn) throws(KeelError) -> Int in
            try engine { () throws(StorageError) -> Int in try txn.tree(layout.objects[entity.index])?.count() ?? 0 }
        }
    }

    /// The next chunk of IDs from `position` on, advancing it.
    static func indexChunk(
        _ tree: Tree, _ index: Index, _ ranges: [KeyRange], reverse: Bool, family: Set<EntityID>,
        _ position: inout IndexPosition, size: Int = indexChunkSize
    ) throws(KeelError) -> [ObjectID] {
        if !reverse { return try forwardChunk(tree, index, ranges, family: family, &position, size: size) }
        var out: [(value: ArraySlice<UInt8>, id: ObjectID)] = []
        var cursor = try engine { () throws(StorageError) in try tree.cursor() }
        let unique = index.isUnique
        while position.range >= 0, position.range < ranges.count {
            let range = ranges[position.range]
            var valid: Bool
            if reverse {
                if let after = position.after {
                    valid = try engine { () throws(StorageError) in try cursor.seek(to: after) }
                    if valid { valid = try engine { () throws(StorageError) in try cursor.previous() } }
                } else if let upper = range.upper {
                    valid = try engine { () throws(StorageError) in try cursor.seek(to: upper) }
                    valid = try engine { () throws(StorageError) in valid ? try cursor.previous() : try cursor.seekLast() }
                } else {
                    valid = try engine { () throws(StorageError) in try cursor.seekLast() }
                }
            } else {
                let start = position.after.map { $0 + [0] } ?? range.lower
                valid = try engine { () throws(StorageError) in try cursor.seek(to: start) }
            }
            while valid {
                let entry = try engine { () throws(StorageError) -> (key: [UInt8], id: ObjectID?)? in
                    try cursor.withEntry { k, v -> (key: [UInt8], id: ObjectID?)? in
                        if reverse ? k.lexicographicallyPrecedes(range.lower) : !range.contains(k) { return nil }
                        let id = unique ? KeyEncoding.objectID(v) : KeyEncoding.objectID(k, at: k.count - KeyEncoding.objectKeySize)
                        return (Array(k), id)
                    }
                }
                guard let entry else { break }
                guard let id = entry.id else { throw KeelError(.corrupt, "damaged entry in \(tree.name)") }
                let value = unique ? entry.key[...] : entry.key.dropLast(KeyEncoding.objectKeySize)
                if reverse, out.count >= size, let last = out.last, last.value != value {
                    return Self.ascendingTies(out)
                }
                position.after = entry.key
                if family.contains(id.entity) { out.append((value, id)) }
                if !reverse, out.count >= size { return out.map(\.id) }
                valid = try engine { () throws(StorageError) in reverse ? try cursor.previous() : try cursor.next() }
            }
            position.range += reverse ? -1 : 1
            position.after = nil
        }
        position.done = true
        return reverse ? Self.ascendingTies(out) : out.map(\.id)
    }

    /// `indexChunk` in ascending order: one walk over the leaves per range (`Cursor.walk`), each
    /// key looked at in place — checked against the range's upper bound only (the walk starts at
    /// or after its lower one), its family looked up by entity number — and copied only for the
    /// last entry of the chunk, where the next chunk starts.
    static func forwardChunk(
        _ tree: Tree, _ index: Index, _ ranges: [KeyRange], family: Set<EntityID>, _ position: inout IndexPosition, size: Int
    ) throws(KeelError) -> [ObjectID] {
        var out: [ObjectID] = []
        let counted = familyMask(family)
        var cursor = try engine { () throws(StorageError) in try tree.cursor() }
        let unique = index.isUnique
        while position.range < ranges.count {
            let range = ranges[position.range]
            let start = position.after.map { $0 + [0] } ?? range.lower
            var damaged = false
            var full = false
            var after: [UInt8]? = nil
            try engine { () throws(StorageError) in
                guard try cursor.seek(to: start) else { return }
                try cursor.walk { k, v -> Bool in
                    guard range.isBelowUpper(k) else { return false }
                    guard let id = unique ? KeyEncoding.objectID(v) : KeyEncoding.objectID(k, at: k.count - KeyEncoding.objectKeySize)
                    else {
                        damaged = true
                        return false
                    }
                    guard counted.contains(id.entity.index) else { return true }
                    if out.isEmpty { out.reserveCapacity(min(size, indexChunkSize)) }  // none for an empty result
                    out.append(id)
                    guard out.count >= size else { return true }
                    after = [UInt8](k)
                    full = true
                    return false
                }
            }
            if damaged { throw KeelError(.corrupt, "damaged entry in \(tree.name)") }
            if full {
                position.after = after
                return out
            }
            position.range += 1
            position.after = nil
        }
        position.done = true
        return out
    }

    /// Which entities `family` holds, by entity number: a bit test per index entry rather than a
    /// set probe, with no allocation for entity numbers below 64 (the fixed cost of an index read).
    static func familyMask(_ family: Set<EntityID>) -> SmallIntSet { SmallIntSet(family.lazy.map(\.index)) }

    /// Entries read in descending key order with each run of equal values put in ascending ID order.
    static func ascendingTies(_ entries: [(value: ArraySlice<UInt8>, id: ObjectID)]) -> [ObjectID] {
        var out: [ObjectID] = []
        out.reserveCapacity(entries.count)
        var start = 0
        while start < entries.count {
            var end = start + 1
            while end < entries.count, entries[end].value == entries[start].value { end += 1 }
            for i in stride(from: end - 1, through: start, by: -1) { out.append(entries[i].id) }
            start = end
        }
        return out
    }
}
