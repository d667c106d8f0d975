// The end of a save: every changed row encoded and put once (version + 1; 1 for a new object),
// destroyed rows deleted, and the index and unique trees brought in step with the rows.
//
// INDEX ENTRY (`idx/<Entity>.<p1,p2>`): key = value keys of the fields (KeyEncoding) · object
// key (10); value empty. UNIQUE ENTRY (`uniq/…`): key = value keys of the fields; value = the
// holder's object key (10). An object with a null in any field of a unique key has no entry.

import KeelStorage

/// What a flushed save changed, for the history record and the save result.
struct FlushSummary {
    var inserted: [ObjectID] = []
    var updated: [ObjectID: [String]] = [:]
    var deleted: [ObjectID] = []
}

extension SaveSession {
    func flush() throws(KeelError) -> FlushSummary {
        var summary = FlushSummary()
        let ids = rows.keys.sorted()
        var rowBytes: [UInt8] = []
        rowBytes.reserveCapacity(128)
        // Unique entries: every removal first, so an object may take a key another one gives up
        // in the same save.
        var uniquePuts: [(Int, String, [UInt8], [UInt8])] = []
        for id in ids {
            guard let e = rows[id] else { continue }
            let store = layout.storeOf[id.entity.index]
            let objectKey = KeyEncoding.objectKey(id)
            let rowChanged = e.original?.values != e.current?.values
            switch (e.original, e.current) {
            case (nil, nil):
                continue
            case (nil, var c?):
                c.version = 1
                RowCodec.encode(c, into: &rowBytes)
                try put(store, layout.objects[id.entity.index], key: objectKey, value: rowBytes)
                rows[id]?.current = c
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
                    rows[id]?.current = c
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
            for index in layout.keyed[id.entity.index] {
                let tree = TreeLayout.index(index)
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
                        try put(store, tree, key: key, value: [])
                    }
                }
            }
        }
        for (store, tree, key, value) in uniquePuts { try put(store, tree, key: key, value: value) }
        return summary
    }
}
