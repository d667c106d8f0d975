// The end of a save: every changed row encoded and put once (version + 1; 1 for a new object),
// destroyed rows deleted, and the index and unique trees brought in step with the rows.
//
// INDEX ENTRY (`idx/<Entity>.<p1,p2>`): key = value keys of the fields (KeyEncoding) · object
// key (10); value empty. UNIQUE ENTRY (`uniq/…`): key = value keys of the fields; value = the
// holder's object key (10). An object with a null in any field of a unique key has no entry.

import Foundation
import KeelStorage

/// What a flushed save changed, for the history record and the save result.
struct FlushSummary {
    var inserted: [ObjectID] = []
    var updated: [ObjectID: [String]] = [:]
    var deleted: [ObjectID] = []
}

/// Index entries waiting to be put (or deleted), grouped by tree (a save touches a few). Each
/// group's keys sit in one byte buffer (no allocation per key) and are written sorted.
struct IndexPuts {
    var groups: [(store: Int, tree: String, bytes: [UInt8], spans: [(start: Int32, count: Int32)])] = []
    private var last = -1

    /// Adds the key `prefix` · `suffix` to the tree's group.
    mutating func add(_ store: Int, _ tree: String, _ prefix: [UInt8], _ suffix: [UInt8]) {
        if last < 0 || groups[last].store != store || groups[last].tree != tree {
            last = -1
            for i in groups.indices where groups[i].store == store && groups[i].tree == tree { last = i }
            if last < 0 {
                groups.append((store, tree, [], []))
                last = groups.count - 1
            }
        }
        let start = groups[last].bytes.count
        groups[last].bytes.append(contentsOf: prefix)
        groups[last].bytes.append(contentsOf: suffix)
        groups[last].spans.append((Int32(start), Int32(prefix.count + suffix.count)))
    }

    func flush(_ session: SaveSession, deleting: Bool = false) throws(KeelError) {
        for g in groups {
            var spans = g.spans
            let bytes = g.bytes
            let failure: KeelError? = bytes.withUnsafeBytes { all in
                let base = all.baseAddress!
                spans.sort { a, b in
                    KeyOrder.compare(
                        UnsafeRawBufferPointer(start: base + Int(a.start), count: Int(a.count)),
                        UnsafeRawBufferPointer(start: base + Int(b.start), count: Int(b.count))) < 0
                }
                do throws(KeelError) {
                    for span in spans {
                        let key = UnsafeRawBufferPointer(start: base + Int(span.start), count: Int(span.count))
                        if deleting { try session.delete(g.store, g.tree, key: key) } else { try session.put(g.store, g.tree, key: key) }
                    }
                } catch {
                    return error
                }
                return nil
            }
            if let failure { throw failure }
        }
    }
}

extension SaveSession {
    func flush() throws(KeelError) -> FlushSummary {
        try putPendingLinks()
        var summary = FlushSummary()
        // In key order: object-tree puts walk the tree once, left to right. A batch's entries are
        // usually in order already.
        var order = Array(entries.indices)
        var sorted = true
        for i in entries.indices.dropFirst() where !(entries[i - 1].id < entries[i].id) {
            sorted = false
            break
        }
        if !sorted { order.sort { entries[$0].id < entries[$1].id } }
        var rowBytes: [UInt8] = []
        rowBytes.reserveCapacity(128)
        var objectKey: [UInt8] = []
        objectKey.reserveCapacity(KeyEncoding.objectKeySize)
        var valueKey: [UInt8] = []
        // Index entries are put after every row, tree by tree in key order (their keys come in
        // value order, random against the rows'): each put then lands next to the previous one.
        var indexPuts = IndexPuts()
        // Non-unique index entries of old values, deleted the same way before the puts (an entry
        // ends with its object's key, so no put of another object can meet one of them).
        var indexDeletes = IndexPuts()
        // Unique entries: every removal first, so an object may take a key another one gives up
        // in the same save.
        var uniquePuts: [(Int, String, [UInt8], [UInt8])] = []
        for slot in order {
            let id = entries[slot].id
            let store = layout.storeOf[id.entity.index]
            objectKey.removeAll(keepingCapacity: true)
            KeyEncoding.appendObjectKey(id, to: &objectKey)
            let rowChanged: Bool
            switch (entries[slot].original, entries[slot].current) {
            case (nil, nil):
                continue
            case (nil, let c?):
                rowChanged = true
                RowCodec.encode(version: 1, values: c.values, into: &rowBytes)
                try put(store, layout.objects[id.entity.index], key: objectKey, value: rowBytes)
                summary.inserted.append(id)
            case (.some, nil):
                rowChanged = true
                try delete(store, layout.objects[id.entity.index], key: objectKey)
                summary.deleted.append(id)
            case (let o?, var c?):
                rowChanged = o.values != c.values
                if rowChanged {
                    c.version = o.version + 1
                    RowCodec.encode(c, into: &rowBytes)
                    try put(store, layout.objects[id.entity.index], key: objectKey, value: rowBytes)
                }
                let linkFields = entries[slot].linkFields
                if rowChanged || !linkFields.isEmpty {
                    var names: [String] = []
                    for (f, p) in model[id.entity].properties.enumerated() where o.values[f] != c.values[f] || linkFields.contains(f) {
                        names.append(p.name)
                    }
                    summary.updated[id] = names
                }
            }
            guard rowChanged else { continue }
            let trees = layout.keyedTrees[id.entity.index]
            for (k, index) in layout.keyed[id.entity.index].enumerated() {
                let tree = trees[k]
                let old = entries[slot].original.map { o in index.fields.map { o.values[$0] } }
                let new = entries[slot].current.map { c in index.fields.map { c.values[$0] } }
                if old == new { continue }
                if index.isUnique {
                    if let old, !old.contains(where: \.isNull) {
                        let key = KeyEncoding.valuesKey(old)
                        if try TreeReading.holder(try readTree(store, tree), key: key) == id { try delete(store, tree, key: key) }
                    }
                    if let new, !new.contains(where: \.isNull) {
                        uniquePuts.append((store, tree, KeyEncoding.valuesKey(new), objectKey))
                    }
                } else {
                    if let old {
                        valueKey.removeAll(keepingCapacity: true)
                        for v in old { KeyEncoding.appendValue(v, to: &valueKey) }
                        indexDeletes.add(store, tree, valueKey, objectKey)
                    }
                    if let new {
                        valueKey.removeAll(keepingCapacity: true)
                        for v in new { KeyEncoding.appendValue(v, to: &valueKey) }
                        indexPuts.add(store, tree, valueKey, objectKey)
                    }
                }
            }
        }
        try indexDeletes.flush(self, deleting: true)
        try indexPuts.flush(self)
        for (store, tree, key, value) in uniquePuts { try put(store, tree, key: key, value: value) }
        return summary
    }
}
