// The store commands online: keeld's admin commands and FETCH through KeelConnection (the client
// library's connection; one per keelctl run). keeld does the work while it keeps serving; keelctl
// only sends requests and prints replies.
//
// An import goes through the same plan and run as offline (KeelModel/Transfer), with keeld as
// the target (OnlineImportTarget): BATCH.INSERT for the inserts (one entity per request, IDs
// handed out by keeld: consecutive from the reply's `first`), the connection's main context for
// fix-ups and the undo (UPDATE and DELETE, then one SAVE). The run is synchronous, so it runs on a
// thread of its own (`onThread`) and waits there for each reply (`awaiting`).

import Dispatch
import KeelClient
import KeelModel
import KeelStorage
import Synchronization

final class OnlineBackend: Backend {
    let connection: KeelConnection
    let socket: String

    private init(connection: KeelConnection, socket: String) {
        self.connection = connection
        self.socket = socket
    }

    static func connect(_ socket: String) async throws(Failure) -> OnlineBackend {
        do throws(KeelError) {
            let connection = try await KeelConnection.connect(socketPath: socket, clientName: "keelctl")
            return OnlineBackend(connection: connection, socket: socket)
        } catch {
            throw Failure("cannot work through keeld at \(socket): \(error.message)")
        }
    }

    var model: Model { connection.model }
    var place: String { "keeld at \(socket)" }

    func statistics(contents: Bool) async throws(KeelError) -> JSON {
        try await connection.request("STATS", contents ? ["contents": true] : nil) ?? [:]
    }

    func checkpoint() async throws(KeelError) {
        try await connection.checkpoint()
    }

    func compact(progress: ProgressBar) async throws(KeelError) -> (bytesBefore: Int64, bytesAfter: Int64) {
        let result = try await connection.compact()
        return (result.bytesBefore, result.bytesAfter)
    }

    func verify(progress: ProgressBar, fault: @escaping @Sendable (StoreFault) -> Void) async throws(KeelError) -> Int {
        do throws(KeelError) {
            _ = try await connection.verify()
            return 0
        } catch where error.code == .corrupt {
            let faults = error.verificationFaults
            guard !faults.isEmpty else {
                fault(StoreFault(kind: "read", message: error.message))
                return 1
            }
            for f in faults { fault(f) }
            return max(faults.count, error.faultCount)
        }
    }

    func backup(to path: String, progress: ProgressBar) async throws(KeelError) -> BackupOutcome {
        let reply = try await connection.request("BACKUP", ["path": .string(path)]) ?? [:]
        return BackupOutcome(
            path: reply["path"]?.stringValue ?? path, bytes: reply["bytes"]?.intValue ?? 0, entries: reply["entries"]?.intValue ?? 0,
            payloadBytes: reply["payloadBytes"]?.intValue ?? 0)
    }

    func fetch(_ request: JSON, row: @escaping @Sendable (JSON) throws(KeelError) -> Void) async throws(KeelError) {
        var rows = connection.rows("FETCH", request).makeAsyncIterator()
        while let next = try await rows.next() { try row(next) }
    }

    func count(_ request: JSON) async throws(KeelError) -> Int {
        Int(try await connection.request("COUNT", request)?["count"]?.intValue ?? 0)
    }

    func history(after: Int64, limit: Int?) async throws(KeelError) -> [JSON] {
        var arguments: JSON = ["after": .int(after)]
        if let limit { arguments = ["after": .int(after), "limit": .int(Int64(limit))] }
        var rows: [JSON] = []
        for try await row in connection.rows("HISTORY", arguments) { rows.append(row) }
        return rows
    }

    func pruneHistory(through: Int64) async throws(KeelError) -> JSON {
        try await connection.request("HISTORY.PRUNE", ["through": .int(through)]) ?? [:]
    }

    func importObjects(_ plan: ImportPlan, chunkSize: Int, progress: ProgressBar) async throws(KeelError) -> ImportResult {
        let target = OnlineImportTarget(connection: connection)
        return try await onThread { () throws(KeelError) in
            var run = ImportRun(plan: plan, target: target, chunkSize: chunkSize)
            return try run.run(progress: progress.report)
        }
    }

    func close() async throws(KeelError) {
        await connection.close()
    }
}

/// keeld as an import's target (see the top of this file). Its calls block the thread they are
/// made on (one of `onThread`'s, never the cooperative pool) until keeld answers.
struct OnlineImportTarget: ImportTarget, Sendable {
    let connection: KeelConnection
    var model: Model { connection.model }

