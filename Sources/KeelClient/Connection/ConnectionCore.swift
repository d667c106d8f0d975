// The state one connection shares between the tasks that call it and its event loop: the calls
// in flight by tag, the bytes waiting to be written, the deadline timer, and whether the
// connection is gone. One lock (`state`) guards all of it; it is held for a dictionary update
// or a buffer append, never across I/O or a continuation's resumption.
//
// A call's life:
// 1. `submit` (+Writing: the calling task): its tag (a counter, written in decimal) and line are
//    made outside the lock; under it the call is registered and the line appended to
//    `outgoing`, written in bursts (`queued`, `readEnded`) by whichever thread flushes —
//    straight to the socket (SocketWriter), through NIO only what the socket does not take.
// 2. `route` (here: the event loop): each reply line is matched to its call by tag. A ROW goes to
//    the call's stream, the final line (OK or ERR) ends the call; its JSON is parsed by the task
//    that waits for it (`RawReply`).
// 3. A call whose deadline passes (+Deadlines: `expire`, the deadline timer) or whose task is
//    cancelled (`cancel`) fails at once and stays registered as `discarded`: its late reply and
//    rows are dropped when they come, by tag, so the connection never falls out of step.
// 4. When the connection goes (+Deadlines: `fail`), every registered call fails with that error
//    and every later `submit` fails at once.

import KeelModel
import KeelProtocol
import Logging
import NIOCore
import Synchronization

/// A stream call's destination: ROW lines, kept as they came, decoded by its consumer.
protocol RowSink: Sendable {
    func push(line: [UInt8], payloadStart: Int, bytes: Int) -> StreamPushed
    func finish(_ error: KeelError?)
}

extension StreamBuffer: RowSink {
    func push(line: [UInt8], payloadStart: Int, bytes: Int) -> StreamPushed {
        push(.line(line, payloadStart: payloadStart), bytes: bytes)
    }
}

/// A reply line's bytes (without its LF): a copy of its own, or — for a final line that came
/// whole within one read — a slice of that read's buffer (`ByteBuffer` shares its storage), so
/// that the event loop hands it over without copying it.
enum ReplyLine: Sendable {
    case bytes([UInt8])
    case slice(ByteBuffer)

    var count: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .slice(let slice): slice.readableBytes
        }
    }

    /// The bytes as an array (a copy only for a slice).
    var array: [UInt8] {
        switch self {
        case .bytes(let bytes): bytes
        case .slice(let slice): Array(slice.readableBytesView)
        }
    }

    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        switch self {
        case .bytes(let bytes): bytes.withUnsafeBufferPointer(body)
        case .slice(let slice): slice.withUnsafeReadableBytes { body($0.assumingMemoryBound(to: UInt8.self)) }
        }
    }
}

/// A final line as it came, for the calling task to parse (JSON is parsed on the caller's
/// thread, not on the event loop).
struct RawReply: Sendable {
    let line: ReplyLine
    let head: ReplyHead

    /// The OK payload, or the ERR as a `KeelError`; a line whose JSON cannot be read is
    /// `INTERNAL` (a defect of the daemon; the connection stays in step, lines are whole).
    func outcome(command: String) -> Result<JSON?, KeelError> {
        line.withBytes { line in outcome(line, command: command) }
    }

    private func outcome(_ line: UnsafeBufferPointer<UInt8>, command: String) -> Result<JSON?, KeelError> {
        let reply: Reply
        do {
            // The usual case, read without making a `Reply` (nor its tag's text).
            if case .ok = head.kind { return .success(try head.payload(line)) }
            reply = try head.reply(line)
        } catch {
            return .failure(KeelError(
                .internal,
                "the daemon's reply to \(command) cannot be read (\(error.message)): \(String(decoding: UnsafeBufferPointer(rebasing: line.prefix(200)), as: UTF8.self))"
            ))
        }
        switch reply {
        case .ok(_, let payload): return .success(payload)
        case .error(_, let code, let message, let details): return .failure(KeelError(code, message, details: details))
        case .row, .event: return .failure(KeelError(.internal, "\(command) was answered with a line that does not end a reply"))
        }
    }
}

/// Unsafe (no canary allocation per call): every path that resumes one first takes its call out
/// of `calls`, or turns it `.discarded`, under the lock, so each is resumed exactly once.
typealias ReplyContinuation = UnsafeContinuation<Result<RawReply, KeelError>, Never>

/// One request sent and not yet answered.
struct PendingCall {
    enum Kind {
        /// A call awaiting its final line (`request`).
        case reply(ReplyContinuation)
        /// A call whose ROW lines go to a stream (`rows`).
        case stream(any RowSink)
        /// Expired, cancelled or abandoned: its lines are dropped until its final one.
        case discarded
    }

