// Writing: making a request line, registering its call, and when and by whom the queued lines
// are written (ConnectionCore.swift has the state). Lines are written in bursts: on an idle
// connection the first call of a burst flushes at once; while calls are on the wire unanswered,
// new lines wait for the end of the next read, or for a job queued behind the tasks that read
// resumed (`queued`, `readEnded`), so that a pipelining client's requests leave in one write per
// burst of replies rather than one per waking task. Whoever flushes writes from its own thread,
// straight to the socket (SocketWriter), one writer at a time (`wire`); only what the socket does
// not take at once goes through NIO on the event loop (`flush`).

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
    func encode(tag: UInt64, command: String, arguments: JSON?) throws(KeelError) -> [UInt8] {
        guard Request.isValidCommand(command) else {
            throw KeelError(.badRequest, "\"\(command)\" is not a command name (letters and dots)")
        }
        var members: OrderedDictionary<String, JSON> = [:]
        switch arguments {
        case nil, .null?: break
        case .object(let object)?: members = object
        case let other?: throw KeelError(.badRequest, "the arguments of \(command) must be a JSON object, not \(other.kindName)")
        }
        // UTF-8 bytes, as they are sent (appending to a `String` piece by piece costs several
        // times more); room for a typical request line at once, not grown a doubling at a time.
        var line: [UInt8] = []
        line.reserveCapacity(Self.typicalLineBytes)
        Request.writeLine(tag: tag, command: command, arguments: members, to: &line)
        let limit = maxRequestBytes.load(ordering: .relaxed)
        if line.count - 1 > limit {
            throw KeelError(
                .tooLarge, "the \(command) request is \(line.count - 1) bytes; the daemon takes at most \(limit) (maxRequestBytes)")
        }
        return line
    }

    /// Registers `call` under `tag` and queues its line. Returns the error instead when the
    /// connection is gone or the calling task is already cancelled (nothing is sent then).
    func submit(tag: UInt64, line: [UInt8], call: PendingCall, whileClosing: Bool = false) -> KeelError? {
        let (error, flush) = state.withLock { s -> (KeelError?, Bool) in
            if let failure = s.failure ?? (whileClosing ? nil : s.closing) { return (failure, false) }
            if Task.isCancelled { return (KeelError(.cancelled, "the task was cancelled before \(call.command) was sent"), false) }
            s.calls[tag] = call
            s.wire.outgoing.writeBytes(line)
            if let deadline = call.deadline, s.timerAt.map({ deadline < $0 }) ?? true {
                s.timerAt = deadline
                s.timerDirty = true
            }
            return (nil, Self.queued(&s))
        }
        if flush { self.flush() }
        return error
    }

    /// A line was appended to `outgoing` for a new call: whether the caller must flush (it
    /// writes the line itself). While other calls are on the wire unanswered, the line waits for
    /// the end of the next read instead, where everything queued is written at once (`readEnded`):
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
            guard s.wire.outgoing.readableBytes > 0, !s.flushScheduled else { return false }
            s.flushDeferred = false
            s.flushScheduled = true
            return true
        }
        if schedule { flush() }
    }

    /// Reading stops or starts again for a slow stream consumer (event loop); while it is
    /// stopped, requests are written at once.
    func setReadsPaused(_ paused: Bool) {
        state.withLock { $0.readsPaused = paused }
        if paused { readEnded() }
    }

    /// Writes everything queued, from the calling thread (a task's, or the event loop): straight
    /// to the socket, in one `send` per burst, without waking the event loop. One writer at a
    /// time (`wire`), so lines leave in the order they were queued: a flush that finds another
    /// writer busy leaves its bytes to it (`flushAfterWrite`). What the socket does not take at
    /// once (it is full, or broken) goes to NIO, and direct writes wait until NIO has written it.
    /// Moves the deadline timer earlier when a call asked for it.
    func flush() {
        var job = state.withLock { takeForWriting(&$0) }
        while let taken = job {
            job = write(taken)
        }
    }

    /// Bytes taken from `outgoing` for one writer.
    typealias WriteJob = OutputWire.Write

    /// Under the lock: the bytes to write now and how, or nil when there are none or another
    /// writer is busy (it writes them when done).
    private func takeForWriting(_ s: inout State) -> WriteJob? {
        s.flushScheduled = false
        s.flushDeferred = false
        s.queuedCalls = 0
        if s.timerDirty {
            s.timerDirty = false
            rearmTimer()
        }
        guard s.wire.isIdle else {
            s.flushAfterWrite = true
            return nil
        }
        s.flushAfterWrite = false
        return s.wire.take(channel: s.channel)
    }

    /// Writes one job; returns the next (bytes queued meanwhile by flushes that found this
    /// writer busy, or what the socket did not take, for NIO).
    private func write(_ job: WriteJob) -> WriteJob? {
        switch job {
        case .direct(var bytes, let writer):
            let sent = writer.send(bytes)
            bytes.moveReaderIndex(forwardBy: sent)
            return state.withLock { s -> WriteJob? in
                let rest = s.wire.sent(leaving: bytes, channel: s.failure == nil ? s.channel : nil)
                guard s.failure == nil else { return nil }
                guard bytes.readableBytes > 0 else {
                    return s.flushAfterWrite ? takeForWriting(&s) : nil
                }
                if rest != nil { counters.writesLeftToEventLoop.add(1, ordering: .relaxed) }
                return rest
            }
        case .nio(let bytes, let channel):
            channel.writeAndFlush(bytes).whenComplete { _ in self.nioWriteDone() }
            return nil
        }
    }

    /// NIO has written what it was given (or the channel failed; then `fail` has run or will):
    /// direct writes may go again, starting with what was queued meanwhile.
    private func nioWriteDone() {
        var job = state.withLock { s -> WriteJob? in
            s.wire.nioWritten()
            guard s.failure == nil, s.flushAfterWrite else { return nil }
            return takeForWriting(&s)
        }
        while let taken = job {
            job = write(taken)
        }
    }

    /// Sets the deadline timer for the earliest deadline now (`timerAt`, read on the event loop,
    /// so that rearms queued from several threads in any order end at the earliest).
    private func rearmTimer() {
        eventLoop.execute {
            guard let at = self.state.withLock({ $0.failure == nil ? $0.timerAt : nil }) else { return }
            self.scheduleTimer(at: at)
        }
    }
}
