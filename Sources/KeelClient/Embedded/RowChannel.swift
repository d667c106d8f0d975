// The rows of one embedded FETCH on their way from the context's thread to the task that reads
// them, with back-pressure: at most `capacity` rows wait; when they do, the fetch (on the
// context's thread) waits for the reader — serving the family's other calls meanwhile
// (ContextThread.serve) — so a million-row fetch is never held whole, and a reader that calls
// its context between rows does not deadlock.
//
// The reader side is an `AsyncThrowingStream` pulling one row per `next()`. When the reader goes
// away (the stream and its iterator dropped, or its task cancelled), the channel is abandoned and
// the fetch stops at its next row.

import Collections
import KeelModel
import Synchronization

final class RowChannel: Sendable {
    private struct State {
        var rows: Deque<JSON> = []
        /// Set when the fetch ended: nil error for a complete one.
        var ended = false
        var failure: (any Error)?
        /// The reader waiting for a row.
        var reader: CheckedContinuation<JSON?, any Error>?
        /// The reader went away: the fetch stops.
        var abandoned = false
        /// The most rows that ever waited (for tests: never above `capacity`).
        var highWater = 0
    }

    /// Guards everything between the fetch and its reader.
    private let state = Mutex(State())
    private let capacity: Int
    private let thread: ContextThread

    init(capacity: Int, thread: ContextThread) {
        self.capacity = capacity
        self.thread = thread
    }

    /// Producer, on the context's thread: hands one row over, waiting while `capacity` rows wait
    /// (the thread serves other calls meanwhile). False when the reader is gone or the thread
    /// is stopping: the fetch should stop.
    func push(_ row: JSON) -> Bool {
        let (keepGoing, full) = state.withLock { s -> (Bool, Bool) in
            guard !s.abandoned else { return (false, false) }
            if let reader = s.reader {
                s.reader = nil
                reader.resume(returning: row)
                return (true, false)
            }
            s.rows.append(row)
            s.highWater = max(s.highWater, s.rows.count)
            return (true, s.rows.count >= capacity)
        }
        guard keepGoing else { return false }
        guard full else { return true }
        var stopped = false
        thread.serve {
            if thread.isStopping {
                stopped = true
                return true
            }
            return state.withLock { $0.abandoned || $0.rows.count < capacity }
        }
        return !stopped && !state.withLock { $0.abandoned }
    }

    /// Whether the reader went away.
    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    /// The most rows that ever waited for the reader.
    var highWater: Int { state.withLock { $0.highWater } }

    /// Producer: the fetch ended (with `failure`, or complete).
    func finish(_ failure: (any Error)?) {
        state.withLock { s in
            guard !s.ended else { return }
            s.ended = true
            s.failure = failure
            if let reader = s.reader {
                s.reader = nil
                if let failure { reader.resume(throwing: failure) } else { reader.resume(returning: nil) }
            }
        }
    }

    /// Reader: the next row, nil at the end; throws the fetch's error.
    func next() async throws -> JSON? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (reader: CheckedContinuation<JSON?, any Error>) in
                let wasFull = state.withLock { s -> Bool? in
                    if let row = s.rows.popFirst() {
                        reader.resume(returning: row)
                        return s.rows.count + 1 >= capacity
                    }
                    if s.ended {
                        if let failure = s.failure {
                            s.failure = nil
                            reader.resume(throwing: failure)
                        } else {
                            reader.resume(returning: nil)
                        }
                        return false
                    }
                    if s.abandoned {
                        reader.resume(throwing: CancellationError())
                        return false
                    }
                    s.reader = reader
                    return nil
                }
                // The fetch may be waiting for room: let it look again.
                if wasFull == true { thread.wake() }
            }
        } onCancel: {
            abandon()
        }
    }

    /// Reader: gone (cancelled, or the stream dropped). The fetch stops at its next row; a
    /// waiting read ends with `CancellationError`.
    func abandon() {
        let reader = state.withLock { s -> CheckedContinuation<JSON?, any Error>? in
            s.abandoned = true
            s.rows.removeAll()
            defer { s.reader = nil }
            return s.reader
        }
        reader?.resume(throwing: CancellationError())
        thread.wake()
    }

    /// The reader's stream. Dropping it (and its iterator) abandons the channel.
    func stream() -> AsyncThrowingStream<JSON, any Error> {
        let reader = Reader(channel: self)
        return AsyncThrowingStream(unfolding: { try await reader.channel.next() })
    }

    /// Held only by the stream's closure: when the stream is gone, so is the reader.
    private final class Reader: Sendable {
        let channel: RowChannel
        init(channel: RowChannel) { self.channel = channel }
        deinit { channel.abandon() }
    }
}
