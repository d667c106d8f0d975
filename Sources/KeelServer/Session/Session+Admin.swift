// STATS and the admin commands (CHECKPOINT, COMPACT, VERIFY, BACKUP), each mapped to what the
// object store offers; all of them run online, while other connections read and save. (The admin
// check itself is done before dispatch.)
//
// - STATS: `ObjectStore.statistics()` (objects per entity, per store file KeelStorage's figures;
//   with `contents`, what the trees hold and the compression of values), the connections served
//   and those refused at `limits.maxConnections`.
// - COMPACT: `ObjectStore.compact()` — saves wait for it, reads do not.
// - VERIFY: `ObjectStore.verifyAll(report:)`: KeelStorage's page and tree checks of every store
//   file, then the object layer's, each fault counted as it is found and only the first 100 kept,
//   in `details.faults` as `StoreFault.json`; the total in `details.faultCount`
//   (`StoreFault.verificationError`).
// - BACKUP: `ObjectStore.backup(to:)` into a new backup file under the configured backup folder.

import Collections
import Foundation
import KeelModel
import KeelProtocol

extension Session {
    func stats(_ request: Request) throws(KeelError) -> JSON? {
        guard case .object(var members) = try server.store.statistics(contents: request.arguments["contents"]?.boolValue ?? false) else {
            return nil
        }
        members["connections"] = .int(Int64(server.connectionCount))
        members["connectionsRefused"] = .int(Int64(server.refusedConnectionCount))
        members["connectionsRefusedNoDescriptors"] = .int(Int64(server.refusedForDescriptorsCount))
        let written = server.sessionActivity.written
        members["replies"] = .int(Int64(written.replies))
        members["replyParts"] = .int(Int64(written.parts))
        return .object(members)
    }

    func checkpoint(_ request: Request) throws(KeelError) -> JSON? {
        try server.store.checkpoint()
        return nil
    }

    func verify(_ request: Request) throws(KeelError) -> JSON? {
        // The faults are counted as they come and only the first kept: a store of millions of
        // faults costs the daemon no more memory than one of a hundred.
        var faults = ProblemReport()
        try server.store.verifyAll { faults.add($0) }
        let pages = try server.store.storeStatistics().reduce(0) { $0 + $1.report.pageCount }
        let scope: JSON = ["pages", "trees", "freeList", "rows", "relationships", "inverses", "links", "indexes", "uniqueConstraints"]
        guard faults.isEmpty else { throw StoreFault.verificationError(faults, details: ["checked": scope]) }
        return ["ok": true, "faults": 0, "faultCount": 0, "pages": .int(Int64(pages)), "checked": scope]
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
