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
                    var valid = try engine { () throws(StorageError) in try cursor.seek(to: start) }
                    var out: [StoredObject] = []
                    var examined = 0
                    var scratch = [Value](repeating: .null, count: fieldCount)
                    var texts = [Range<Int>?](repeating: nil, count: raw?.fields.count ?? 0)
                    while valid, examined < Self.filteredChunk {
                        let step = try engine { () throws(StorageError) -> ScanStep in
                            try cursor.withEntry { k, v -> ScanStep in
                                guard k.count >= 2, k[0] == start[0], k[1] == start[1] else { return .end }
                                guard let id = KeyEncoding.objectID(k) else {
                                    return .failure(KeelError(.corrupt, "damaged object key in \(tree.name)"))
                                }
                                do throws(KeelError) {
                                    if let raw {
                                        guard try raw.matches(v, fieldCount: fieldCount, texts: &texts) else { return .skipped(id.number) }
                                    } else {
                                        let version = try RowCodec.decode(v, into: &scratch, fieldCount: fieldCount, wanted: wanted)
                                        guard try test(StoredObject(id: id, version: version, values: scratch)) else { return .skipped(id.number) }
                                    }
                                    return .row(try RowCodec.decode(v, id: id, fieldCount: fieldCount))
                                } catch {
                                    return .failure(error)
                                }
                            }
                        }
                        let number: UInt64
                        switch step {
                        case .end:
                            done = true
                            return out
                        case .failure(let error): throw error
                        case .skipped(let n): number = n
                        case .row(let row):
                            out.append(row)
                            number = row.id.number
                        }
                        examined += 1
                        guard number < .max else {
                            done = true
                            return out
                        }
                        from = number + 1
                        valid = try engine { () throws(StorageError) in try cursor.next() }
                    }
                    if !valid { done = true }
                    return out
                }
                for row in rows { guard try body(row) else { return } }
            }
        }
    }
}

/// One entry of a filtered scan (a plain enum: no generic metadata to look up per row).
enum ScanStep {
    case end
    case skipped(UInt64)
    case row(StoredObject)
    case failure(KeelError)
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
