// Writing: making a request line, registering its call, and when the queued lines are written
// (ConnectionCore.swift has the state). Lines are written in bursts: on an idle connection the
// first call of a burst schedules one flush on the event loop; while calls are on the wire
// unanswered, new lines wait for the end of the next read, or for a job queued behind the tasks
// that read resumed (`queued`, `readEnded`), so that a pipelining client's requests leave in one
// write per burst of replies rather than one per waking task.

import KeelModel
import KeelProtocol
import NIOCore
import OrderedCollections

extension ConnectionCore {
    /// Bytes reserved for a request line before it is written (a GET or an INSERT of a few
    /// attributes fits; a longer line grows as needed).
    static let typicalLineBytes = 128

    /// The request line of `command` with `arguments` (a JSON object or nil). Throws
    /// `BAD_REQUEST` for a command name or arguments no line can carry, `TOO_LARGE` for a line
    /// over the daemon's limit — before anything is sent.
    func encode(tag: UInt64, command: String, arguments: JSON?) throws(KeelError) -> String {
        guard Request.isValidCommand(command) else {
            throw KeelError(.badRequest, "\"\(command)\" is not a command name (letters and dots)")
        }
        var members: OrderedDictionary<String, JSON> = [:]
        switch arguments {
        case nil, .null?: break
        case .object(let object)?: members = object
        case let other?: throw KeelError(.badRequest, "the arguments of \(command) must be a JSON object, not \(other.kindName)")
        }
        var line = ""
        // Room for a typical request line at once, not grown a doubling at a time.
        line.reserveCapacity(Self.typicalLineBytes)
        Request.writeLine(tag: String(tag), command: command, arguments: members, to: &line)
        let limit = maxRequestBytes.load(ordering: .relaxed)
        if line.utf8.count - 1 > limit {
            throw KeelError(
                .tooLarge, "the \(command) request is \(line.utf8.count - 1) bytes; the daemon takes at most \(limit) (maxRequestBytes)")
        }
        return line
    }

    /// Registers `call` under `tag` and queues its line. Returns the error instead when the
    /// connection is gone or the calling task is already cancelled (nothing is sent then).
    func submit(tag: UInt64, line: String, call: PendingCall, whileClosing: Bool = false) -> KeelError? {
        let (error, flush) = state.withLock { s -> (KeelError?, Bool) in
            if let failure = s.failure ?? (whileClosing ? nil : s.closing) { return (failure, false) }
            if Task.isCancelled { return (KeelError(.cancelled, "the task was cancelled before \(call.command) was sent"), false) }
            s.calls[tag] = call
            s.outgoing.writeString(line)
            if let deadline = call.deadline, s.timerAt.map({ deadline < $0 }) ?? true {
                s.timerAt = deadline
                s.timerDirty = true
            }
            return (nil, Self.queued(&s))
        }
        if flush { scheduleFlush() }
        return error
    }

    /// A line was appended to `outgoing` for a new call: whether the caller must schedule a
    /// flush. While other calls are on the wire unanswered, the line waits for the end of the
    /// next read instead, where the event loop writes everything queued at once (`readEnded`):
    /// the daemon answers a connection's requests in order, so they would wait behind those
    /// calls anyway, and requests then leave in one write per burst of replies rather than one
    /// per waking task. An idle connection (or one paused for a slow consumer) writes at once.
    static func queued(_ s: inout State) -> Bool {
        s.queuedCalls += 1
        guard !s.flushScheduled, !s.flushDeferred, !s.flushJobPending else { return false }
        if s.calls.count - s.queuedCalls > 0, !s.readsPaused {
            s.flushDeferred = true
            return false
        }
        s.flushScheduled = true
        return true
    }

    /// The end of a read (event loop) that resumed `resumed` waiting tasks. What waited for it
    /// is written now — or, when several tasks were just resumed, by a job queued on the
    /// cooperative pool behind them, so that the requests they make next (most callers make
    /// another) leave in one write, as a pipelining client's would.
    func readEnded(resumed: Int = 0) {
        enum Next { case nothing, flush, job }
        let next = state.withLock { s -> Next in
            if resumed > 1, !s.readsPaused, !s.flushJobPending {
                s.flushJobPending = true
                return .job
            }
            guard s.flushDeferred, !s.flushScheduled, !s.flushJobPending else { return .nothing }
            s.flushDeferred = false
            s.flushScheduled = true
            return .flush
        }
        switch next {
        case .nothing: break
        case .flush: flush()
        case .job: Task { [weak self] in self?.flushJob() }
        }
    }

    /// The job `readEnded` queued: the requests made since are written in one go.
    private func flushJob() {
        let schedule = state.withLock { s -> Bool in
            s.flushJobPending = false
            guard s.outgoing.readableBytes > 0, !s.flushScheduled else { return false }
            s.flushDeferred = false
            s.flushScheduled = true
            return true
        }
        if schedule { scheduleFlush() }
    }

    /// Reading stops or starts again for a slow stream consumer (event loop); while it is
    /// stopped, requests are written at once.
    func setReadsPaused(_ paused: Bool) {
        state.withLock { $0.readsPaused = paused }
        if paused { readEnded() }
    }

    /// Queues the flush task (once per burst: the caller set `flushScheduled`); on the event
    /// loop itself (a task running on `KeelConnection.executor`) it flushes at once.
    func scheduleFlush() {
        if eventLoop.inEventLoop {
            flush()
        } else {
            eventLoop.execute { self.flush() }
        }
    }

    /// Writes everything queued in one write and one flush (on the event loop), and moves the
    /// deadline timer earlier when a call asked for it.
    func flush() {
        let (bytes, channel, rearm) = state.withLock { s -> (ByteBuffer, (any Channel)?, NIODeadline?) in
            s.flushScheduled = false
            s.flushDeferred = false
            s.queuedCalls = 0
            let bytes = s.outgoing
            s.outgoing = ByteBuffer()
            let rearm = s.timerDirty ? s.timerAt : nil
            s.timerDirty = false
            return (bytes, s.channel, rearm)
        }
        if bytes.readableBytes > 0, let channel { channel.writeAndFlush(bytes, promise: nil) }
        if let rearm { scheduleTimer(at: rearm) }
    }
}