    var kind: Kind
    /// When the call fails with TIMEOUT; nil: no deadline runs now (a discarded call, or a
    /// stream paused because its consumer is behind).
    var deadline: NIODeadline?
    /// The call's deadline as a duration (a stream's runs again from each row).
    let timeout: TimeAmount
    /// The command, for messages.
    let command: String
}

final class ConnectionCore: Sendable {
    struct State {
        var calls: [UInt64: PendingCall] = [:]
        /// Request lines not yet written, who is writing to the socket now (one writer at a time
        /// keeps the lines in order), and the socket for writing from any thread (no socket until
        /// connected and once failed) — KeelProtocol's OutputWire.
        var wire = OutputWire()
        /// A caller is about to flush (it set this under the lock and calls `flush` next).
        var flushScheduled = false
        /// `flush` was called while another writer was busy: that writer writes `outgoing`
        /// when it is done.
        var flushAfterWrite = false
        /// Calls registered whose lines are still in `outgoing` (so `calls.count - queuedCalls`
        /// calls are on the wire, unanswered).
        var queuedCalls = 0
        /// `outgoing` waits for the end of the next read (see `submit`).
        var flushDeferred = false
        /// Reading is paused for a slow stream consumer: nothing may wait for a read.
        var readsPaused = false
        /// A flush job is queued behind the tasks the last read resumed (see `readEnded`).
        var flushJobPending = false
        /// The connection is gone: why. Every later call fails with it.
        var failure: KeelError?
        /// `close()` has begun: later calls fail with this (QUIT still goes out).
        var closing: KeelError?
        var channel: (any Channel)?
        /// When the deadline timer fires; nil when none is scheduled.
        var timerAt: NIODeadline?
        /// The timer must be scheduled again (earlier) by the next flush.
        var timerDirty = false
        var timer: Scheduled<Void>?
        var subscriptions = SubscriptionState()
        /// The event-loop side, for streams' consumers to reach (cleared when the connection
        /// fails, which breaks the reference cycle).
        var handler: NIOLoopBound<ClientHandler>?
    }

    /// Guards the calls in flight, the outgoing bytes, the failure, the timer and the
    /// subscriptions (see the top of this file).
    let state = Mutex(State())
    /// The next tag (tags are decimal counters).
    private let nextTag = Atomic<UInt64>(1)
    /// The daemon's `maxRequestBytes` once HELLO told it (a longer line is refused here).
    let maxRequestBytes = Atomic<Int>(Int.max)
    let eventLoop: any EventLoop
    let executor: EventLoopExecutor
    let socketPath: String
    let logger: Logger
    let counters = Counters()

    /// Statistics the event loop keeps (peaks only grow), readable from any thread.
    final class Counters: Sendable {
        let peakStreamRows = Atomic<Int>(0)
        let peakStreamBytes = Atomic<Int>(0)
        let peakUnreadBytes = Atomic<Int>(0)
        let pauses = Atomic<Int>(0)
        let discardedLines = Atomic<Int>(0)
        let writesLeftToEventLoop = Atomic<Int>(0)
        let peakRepliesPerRead = Atomic<Int>(0)
        let repliesTakenInPlace = Atomic<Int>(0)

        static func raise(_ atomic: borrowing Atomic<Int>, to value: Int) {
            var current = atomic.load(ordering: .relaxed)
            while value > current {
                let (exchanged, original) = atomic.compareExchange(expected: current, desired: value, ordering: .relaxed)
                if exchanged { return }
                current = original
            }
        }
    }

    init(eventLoop: any EventLoop, socketPath: String, logger: Logger) {
        self.eventLoop = eventLoop
        self.executor = EventLoopExecutor(eventLoop)
        self.socketPath = socketPath
        self.logger = logger
    }

