// Error codes the client itself raises, for failures of the transport rather than of a request.
// They never appear on the wire: keeld answers with the codes of spec/protocol.md ("Errors"),
// which the client passes through unchanged. Docs/ClientConnection.md, "Errors", lists both.

public import KeelModel

extension KeelError.Code {
    /// The connection is gone (the daemon stopped, crashed or closed it, or `close()` was
    /// called): every call in flight and every later call fails with it. Nothing is retried
    /// behind the application's back; connect again (`KeelConnection.reconnect()`).
    public static let disconnected = KeelError.Code(rawValue: "DISCONNECTED")
    /// No connection could be made: no socket at the path, nobody listening, or the daemon did
    /// not finish the handshake in time.
    public static let unavailable = KeelError.Code(rawValue: "UNAVAILABLE")
    /// The call's deadline passed before its reply came. The request may still run in the
    /// daemon; its reply (and its rows) will be discarded when they come, by tag, and the
    /// connection stays usable.
    public static let timeout = KeelError.Code(rawValue: "TIMEOUT")
    /// The calling task was cancelled (or the stream was dropped) before the reply came; as with
    /// `TIMEOUT`, the late reply is discarded by tag.
    public static let cancelled = KeelError.Code(rawValue: "CANCELLED")

    /// The codes above: raised by the client, never sent by the daemon.
    public static let clientSide: Set<KeelError.Code> = [.disconnected, .unavailable, .timeout, .cancelled]
}
