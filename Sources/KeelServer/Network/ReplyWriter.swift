// The way out of one connection: every reply line of the daemon, whether the event loop answered
// it or the connection's session thread, goes through here, in the order handed in.
//
// Whoever hands lines in writes them itself, straight to the socket (SocketWriter, one
// non-blocking send from the calling thread), when nothing of the connection is being written:
// the session thread's replies then reach the client without waking the event loop. One writer
// at a time (KeelProtocol's OutputWire, which the client's requests use too): lines handed in
// while another thread writes, or while NIO still holds earlier bytes, wait in its `outgoing` and
// that writer (or NIO's completion, on the loop) writes them next. What the socket does not take at once goes to NIO, which writes it when the socket is
// writable; direct writes wait until NIO has written it. So bytes leave in order, and lines are
// never torn.
//
// Every byte handed in counts in the connection's OutputGate until the socket took it (or the
// connection dropped it): the cap on a slow reader is the same whichever thread wrote.
//
// The event loop's count of requests in flight lives here too (`inFlight`): the session thread
// lowers it as it hands in final lines, so the loop, which answers a request itself only when
// nothing is in flight, always sees it after those lines are ordered before its own. The loop is
// woken for an answer only while it waits for one (`loopWaiting`: reading paused at a limit, a
// backlog left, a close waiting for the last reply); otherwise it learns the count when it next
// looks.

import KeelProtocol
import NIOCore
import Synchronization

final class ReplyWriter: Sendable {
    struct State {
        /// Lines handed in and not yet written, who writes them, and the connection's own
        /// descriptor of the socket (nil without one: every write goes through NIO).
        var wire: OutputWire
        /// nil once the connection closed: what is handed in after is dropped.
        var channel: (any Channel)?
        /// Close the channel once everything handed in is written (QUIT, shutdown).
        var closeWhenWritten = false
        /// Requests handed to the session thread whose final line has not been handed in.
        var inFlight = 0
        /// The event loop waits for answers or drained output: every write wakes it.
        var loopWaiting = false
    }

    /// One piece of work, taken under the lock and done outside it.
    private enum Job {
        case write(OutputWire.Write)
        case close(any Channel)
    }

    private let state: Mutex<State>
    let gate: OutputGate
    /// Called on the event loop after NIO wrote bytes (the handler reads again if it paused).
    private let onNIOWritten: @Sendable () -> Void

    init(channel: any Channel, socket: SocketWriter?, gate: OutputGate, onNIOWritten: @escaping @Sendable () -> Void) {
        self.state = Mutex(State(wire: OutputWire(socket: socket), channel: channel))
        self.gate = gate
        self.onNIOWritten = onNIOWritten
    }

    /// Requests handed to the session thread and not answered yet.
    var inFlight: Int { state.withLock { $0.inFlight } }

    /// The event loop handed `count` requests to the session thread.
    func submitted(_ count: Int) {
        state.withLock { $0.inFlight += count }
    }

    /// Whether the event loop is to be woken by every write from now on. Returns true when it
    /// was not before (the loop then looks again once: an answer may have come just before).
    func setLoopWaiting(_ waiting: Bool) -> Bool {
        state.withLock { s in
            defer { s.loopWaiting = waiting }
            return waiting && !s.loopWaiting
        }
    }

    /// Hands in reply lines answering `finals` requests, and writes them unless another writer
    /// is busy (it writes them next); `close` closes the channel once they are written (QUIT), and
    /// nothing handed in after them is written. Returns whether the event loop waits to hear of it
    /// (seen when the lines were handed in, or after a send of this call: a loop that started
    /// waiting during the send — on the gate this send drained — is told too).
    func write(_ text: String, finals: Int, close: Bool = false) -> Bool {
        write(count: text.utf8.count, finals: finals, close: close) { $0.writeString(text) }
    }

    /// `write(_:finals:close:)` for lines already in UTF-8 (the session thread's output).
    func write(_ text: [UInt8], finals: Int, close: Bool = false) -> Bool {
        write(count: text.count, finals: finals, close: close) { $0.writeBytes(text) }
    }

    /// The writes' body: `bytes` of lines that `append` adds to a buffer.
    private func write(count bytes: Int, finals: Int, close: Bool, _ append: (inout ByteBuffer) -> Void) -> Bool {
        guard bytes > 0 || finals > 0 || close else { return false }
        gate.add(bytes)
        var dropped = 0
        let (first, wake) = state.withLock { s -> (Job?, Bool) in
            s.inFlight -= finals
            if s.channel == nil || s.closeWhenWritten {
                dropped = bytes
            } else {
                append(&s.wire.outgoing)
            }
            if close { s.closeWhenWritten = true }
            return (take(&s), s.loopWaiting)
        }
        if dropped > 0 { gate.drained(dropped) }
        let waitingAfterSend = run(first)
        return wake || waitingAfterSend
    }

    /// Closes the channel once everything handed in so far is written (at once if nothing is);
    /// what is handed in after is dropped.
    func closeWhenWritten() {
        let job = state.withLock { s -> Job? in
            s.closeWhenWritten = true
            return take(&s)
        }
        run(job)
    }

    /// The channel closed (event loop): what waits is dropped, the descriptor let go (a send under
    /// way keeps it until it returns).
    func closed() {
        let dropped = state.withLock { s -> Int in
            s.channel = nil
            s.wire.socket = nil
            defer { s.wire.outgoing.clear() }
            return s.wire.outgoing.readableBytes
        }
        if dropped > 0 { gate.drained(dropped) }
    }

    /// Under the lock: the next piece of work, when no writer is busy.
    private func take(_ s: inout State) -> Job? {
        guard s.wire.isIdle, let channel = s.channel else { return nil }
        if let write = s.wire.take(channel: channel) { return .write(write) }
        guard s.closeWhenWritten else { return nil }
        s.channel = nil
        s.wire.socket = nil
        return .close(channel)
    }

    /// Does `job` and whatever follows it (lines handed in meanwhile, or what the socket did not
    /// take, for NIO). Returns whether the event loop was waiting when the last direct send
    /// ended.
    @discardableResult
    private func run(_ job: Job?) -> Bool {
        var loopWaiting = false
        var next = job
        while let job = next {
            switch job {
            case .write(.direct(var bytes, let socket)):
                let sent = socket.send(bytes)
                bytes.moveReaderIndex(forwardBy: sent)
                if sent > 0 { gate.drained(sent) }
                let left = bytes.readableBytes
                next = state.withLock { s -> Job? in
                    loopWaiting = s.loopWaiting
                    guard let write = s.wire.sent(leaving: bytes, channel: s.channel) else { return take(&s) }
                    return .write(write)
                }
                // The connection closed meanwhile: the rest was dropped.
                if left > 0, next == nil { gate.drained(left) }
            case .write(.nio(let bytes, let channel)):
                let count = bytes.readableBytes
                channel.writeAndFlush(bytes).whenComplete { _ in
                    self.gate.drained(count)
                    self.nioWritten()
                }
                next = nil
            case .close(let channel):
                channel.close(promise: nil)
                next = nil
            }
        }
        return loopWaiting
    }

    /// NIO wrote (or dropped, the channel failing) what it was given: direct writes may go again,
    /// starting with what was handed in meanwhile. On the event loop.
    private func nioWritten() {
        let job = state.withLock { s -> Job? in
            s.wire.nioWritten()
            return take(&s)
        }
        run(job)
        onNIOWritten()
    }
}