    func makeTag() -> UInt64 {
        nextTag.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    // MARK: Replies (event loop)

    /// What `route` found for a line.
    enum Routed {
        case none
        /// A waiting task is to be resumed with this reply: its call is no longer registered,
        /// and the caller resumes it (exactly once) — together with the others of the same read
        /// (ClientHandler's `resumeRouted`).
        case resume(ReplyContinuation, RawReply)
        /// A stream's consumer is behind: stop reading until it resumes.
        case pause
    }

    /// Delivers one reply line of `tag` to its call: a final line to the waiting task as it
    /// came (returned as `.resume`, for the caller to resume), a ROW to the call's stream.
    func route(_ head: ReplyHead, line: ReplyLine, tag: UInt64) -> Routed {
        enum Action {
            case none
            case resume(ReplyContinuation)
            case push(any RowSink)
            case finish(any RowSink)
        }
        let action = state.withLock { s -> Action in
            guard let index = s.calls.index(forKey: tag) else {
                counters.discardedLines.add(1, ordering: .relaxed)
                return .none
            }
            switch (s.calls.values[index].kind, head.kind) {
            case (.discarded, _), (.reply, .row), (_, .event):
                // A late reply, or ROW lines of a command sent with `request` (use `rows`).
                counters.discardedLines.add(1, ordering: .relaxed)
                if head.isFinal { s.calls.remove(at: index) }
                return .none
            case (.reply(let continuation), .ok), (.reply(let continuation), .error):
                s.calls.remove(at: index)
                return .resume(continuation)
            case (.stream(let sink), .row):
                if s.calls.values[index].deadline != nil { s.calls.values[index].deadline = .now() + s.calls.values[index].timeout }
                return .push(sink)
            case (.stream(let sink), .ok), (.stream(let sink), .error):
                s.calls.remove(at: index)
                return .finish(sink)
            }
        }
        switch action {
        case .none:
            return .none
        case .resume(let continuation):
            return .resume(continuation, RawReply(line: line, head: head))
        case .finish(let sink):
            if case .error = head.kind, case .failure(let error) = RawReply(line: line, head: head).outcome(command: "the stream") {
                sink.finish(error)
            } else {
                sink.finish(nil)
            }
            return .none
        case .push(let sink):
            switch sink.push(line: line.array, payloadStart: head.payloadStart, bytes: line.count + 1) {
            case .discarded:
                discard(tag)
                return .none
            case .buffered(let count, let held, let pause):
                Counters.raise(counters.peakStreamRows, to: count)
                Counters.raise(counters.peakStreamBytes, to: held)
                guard pause else { return .none }
                counters.pauses.add(1, ordering: .relaxed)
                // The consumer is behind: no deadline runs for this stream while it catches up.
                state.withLock { $0.calls[tag]?.deadline = nil }
                return .pause
            }
        }
    }

    /// A paused stream's consumer caught up (event loop): its deadline runs again.
    func resumed(_ tag: UInt64) {
        let rearm = state.withLock { s -> NIODeadline? in
            guard let call = s.calls[tag], case .stream = call.kind else { return nil }
            let deadline = NIODeadline.now() + call.timeout
            s.calls[tag]?.deadline = deadline
            guard s.timerAt.map({ deadline < $0 }) ?? true else { return nil }
            s.timerAt = deadline
            return deadline
        }
        if let rearm { scheduleTimer(at: rearm) }
    }

    /// A line of `tag` could not be read (over the client's limit): its call fails with `error`;
    /// a stream's remaining lines are dropped as they come.
    func fail(_ tag: UInt64, _ error: KeelError, finalLine: Bool) {
        enum Action {
            case none
            case resume(ReplyContinuation)
            case finish(any RowSink)
        }
        let action = state.withLock { s -> Action in
            guard let index = s.calls.index(forKey: tag) else { return .none }
            switch s.calls.values[index].kind {
            case .reply(let continuation) where finalLine:
                s.calls.remove(at: index)
                return .resume(continuation)
            case .stream(let sink):
                if finalLine {
                    s.calls.remove(at: index)
                } else {
                    s.calls.values[index].kind = .discarded
                    s.calls.values[index].deadline = nil
                }
                return .finish(sink)
            case .reply, .discarded:
                if finalLine { s.calls.remove(at: index) }
                return .none
            }
        }
        switch action {
        case .none: counters.discardedLines.add(1, ordering: .relaxed)
        case .resume(let continuation): continuation.resume(returning: .failure(error))
        case .finish(let sink): sink.finish(error)
        }
    }

    /// A stream's consumer caught up (any thread): the event loop reads again.
    func consumerResumed(_ tag: UInt64) {
        guard let handler = state.withLock({ $0.handler }) else { return }
        eventLoop.execute { handler.value.resume(tag) }
    }

    /// A stream's consumer went away before its end (any thread): its lines are discarded.
    func consumerGone(_ tag: UInt64) {
        discard(tag)
        guard let handler = state.withLock({ $0.handler }) else { return }
        eventLoop.execute { handler.value.streamGone(tag) }
    }

    /// The call's reply is of no use any more: drop its lines as they come.
    func discard(_ tag: UInt64) {
        state.withLock { s in
            guard s.calls[tag] != nil else { return }
            s.calls[tag]?.kind = .discarded
            s.calls[tag]?.deadline = nil
        }
    }
}
