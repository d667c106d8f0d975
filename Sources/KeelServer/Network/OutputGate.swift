// The cap on what a slow reader can make the daemon buffer (spec/protocol.md: "A client that
// does not read its replies is not allowed to grow the daemon's memory without bound").
//
// Counts the reply bytes of one connection handed to its ReplyWriter and not yet written into
// the socket (a direct send's count, or a NIO write's promise completing when the kernel took
// the bytes). The event loop stops reading the connection while the count is over the limit;
// the session's thread, streaming FETCH rows, waits here until the count is back under half the
// limit (or the connection closed), so a FETCH of a million rows to a client that stopped
// reading holds at most the limit plus one chunk in the daemon.

import Dispatch
import Synchronization

final class OutputGate: Sendable {
    struct State {
        /// Bytes handed over and not yet in the socket.
        var bytes = 0
        /// The connection is gone: nobody will drain; waiters give up.
        var closed = false
        /// The session's thread is blocked in `waitForRoom` (so exactly one signal wakes it).
        var waiting = false
        /// Called once when the count falls to half the limit (events waiting for room).
        var onRoom: (@Sendable () -> Void)?
    }

    /// Guards the byte count, the closed flag, whether the session's thread waits, and the
    /// room callback.
    private let state = Mutex(State())
    /// Wakes the session's thread blocked in `waitForRoom`.
    private let wake = DispatchSemaphore(value: 0)
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    var bufferedBytes: Int { state.withLock { $0.bytes } }
    var isOverLimit: Bool { state.withLock { $0.bytes > limit } }
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Bytes handed in for writing.
    func add(_ count: Int) {
        state.withLock { $0.bytes += count }
    }

    /// Bytes the socket took (or that were dropped with the connection).
    func drained(_ count: Int) {
        let (signal, room) = state.withLock { s -> (Bool, (@Sendable () -> Void)?) in
            s.bytes -= count
            guard s.bytes <= limit / 2 else { return (false, nil) }
            let room = s.onRoom
            s.onRoom = nil
            guard s.waiting else { return (false, room) }
            s.waiting = false
            return (true, room)
        }
        if signal { wake.signal() }
        room?()
    }

    /// Calls `body` once the count is at most half the limit (at once if it is already).
    func whenRoom(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            if s.closed { return false }
            if s.bytes <= limit / 2 { return true }
            s.onRoom = body
            return false
        }
        if now { body() }
    }

    /// The connection closed: wakes a waiting session thread for good.
    func close() {
        let signal = state.withLock { s -> Bool in
            s.closed = true
            guard s.waiting else { return false }
            s.waiting = false
            return true
        }
        if signal { wake.signal() }
    }

    /// Blocks the calling (session) thread while more than the limit is buffered. Returns false
    /// when the connection closed. Never call on an event loop.
    func waitForRoom() -> Bool {
        while true {
            let status = state.withLock { s -> Bool? in
                if s.closed { return false }
                if s.bytes <= limit { return true }
                s.waiting = true
                return nil
            }
            if let status { return status }
            wake.wait()
        }
    }
}
