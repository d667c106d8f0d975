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

/// Index entries waiting to be put, grouped by tree (a save touches a few).
struct IndexPuts {
    var groups: [(store: Int, tree: String, keys: [[UInt8]])] = []

    mutating func add(_ store: Int, _ tree: String, _ key: [UInt8]) {
        for i in groups.indices where groups[i].store == store && groups[i].tree == tree {
            groups[i].keys.append(key)
            return
        }
        groups.append((store, tree, [key]))
    }

    func flush(_ session: SaveSession) throws(KeelError) {
        for g in groups {
            let keys = g.keys.sorted { a, b in
                a.withUnsafeBytes { a in
                    b.withUnsafeBytes { b in
                        let n = min(a.count, b.count)
                        let c = n == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, n)
                        return c != 0 ? c < 0 : a.count < b.count
                    }
                }
            }
            for key in keys { try session.put(g.store, g.tree, key: key, value: []) }
        }
    }
}

extension SaveSession {
    func flush() throws(KeelError) -> FlushSummary {
        var summary = FlushSummary()
        // In key order: object-tree puts walk the tree once, left to right.
        var entries = Array(rows)
        entries.sort { $0.key < $1.key }
        var rowBytes: [UInt8] = []
        rowBytes.reserveCapacity(128)
        var objectKey: [UInt8] = []
        objectKey.reserveCapacity(KeyEncoding.objectKeySize)
        // Index entries are put after every row, tree by tree in key order (their keys come in
        // value order, random against the rows'): each put then lands next to the previous one.
        var indexPuts = IndexPuts()
        // Unique entries: every removal first, so an object may take a key another one gives up
        // in the same save.
        var uniquePuts: [(Int, String, [UInt8], [UInt8])] = []
        for (id, e) in entries {
            let store = layout.storeOf[id.entity.index]
            objectKey.removeAll(keepingCapacity: true)
            KeyEncoding.appendObjectKey(id, to: &objectKey)
            let rowChanged = e.original == nil ? e.current != nil : e.original?.values != e.current?.values
            switch (e.original, e.current) {
            case (nil, nil):
                continue
            case (nil, let c?):
                RowCodec.encode(version: 1, values: c.values, into: &rowBytes)
                try put(store, layout.objects[id.entity.index], key: objectKey, value: rowBytes)
                summary.inserted.append(id)
            case (let o?, nil):
                try delete(store, layout.objects[id.entity.index], key: objectKey)
                summary.deleted.append(id)
                _ = o
            case (let o?, var c?):
                if rowChanged {
                    c.version = o.version + 1
                    RowCodec.encode(c, into: &rowBytes)
                    try put(store, layout.objects[id.entity.index], key: objectKey, value: rowBytes)
                }
                if rowChanged || !e.linkFields.isEmpty {
                    var names: [String] = []
                    for (f, p) in model[id.entity].properties.enumerated() where o.values[f] != c.values[f] || e.linkFields.contains(f) {
                        names.append(p.name)
                    }
                    summary.updated[id] = names
                }
            }
            guard rowChanged else { continue }
            let trees = layout.keyedTrees[id.entity.index]
            for (k, index) in layout.keyed[id.entity.index].enumerated() {
                let tree = trees[k]
                let old = e.original.map { o in index.fields.map { o.values[$0] } }
                let new = e.current.map { c in index.fields.map { c.values[$0] } }
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
                        var key = KeyEncoding.valuesKey(old)
                        key.append(contentsOf: objectKey)
                        try delete(store, tree, key: key)
                    }
                    if let new {
                        var key = KeyEncoding.valuesKey(new)
                        key.append(contentsOf: objectKey)
                        indexPuts.add(store, tree, key)
                    }
                }
            }
        }
        try indexPuts.flush(self)
        for (store, tree, key, value) in uniquePuts { try put(store, tree, key: key, value: value) }
        return summary
    }
}
