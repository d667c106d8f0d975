// STATS and the admin commands (CHECKPOINT, COMPACT, VERIFY, BACKUP), each mapped to what the
// object store offers. What it does not offer yet is refused with a sentence naming what is
// missing — never a made-up result. (The admin check itself is done before dispatch.)

import Collections
import Foundation
import KeelModel
import KeelProtocol

extension Session {
    func stats(_ request: Request) throws(KeelError) -> JSON? {
        let store = server.store
        let model = server.model
        let snapshot = try store.snapshot()
        defer { snapshot.close() }
        var objects: OrderedJSON = [:]
        var total: Int64 = 0
        for entity in model.entities where !entity.isAbstract {
            let count = try snapshot.count(entity.id, includeSubentities: false)
            objects[entity.name] = .int(Int64(count))
            total += Int64(count)
        }
        var files: OrderedJSON = [:]
        var fileBytes: Int64 = 0
        var logBytes: Int64 = 0
        for configuration in store.configurations {
            let page = store.directory + "/" + configuration + ".keel"
            let pageSize = Self.fileSize(page)
            let logSize = Self.fileSize(page + "-wal")
            files[configuration] = ["pageFileBytes": .int(pageSize), "logBytes": .int(logSize)]
            fileBytes += pageSize
            logBytes += logSize
        }
        return [
            "objects": .object(objects),
            "totalObjects": .int(total),
            "lastTxn": .int(Int64(store.lastSaveID.rawValue)),
            "files": .object(files),
            "fileBytes": .int(fileBytes),
            "logBytes": .int(logBytes),
            "connections": .int(Int64(server.liveConnections.count)),
            // Not offered by the object store yet (KeelStorage keeps them per store file).
            "unavailable": ["pagesUsed", "pagesFree", "cacheHits"],
        ]
    }

    func checkpoint(_ request: Request) throws(KeelError) -> JSON? {
        try server.store.checkpoint()
        return nil
    }

    func verify(_ request: Request) throws(KeelError) -> JSON? {
        let faults = try server.store.verify()
        let scope: JSON = ["rows", "relationships", "inverses", "links", "indexes", "uniqueConstraints"]
        guard faults.isEmpty else {
            throw KeelError(
                .corrupt, "verification found \(faults.count) fault\(faults.count == 1 ? "" : "s"): \(faults.prefix(3).map(\.description).joined(separator: "; "))",
                details: ["faults": .array(faults.map { ["kind": .string($0.kind), "message": .string($0.message)] }), "checked": scope])
        }
        return ["ok": true, "faults": 0, "checked": scope]
    }

    func compact(_ request: Request) throws(KeelError) -> JSON? {
        throw KeelError(
            .badRequest,
            "COMPACT is not available yet: the object store offers no online compaction (KeelStorage's Store.compact works per store file but ObjectStore does not expose it)")
    }

    func backup(_ request: Request) throws(KeelError) -> JSON? {
        throw KeelError(
            .badRequest, "BACKUP is not available yet: the object store offers no consistent online copy of its store files")
    }

    private static func fileSize(_ path: String) -> Int64 {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return 0 }
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }
}

/// A JSON object's members, in order.
typealias OrderedJSON = OrderedDictionary<String, JSON>