    mutating func reserveIDs(for entity: EntityID, count: Int) throws(KeelError) -> [ObjectID]? { nil }

    mutating func insert(_ objects: [(entity: EntityID, values: [Int: Value])], ids: [ObjectID]?) throws(KeelError) -> [ObjectID] {
        guard let first = objects.first else { return [] }
        let entity = model[first.entity]
        let wire: [JSON] = objects.map { object in Self.wire(object.values, of: entity, in: model) }
        let connection = self.connection
        let result = try awaiting { () async throws(KeelError) in try await connection.batchInsert(entity: entity.name, objects: wire) }
        guard result.inserted == objects.count, let text = result.first, let start = model.objectID(text) else {
            throw KeelError(.internal, "BATCH.INSERT of \(objects.count) \(entity.name) objects answered \(result.inserted) inserted, first \(result.first ?? "none")")
        }
        return (0..<objects.count).map { ObjectID(entity: start.entity, number: start.number + UInt64($0)) }
    }

    mutating func set(_ values: [(object: ObjectID, field: Int, value: Value)]) throws(KeelError) {
        let model = self.model
        let updates: [JSON] = values.map { item in
            let property = model[item.object.entity].properties[item.field]
            return ["$id": .string(item.object.text(in: model)), "values": .object([property.name: property.wire(item.value, in: model)])]
        }
        try saveInContext([updates.map { ("UPDATE", $0) }])
    }

    mutating func remove(_ objects: [ObjectID]) throws(KeelError) {
        let model = self.model
        var updates: [(String, JSON)] = []
        for id in objects {
            var cleared: [(String, JSON)] = []
            for (_, r) in model[id.entity].relationships { cleared.append((r.name, r.isToMany ? .array([]) : .null)) }
            if !cleared.isEmpty {
                updates.append(("UPDATE", ["$id": .string(id.text(in: model)), "values": .object(.init(cleared, uniquingKeysWith: { a, _ in a }))]))
            }
        }
        // Every UPDATE before any DELETE: an UPDATE of an object already deleted would fail.
        let deletes = objects.map { ("DELETE", JSON.object(["$id": .string($0.text(in: model))])) }
        try saveInContext([updates, deletes])
    }

    /// The requests in the connection's main context, then one SAVE; a ROLLBACK when any of
    /// them fails. The requests of one phase are pipelined (from tasks of a group, so in no
    /// particular order); a phase starts once the one before is answered.
    private func saveInContext(_ phases: [[(String, JSON)]]) throws(KeelError) {
        let connection = self.connection
        try awaiting { () async throws(KeelError) in
            var failure: KeelError?
            for requests in phases where failure == nil {
                failure = await Self.pipelined(requests, on: connection)
            }
            if let failure {
                _ = try? await connection.request("ROLLBACK")
                throw failure
            }
            do throws(KeelError) {
                _ = try await connection.request("SAVE")
            } catch {
                _ = try? await connection.request("ROLLBACK")
                throw error
            }
        }
    }

    /// Sends `requests` at once from a task each; the first error, if any.
    private static func pipelined(_ requests: [(String, JSON)], on connection: KeelConnection) async -> KeelError? {
        await withTaskGroup(of: KeelError?.self) { group -> KeelError? in
            for (command, arguments) in requests {
                group.addTask {
                    do throws(KeelError) {
                        _ = try await connection.request(command, arguments)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            var first: KeelError?
            for await result in group where first == nil { first = result }
            return first
        }
    }

    /// An object's values in the wire form BATCH.INSERT takes.
    static func wire(_ values: [Int: Value], of entity: Entity, in model: Model) -> JSON {
        var members: [(String, JSON)] = []
        for (field, value) in values.sorted(by: { $0.key < $1.key }) {
            let property = entity.properties[field]
            members.append((property.name, property.wire(value, in: model)))
        }
        return .object(.init(members, uniquingKeysWith: { a, _ in a }))
    }
}

/// Waits on this thread (one of `onThread`'s) for `body`, run as a task.
func awaiting<R: Sendable>(_ body: @escaping @Sendable () async throws(KeelError) -> R) throws(KeelError) -> R {
    let outcome = Mutex<Result<R, KeelError>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let result: Result<R, KeelError>
        do throws(KeelError) {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try outcome.withLock { $0 }!.get()  // safe: set before the signal
}
