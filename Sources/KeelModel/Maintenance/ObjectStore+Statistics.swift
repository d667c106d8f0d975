// The figures of STATS and `keelctl stats`, built once here so the daemon and the offline tool
// report the same JSON (Docs/Protocol.md, "Administration in this build"):
//
//   objects        per concrete entity, counted in one snapshot; totalObjects; lastTxn
//   files.<Conf>   per store file: pageFileBytes, logBytes, pageSize, pagesUsed, pagesFree,
//                  cachedPages, cacheHits, cacheMisses, checkpoints, logSyncs, lastTransaction,
//                  writeRefusal
//                  and, with `contents`, entries, keyBytes, valueBytes, storedValueBytes,
//                  compressionRatio (values as seen / as stored), and trees.<name> per tree:
//                  the same plus cellBytes, leafPages, branchPages, overflowValues, leafFill
//   sums           fileBytes, logBytes, pagesUsed, pagesFree, cacheHits, cacheMisses and, with
//                  `contents`, entries, dataBytes (keys and values), compressionRatio
//
// Without `contents` nothing is walked (counts come from the object trees' ranges); with it every
// node of every tree is read once, on a snapshot (writers are not held up).

import Collections
import KeelStorage

extension ObjectStore {
    public func statistics(contents: Bool = false) throws(KeelError) -> JSON {
        let snapshot = try snapshot()
        defer { snapshot.close() }
        var objects: OrderedDictionary<String, JSON> = [:]
        var total: Int64 = 0
        for entity in model.entities where !entity.isAbstract {
            let count = try snapshot.count(entity.id, includeSubentities: false)
            objects[entity.name] = .int(Int64(count))
            total += Int64(count)
        }
        var files: OrderedDictionary<String, JSON> = [:]
        var sums = (file: Int64(0), log: Int64(0), frames: Int64(0), used: Int64(0), free: Int64(0), hits: Int64(0), misses: Int64(0))
        var all = TreeTally()
        for (configuration, store) in zip(configurations, stores) {
            let s = try engine { () throws(StorageError) in try store.statistics() }
            let used = Int64(s.pageCount - s.freePageCount)
            var file: OrderedDictionary<String, JSON> = [
                "pageFileBytes": .int(Int64(s.fileBytes)), "logBytes": .int(Int64(s.logBytes)),
                "logFrameBytes": .int(Int64(s.logFrameBytes)), "pageSize": .int(Int64(s.pageSize)), "pagesUsed": .int(used), "pagesFree": .int(Int64(s.freePageCount)),
                "cachedPages": .int(Int64(s.cachedPages)), "cacheHits": .int(Int64(s.cacheHits)),
                "cacheMisses": .int(Int64(s.cacheMisses)), "checkpoints": .int(Int64(s.checkpoints)),
                "logSyncs": .int(Int64(s.logSyncs)), "lastTransaction": .int(Int64(s.lastTransaction)), "writeRefusal": s.writeRefusal.map(JSON.string) ?? .null,
            ]
            if contents {
                let trees = try engine { () throws(StorageError) in try store.contents() }
                let tally = trees.values.reduce(TreeTally(), +)
                file.merge(Self.contentsJSON(tally)) { _, new in new }
                var perTree: OrderedDictionary<String, JSON> = [:]
                for name in trees.keys.sorted() { perTree[name] = Self.treeJSON(trees[name]!, pageSize: s.pageSize) }
                file["trees"] = .object(perTree)
                all = all + tally
            }
            files[configuration] = .object(file)
            sums.file += Int64(s.fileBytes)
            sums.log += Int64(s.logBytes)
            sums.frames += Int64(s.logFrameBytes)
            sums.used += used
            sums.free += Int64(s.freePageCount)
            sums.hits += Int64(s.cacheHits)
            sums.misses += Int64(s.cacheMisses)
        }
        var out: OrderedDictionary<String, JSON> = [
            "objects": .object(objects),
            "totalObjects": .int(total),
            "lastTxn": .int(Int64(try snapshot.lastSaveID().rawValue)),
            "files": .object(files),
            "fileBytes": .int(sums.file),
            "logBytes": .int(sums.log),
            "logFrameBytes": .int(sums.frames),
            "pagesUsed": .int(sums.used),
            "pagesFree": .int(sums.free),
            "cacheHits": .int(sums.hits),
            "cacheMisses": .int(sums.misses),
        ]
        if contents {
            out["entries"] = .int(Int64(all.entries))
            out["dataBytes"] = .int(Int64(all.keyBytes + all.valueBytes))
            out["compressionRatio"] = Self.ratio(all)
        }
        return .object(out)
    }

    private static func contentsJSON(_ t: TreeTally) -> OrderedDictionary<String, JSON> {
        [
            "entries": .int(Int64(t.entries)), "keyBytes": .int(Int64(t.keyBytes)), "valueBytes": .int(Int64(t.valueBytes)),
            "storedValueBytes": .int(Int64(t.storedValueBytes)), "compressionRatio": ratio(t),
        ]
    }

    /// One tree's figures: its entries and their bytes, its pages, and how full its leaves are
    /// (cell bytes with their slots over the leaves' usable bytes; overflow chains left out).
    private static func treeJSON(_ t: TreeTally, pageSize: Int) -> JSON {
        var out = contentsJSON(t)
        out["cellBytes"] = .int(Int64(t.cellBytes))
        out["leafPages"] = .int(Int64(t.leafPages))
        out["branchPages"] = .int(Int64(t.branchPages))
        out["overflowValues"] = .int(Int64(t.overflowValues))
        out["leafFill"] = .double((t.leafFill(pageSize: pageSize) * 1000).rounded() / 1000)
        return .object(out)
    }

    /// Values as seen over values as stored, to two decimals (1 when nothing is stored).
    private static func ratio(_ t: TreeTally) -> JSON {
        guard t.storedValueBytes > 0 else { return .double(1) }
        return .double((Double(t.valueBytes) / Double(t.storedValueBytes) * 100).rounded() / 100)
    }
}
