// STATS and the admin commands (CHECKPOINT, COMPACT, VERIFY, BACKUP), each mapped to what the
// object store offers; all of them run online, while other connections read and save. (The admin
// check itself is done before dispatch.)
//
// - STATS: objects per entity (counts of one snapshot), and per store file KeelStorage's figures.
// - COMPACT: `ObjectStore.compact()` — saves wait for it, reads do not.
// - VERIFY: `ObjectStore.verifyAll()`: KeelStorage's page and tree checks of every store file,
//   then the object layer's; each fault in `details.faults` as `StoreFault.json`.
// - BACKUP: `ObjectStore.backup(to:)` into a new backup file under the configured backup folder.

import Collections
import Foundation
import KeelModel
import KeelProtocol

extension Session {
    func stats(_ request: Request) throws(KeelError) -> JSON? {
        let store = server.store
        let snapshot = try store.snapshot()
        defer { snapshot.close() }
        var objects: OrderedJSON = [:]
        var total: Int64 = 0
        for entity in server.model.entities where !entity.isAbstract {
            let count = try snapshot.count(entity.id, includeSubentities: false)
            objects[entity.name] = .int(Int64(count))
            total += Int64(count)
        }
        var files: OrderedJSON = [:]
        var sums = (file: Int64(0), log: Int64(0), used: Int64(0), free: Int64(0), hits: Int64(0), misses: Int64(0))
        for file in try store.storeStatistics() {
            let s = file.report
            let used = Int64(s.pageCount - s.freePageCount)
            files[file.configuration] = [
                "pageFileBytes": .int(Int64(s.fileBytes)), "logBytes": .int(Int64(s.logBytes)),
                "pageSize": .int(Int64(s.pageSize)), "pagesUsed": .int(used), "pagesFree": .int(Int64(s.freePageCount)),
                "cachedPages": .int(Int64(s.cachedPages)), "cacheHits": .int(Int64(s.cacheHits)),
                "cacheMisses": .int(Int64(s.cacheMisses)), "checkpoints": .int(Int64(s.checkpoints)),
                "lastTransaction": .int(Int64(s.lastTransaction)), "writeRefusal": s.writeRefusal.map(JSON.string) ?? .null,
            ]
            sums.file += Int64(s.fileBytes)
            sums.log += Int64(s.logBytes)
            sums.used += used
            sums.free += Int64(s.freePageCount)
            sums.hits += Int64(s.cacheHits)
            sums.misses += Int64(s.cacheMisses)
        }
        return [
            "objects": .object(objects),
            "totalObjects": .int(total),
            "lastTxn": .int(Int64(try snapshot.lastSaveID().rawValue)),
            "files": .object(files),
            "fileBytes": .int(sums.file),
            "logBytes": .int(sums.log),
            "pagesUsed": .int(sums.used),
            "pagesFree": .int(sums.free),
            "cacheHits": .int(sums.hits),
            "cacheMisses": .int(sums.misses),
            "connections": .int(Int64(server.liveConnections.count)),
        ]
    }

    func checkpoint(_ request: Request) throws(KeelError) -> JSON? {
        try server.store.checkpoint()
        return nil
    }

    func verify(_ request: Request) throws(KeelError) -> JSON? {
        let faults = try server.store.verifyAll()
        let pages = try server.store.storeStatistics().reduce(0) { $0 + $1.report.pageCount }
        let scope: JSON = ["pages", "trees", "freeList", "rows", "relationships", "inverses", "links", "indexes", "uniqueConstraints"]
        guard faults.isEmpty else {
            let first = faults.prefix(3).map(\.description).joined(separator: "; ")
            throw KeelError(
                .corrupt, "verification found \(faults.count) fault\(faults.count == 1 ? "" : "s"): \(first)",
                details: ["faults": .array(faults.map(\.json)), "checked": scope])
        }
        return ["ok": true, "faults": 0, "pages": .int(Int64(pages)), "checked": scope]
    }

    func compact(_ request: Request) throws(KeelError) -> JSON? {
        let (before, after) = try server.store.compact()
        return ["bytesBefore": .int(Int64(before)), "bytesAfter": .int(Int64(after))]
    }

    func backup(_ request: Request) throws(KeelError) -> JSON? {
        let name = request.arguments["path"]?.stringValue ?? ""
        let target = try BackupTarget(name: name, folder: server.configuration.backupDirectory)
        let summary = try server.store.backup(to: target.path)
        return [
            "bytes": .int(Int64(summary.bytes)), "path": .string(target.path), "entries": .int(Int64(summary.entries)),
            "payloadBytes": .int(Int64(summary.payloadBytes)),
        ]
    }
}

/// A JSON object's members, in order.
typealias OrderedJSON = OrderedDictionary<String, JSON>
