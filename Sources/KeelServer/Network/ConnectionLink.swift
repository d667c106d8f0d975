// What a connection's session thread holds of its connection: the way back to the event loop.
// Output crosses threads only here, as whole lines: `deliver` counts the bytes against the
// connection's output cap and hands them to the handler on its loop, which writes and flushes
// them once.

import NIOCore

final class ConnectionLink: Sendable {
    let id: Int
    let peer: PeerCredentials
    let isAdmin: Bool
    let gate: OutputGate
    let worker: SessionWorker
    private let eventLoop: any EventLoop
    private let handler: NIOLoopBound<ConnectionHandler>

    init(
        id: Int, peer: PeerCredentials, isAdmin: Bool, gate: OutputGate, worker: SessionWorker,
        eventLoop: any EventLoop, handler: NIOLoopBound<ConnectionHandler>
    ) {
        self.id = id
        self.peer = peer
        self.isAdmin = isAdmin
        self.gate = gate
        self.worker = worker
        self.eventLoop = eventLoop
        self.handler = handler
    }

    /// Hands reply lines to the connection: `finals` requests are answered by them; `close`
    /// ends the connection after they are written (QUIT). Called from the session thread.
    func deliver(_ text: String, finals: Int, close: Bool = false) {
        let bytes = text.utf8.count
        gate.add(bytes)
        let handler = self.handler
        eventLoop.execute {
            handler.value.deliver(text, bytes: bytes, finals: finals, close: close)
        }
    }

    /// Closes the connection from outside its loop (shutdown): after the lines already handed
    /// over are written.
    func closeAfterPendingWrites() {
        let handler = self.handler
        eventLoop.execute { handler.value.closeAfterPendingWrites() }
    }

    /// Closes the connection at once, dropping replies not yet written (shutdown's grace period
    /// is over).
    func close() {
        let handler = self.handler
        eventLoop.execute { handler.value.closeNow() }
    }
}
