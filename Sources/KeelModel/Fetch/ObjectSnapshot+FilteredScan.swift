// A scan that filters inside the engine read: each row is decoded only as far as the filter
// needs (RowCodec+Projection.swift), and only rows that pass are decoded whole and handed on.
// A predicate of text patterns only is run on the row's bytes, nothing decoded
// (RawRowFilter.swift). The filter must read nothing but the row itself (a read of the snapshot from inside would
// wait on the read it is in), which `BoundPredicate.rowFields` tells.

import KeelStorage

extension ObjectSnapshot {
    /// Rows examined per engine read.
    static let filteredChunk = 2048

    /// The rows of `entity` (and its sub-entities) that pass `test`, which sees each row with only
    /// the `wanted` fields decoded; in ID order. `body` returns false to stop.
    func scan(
        _ entity: EntityID, includeSubentities: Bool, decoding wanted: [Bool], where test: (StoredObject) throws(KeelError) -> Bool,
        raw: RawRowFilter? = nil, _ body: (StoredObject) throws(KeelError) -> Bool
    ) throws(KeelError) {
        try checkEntity(entity)
        for e in TreeReading.scanEntities(model, entity, includeSubentities: includeSubentities) {
            let fieldCount = model[e].properties.count
            var from: UInt64 = 0
            var done = false
            while !done {
                let rows = try read(store: layout.storeOf[entity.index]) { (txn) throws(KeelError) -> [StoredObject] in
                    guard let tree = try self.tree(txn, layout.objects[entity.index]) else {
                        done = true
                        return []
                    }
                    var start = KeyEncoding.entityPrefix(e)
                    KeyEncoding.appendU64(from, to: &start)
                    var cursor = try engine { () throws(StorageError) in try tree.cursor() }
                    guard try engine({ () throws(StorageError) in try cursor.seek(to: start) }) else {
                        done = true
                        return []
                    }
                    var out: [StoredObject] = []
                    var examined = 0
                    var scratch = [Value](repeating: .null, count: fieldCount)
                    var texts = [Range<Int>?](repeating: nil, count: raw?.fields.count ?? 0)
                    var failure: KeelError?
                    var ended = false
                    let (p0, p1) = (start[0], start[1])
                    // One walk over the leaves (Cursor.walk): no cursor step, copy or closure
                    // context per row beyond this body's call.
                    try engine { () throws(StorageError) in
                        try cursor.walk { k, v -> Bool in
                            guard k.count >= 2, k[0] == p0, k[1] == p1 else {
                                ended = true
                                return false
                            }
                            guard examined < Self.filteredChunk else { return false }
                            guard let id = KeyEncoding.objectID(k) else {
                                failure = KeelError(.corrupt, "damaged object key in \(tree.name)")
                                return false
                            }
                            examined += 1
                            do throws(KeelError) {
                                if let raw {
                                    guard try raw.matches(v, fieldCount: fieldCount, texts: &texts) else { return true }
                                } else {
                                    let version = try RowCodec.decode(v, into: &scratch, fieldCount: fieldCount, wanted: wanted)
                                    guard try test(StoredObject(id: id, version: version, values: scratch)) else { return true }
                                }
                                out.append(try RowCodec.decode(v, id: id, fieldCount: fieldCount))
                            } catch {
                                failure = error
                                return false
                            }
                            return true
                        }
                    }
                    if let failure { throw failure }
                    if ended || !cursor.isValid {
                        done = true
                        return out
                    }
                    // Stopped at the chunk's end: the next chunk starts at the entry refused.
                    let next = try engine { () throws(StorageError) in try cursor.withKey { KeyEncoding.objectID($0) } }
                    guard let next else { throw KeelError(.corrupt, "damaged object key in \(tree.name)") }
                    from = next.number
                    return out
                }
                for row in rows { guard try body(row) else { return } }
            }
        }
    }
}

extension BoundPredicate {
    /// The fields of the object itself the predicate reads, when it reads nothing else (no key
    /// path through a relationship, no SUBQUERY, no SELF): then it can run on a partly decoded
    /// row inside a scan. Nil otherwise.
    func rowFields(fieldCount: Int) -> [Bool]? {
        var wanted = [Bool](repeating: false, count: fieldCount)
        func expression(_ e: BoundExpression) -> Bool {
            switch e {
            case .constant, .list: return true
            case .field(let f):
                guard f < fieldCount else { return false }
                wanted[f] = true
                return true
            case .path: return false
            }
        }
        func node(_ n: BoundNode) -> Bool {
            switch n {
            case .constant: return true
            case .not(let inner): return node(inner)
            case .and(let terms), .or(let terms): return terms.allSatisfy(node)
            case .comparison(let c): return expression(c.left) && expression(c.right)
            }
        }
        return node(root) ? wanted : nil
    }
}
