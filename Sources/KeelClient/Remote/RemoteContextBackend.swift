// A context that lives in keeld (spec/protocol.md, "Contexts"): each `ContextBackend` method is
// the protocol's command with `"context": name`, sent over a `KeelConnection`. The context dies
// with its connection; after `DISCONNECTED` every method fails at once, and the pending
// changes it had are gone (Docs/ClientConnection.md, "Reconnection").

public import KeelModel

public final class RemoteContextBackend: ContextBackend {
    public let connection: KeelConnection
    public let name: String

    /// The context `name` on `connection` (`main` exists on every connection; others come from
    /// `openContext`).
    public init(connection: KeelConnection, name: String = "main") {
        self.connection = connection
        self.name = name
    }

    public var model: Model { connection.model }

    /// `arguments` with this context named.
    private func scoped(_ arguments: JSONMembers) -> JSON {
        var members = arguments
        members["context"] = .string(name)
        return .object(members)
    }

    /// `request`, a FETCH-shaped JSON object, with this context named (its own `context` key,
    /// if any, is replaced).
    private func scoped(request: JSON) throws(KeelError) -> JSON {
        guard case .object(let members) = request else {
            throw KeelError(.badRequest, "a fetch request is a JSON object, not \(request.kindName)")
        }
        return scoped(members)
    }

    private func call(_ command: String, _ arguments: JSONMembers = [:]) async throws(KeelError) -> JSON? {
        try await connection.request(command, scoped(arguments))
    }

    public func insert(entity: String, values: JSON) async throws(KeelError) -> String {
        let reply = try await call("INSERT", ["entity": .string(entity), "values": values])
        guard let id = reply?["$id"]?.stringValue else {
            throw KeelError(.internal, "INSERT answered without an ID: \(reply?.serialized() ?? "nothing")")
        }
        return id
    }

    public func update(_ id: String, values: JSON) async throws(KeelError) {
        _ = try await call("UPDATE", ["$id": .string(id), "values": values])
    }

    public func delete(_ id: String) async throws(KeelError) -> [String] {
        let reply = try await call("DELETE", ["$id": .string(id)])
        return ChangeEvent.ids(reply?["deleted"])
    }

    public func relate(_ id: String, relationship: String, add: [String], remove: [String]) async throws(KeelError) {
        var arguments: JSONMembers = ["$id": .string(id), "relationship": .string(relationship)]
        if !add.isEmpty { arguments["add"] = .array(add.map(JSON.string)) }
        if !remove.isEmpty { arguments["remove"] = .array(remove.map(JSON.string)) }
        _ = try await call("RELATE", arguments)
    }

    public func get(_ id: String, include: [String]) async throws(KeelError) -> JSON {
        var arguments: JSONMembers = ["$id": .string(id)]
        if !include.isEmpty { arguments["include"] = .array(include.map(JSON.string)) }
        guard let object = try await call("GET", arguments) else {
            throw KeelError(.internal, "GET \(id) answered without the object")
        }
        return object
    }

    public func fetch(_ request: JSON) -> AsyncThrowingStream<JSON, any Error> {
        rows(request).throwingStream
    }

    /// `FETCH` as the connection's own stream type (typed errors, `collect()`).
    public func rows(_ request: JSON) -> KeelStream<JSON> {
        do {
            return connection.rows("FETCH", try scoped(request: request))
        } catch {
            return KeelStream(.failed(error))
        }
    }

    public func count(_ request: JSON) async throws(KeelError) -> Int {
        let reply = try await connection.request("COUNT", try scoped(request: request))
        return Int(clamping: reply?["count"]?.intValue ?? 0)
    }

    public func explain(_ request: JSON) async throws(KeelError) -> String {
        let reply = try await connection.explain(try scoped(request: request))
        return reply["plan"]?.stringValue ?? reply.serialized()
    }

    public func changes() async throws(KeelError) -> JSON {
        try await call("CHANGES") ?? [:]
    }

    public func save() async throws(KeelError) -> JSON {
        try await call("SAVE") ?? [:]
    }

    public func rollback() async throws(KeelError) {
        _ = try await call("ROLLBACK")
    }

    public func refresh() async throws(KeelError) {
        _ = try await call("REFRESH")
    }

    public func openContext(name: String, child: Bool, mergePolicy: String) async throws(KeelError) -> any ContextBackend {
        var arguments: JSONMembers = ["name": .string(name), "mergePolicy": .string(mergePolicy)]
        if child { arguments["parent"] = .string(self.name) }
        let reply = try await connection.request("CONTEXT.OPEN", .object(arguments))
        return RemoteContextBackend(connection: connection, name: reply?["context"]?.stringValue ?? name)
    }

    /// The connection's SUBSCRIBE (shared by every subscriber of the connection).
    public func subscribe(entities: [String]?) async throws(KeelError) -> KeelStream<ChangeEvent> {
        try await connection.subscribe(entities: entities)
    }

    public func batch(_ command: String, _ arguments: JSON) async throws(KeelError) -> JSON {
        try await connection.request(command, arguments) ?? [:]
    }

    public func history(after: Int64, limit: Int) async throws(KeelError) -> [JSON] {
        var rows: [JSON] = []
        for try await row in connection.rows("HISTORY", ["after": .int(after), "limit": .int(Int64(limit))]) { rows.append(row) }
        return rows
    }

    public func pruneHistory(through: Int64) async throws(KeelError) -> JSON {
        try await connection.request("HISTORY.PRUNE", ["through": .int(through)]) ?? [:]
    }

    /// `CONTEXT.CLOSE`; nothing for `main`, and nothing when the connection is gone (the
    /// context went with it).
    public func close() async {
        guard name != "main", connection.isConnected else { return }
        _ = try? await call("CONTEXT.CLOSE")
    }
}
