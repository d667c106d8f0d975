// Connecting a `KeelStore` to keeld: the daemon side of the one line that differs from an
// embedded store (`KeelStore.open`). The store's contexts are `RemoteContextBackend`s on one
// `KeelConnection` (pipelined; Docs/ClientConnection.md), which the store exposes for what only
// the daemon offers: subscriptions to change events, admin calls, batch requests.

extension KeelStore {
    /// Connects to the keeld listening on `socket` (HELLO, then MODEL: the served model, which
    /// the generated classes are checked against). `UNAVAILABLE` when nobody listens there.
    public static func connect(
        socket: String, clientName: String = "KeelClient", options: KeelConnection.Options = KeelConnection.Options()
    ) async throws(KeelError) -> KeelStore {
        let connection = try await KeelConnection.connect(socketPath: socket, clientName: clientName, options: options)
        return KeelStore(
            main: RemoteContextBackend(connection: connection), connection: connection,
            close: { () throws(KeelError) in await connection.close() })
    }
}
