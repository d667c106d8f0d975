// What a connection's session thread holds of its connection: its output and the way back to the
// event loop. Output crosses threads only here, as whole lines: `deliver` hands them to the
// connection's ReplyWriter, which writes them from this thread straight to the socket when
// nothing of the connection is being written (one send per job's replies), or behind what is;
// the event loop is woken only when it waits for the answer (or to close after QUIT).

import NIOCore
import Synchronization

final class ConnectionLink: Sendable {
    let id: Int
    let peer: PeerCredentials
    let isAdmin: Bool
    let gate: OutputGate
    let output: ReplyWriter
    let worker: SessionWorker
    private let eventLoop: any EventLoop
    private let handler: NIOLoopBound<ConnectionHandler>
    /// HELLO's `coalesceMicros` in nanoseconds (ReplyCoalescing.unbounded until a HELLO asks):
    /// set by whichever thread answers HELLO, read by the session's thread after each request.
    private let coalesce = Atomic<UInt64>(ReplyCoalescing.unbounded)
    /// What still holds the connection's place under `limits.maxConnections`: its channel (until
    /// it is inactive) and its thread (until it ends). The place is given back when both let go,
    /// so connections and their threads both stay within the limit, abrupt disconnects included.
    private let holds = Atomic<Int>(2)

    init(
        id: Int, peer: PeerCredentials, isAdmin: Bool, output: ReplyWriter, worker: SessionWorker,
        eventLoop: any EventLoop, handler: NIOLoopBound<ConnectionHandler>
    ) {
        self.id = id
        self.peer = peer
        self.isAdmin = isAdmin
        self.gate = output.gate
        self.output = output
        self.worker = worker
        self.eventLoop = eventLoop
        self.handler = handler
    }

    /// The channel went inactive, or the thread ended: the second of the two gives the
    /// connection's place back.
    func release(from server: ServerContext) {
        if holds.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            server.connectionEnded()
        }
    }

    /// How long a finished reply may wait for the rest of its burst, in nanoseconds.
    var coalesceNanoseconds: UInt64 {
        get { coalesce.load(ordering: .relaxed) }
        set { coalesce.store(newValue, ordering: .relaxed) }
    }

    /// Hands reply lines to the connection: `finals` requests are answered by them; `close`
    /// ends the connection after they are written (QUIT). Called from the session thread.
    func deliver(_ text: [UInt8], finals: Int, close: Bool = false) {
        // With `close`, the writer writes nothing after these lines, whatever the loop answers
        // before it hears of the QUIT.
        let loopWaits = output.write(text, finals: finals, close: close)
        if close {
            closeAfterPendingWrites()
        } else if loopWaits {
            let handler = self.handler
            eventLoop.execute { handler.value.answered() }
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
