// The connection's side on its event loop: cuts what the daemon sends into lines (LineFramer,
// bounded by `maxReplyBytes`), reads the head of each (ReplyHead: tag and kind, not the JSON),
// and hands it to the core, which matches it to its call by tag. Writing is the core's
// (ConnectionCore+Writing.swift); the end of each read tells it when queued requests may go.
//
// Back-pressure: when a stream's consumer falls behind (its buffer reaches the high-water
// mark), the handler stops cutting lines — the rest of the current read waits in `backlog` —
// and withholds `read()` from the channel, so the socket is not read; the daemon, whose
// replies then wait in the kernel, pauses that connection in turn. When the consumer has
// caught up (`resume`), the backlog is framed and reading starts again. What the client holds
// is therefore bounded by the high-water mark plus one read.

import KeelModel
import KeelProtocol
import Logging
import NIOCore

final class ClientHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let core: ConnectionCore
    private var framer: LineFramer
    /// The framer's limit (read while the framer is busy feeding, so kept apart).
    private let maxReplyBytes: Int
    private var context: ChannelHandlerContext?
    /// Bytes read and not framed yet (the rest of a read while a stream is paused).
    private var backlog: [ByteBuffer] = []
    /// Streams whose consumers are behind; reading waits while any is.
    private var paused: Set<UInt64> = []
    /// The channel asked for a read while reading was paused.
    private var readWanted = false
    /// The connection has failed: nothing more is framed.
    private var closed = false
    /// Tasks resumed by the lines of the current read.
    private var resumed = 0
    /// Replies routed and not yet handed to their tasks: resumed together once the lines at hand
    /// are framed (`resumeRouted`), not one by one between lines. Each resumption enqueues a
    /// job on the task's executor; enqueued back to back, the cooperative pool's idle threads
    /// are woken once or twice per read instead of once for nearly every reply (the wake-up, a
    /// futex call and a context switch, costs more than the rest of the call's routing).
    /// (The reply is taken out of its slot when its task is resumed: a move, not a copy.)
    private var routed: [(continuation: ReplyContinuation, reply: RawReply?)] = []
    /// Final lines handed over in place during the current read (added to the statistics at
    /// its end, one atomic add per read rather than per line).
    private var takenInPlace = 0

    init(core: ConnectionCore, maxReplyBytes: Int) {
        self.core = core
        self.framer = LineFramer(maximumLength: maxReplyBytes)
        self.maxReplyBytes = maxReplyBytes
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        core.state.withLock { $0.handler = bound }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        core.fail(KeelError(
            .disconnected,
            "the connection to keeld at \(core.socketPath) closed (the daemon stopped, crashed or dropped it); contexts opened on it and their unsaved changes are gone — connect again"
        ))
        backlog = []
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        core.logger.debug("connection error", metadata: ["conn.socket": "\(core.socketPath)", "error": "\(error)"])
        closed = true
        core.fail(KeelError(
            .disconnected,
            "the connection to keeld at \(core.socketPath) failed: \(KeelConnection.systemReason(error)); contexts opened on it and their unsaved changes are gone — connect again"))
        context.close(promise: nil)
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        backlog.append(unwrapInboundIn(data))
        ConnectionCore.Counters.raise(core.counters.peakUnreadBytes, to: backlog.reduce(0) { $0 + $1.readableBytes })
        processBacklog()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        core.readEnded(resumed: resumed)
        resumed = 0
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if paused.isEmpty && backlog.isEmpty {
            context.read()
        } else {
            readWanted = true
        }
    }

    /// Frames backlog bytes one line at a time until none is left or a stream pauses; then
    /// resumes the tasks whose replies came (whatever ended the loop: their calls are no
    /// longer registered, so nothing else would).
    private func processBacklog() {
        defer { resumeRouted() }
        while paused.isEmpty, !closed, !backlog.isEmpty {
            var buffer = backlog[0]
            let read = buffer
            let consumed = read.withUnsafeReadableBytes { raw -> Int in
                var offset = 0
                while offset < raw.count, paused.isEmpty, !closed {
                    let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                    let newline = LineFramer.firstNewline(in: rest)
                    let end = newline.map { $0 + 1 } ?? rest.count
                    if let newline, framer.isBetweenLines, let length = Self.lineLength(rest, newline: newline, limit: maxReplyBytes) {
                        // A whole line within this read (the usual case): read in place.
                        handle(UnsafeRawBufferPointer(rebasing: rest[..<length]).assumingMemoryBound(to: UInt8.self), of: read, at: offset)
                    } else {
                        framer.feed(UnsafeRawBufferPointer(rebasing: rest[..<end])) { frame in handle(frame) }
                    }
                    offset += end
                }
                return offset
            }
            // A line can end the connection (a refusal, a protocol violation): closing the channel
            // ran channelInactive, which emptied the backlog, before we get here.
            guard !closed else {
                backlog = []
                return
            }
            buffer.moveReaderIndex(forwardBy: consumed)
            if buffer.readableBytes == 0 { backlog.removeFirst() } else { backlog[0] = buffer }
        }
    }

    /// The length of the line that ends at `newline` in `bytes` without a CR before its LF, when
    /// it is within `limit` (a longer one goes through the framer, which reports it).
    private static func lineLength(_ bytes: UnsafeRawBufferPointer, newline: Int, limit: Int) -> Int? {
        let length = newline > 0 && bytes[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
        return length <= limit ? length : nil
    }

    /// A whole line in the read buffer `read`, `offset` bytes into its readable bytes: its head
    /// is read in place. A final line of a call is handed over as a slice of the read (no copy:
    /// the task that waits for it parses it from there); any other line is copied out, as the
    /// framer would have (a stream's rows are kept until their consumer takes them, and should
    /// not hold whole reads).
    private func handle(_ line: UnsafeBufferPointer<UInt8>, of read: ByteBuffer, at offset: Int) {
        let head: ReplyHead
        do {
            head = try ReplyHead.parse(line)
        } catch {
            violation("a line the client cannot read (\(error.message)): \(String(decoding: UnsafeBufferPointer(rebasing: line.prefix(200)), as: UTF8.self))")
            return
        }
        if head.isFinal, head.number != nil, let slice = read.getSlice(at: read.readerIndex + offset, length: line.count) {
            takenInPlace += 1
            route(head, .slice(slice))
        } else {
            route(head, .bytes(Array(line)))
        }
    }

    /// One line from the daemon: only its head is read here (tag and kind); its JSON is parsed
    /// by the task that wanted it (events, which go to many, are parsed here once).
    private func handle(_ frame: LineFramer.Frame) {
        switch frame {
        case .line(let line):
            let head: ReplyHead
            do {
                head = try ReplyHead.parse(line)
            } catch {
                violation("a line the client cannot read (\(error.message)): \(String(decoding: line.prefix(200), as: UTF8.self))")
                return
            }
            route(head, .bytes(line))
        case .tooLong(let prefix):
            // The call it belongs to fails with TOO_LARGE; the connection stays usable.
            let tag = Request.leadingTag(of: prefix) ?? "*"
            let kind = prefix.dropFirst(tag.utf8.count + 1).prefix(4)
            let error = KeelError(
                .tooLarge, "a reply line is longer than this client's limit of \(maxReplyBytes) bytes (Options.maxReplyBytes)")
            if let number = UInt64(tag) {
                core.fail(number, error, finalLine: Array(kind) != Array("ROW ".utf8))
            } else {
                core.counters.discardedLines.add(1, ordering: .relaxed)
            }
        }
    }

    private func route(_ head: ReplyHead, _ line: ReplyLine) {
        switch head.kind {
        case .event:
            let bytes = line.array
            guard case .event(let json)? = try? head.reply(bytes) else {
                violation("an event the client cannot read: \(String(decoding: bytes.prefix(200), as: UTF8.self))")
                return
            }
            core.deliver(event: json, bytes: bytes.count + 1)
            return
        case .error where head.number == nil && head.tag == "*":
            // Addressed to the connection, not a request (a refused peer): it ends here.
            closed = true
            let bytes = line.array
            let error: KeelError
            if case .error(_, let code, let message, let details)? = try? head.reply(bytes) {
                error = KeelError(code, message, details: details)
            } else {
                error = KeelError(.disconnected, "the daemon refused the connection: \(String(decoding: bytes.prefix(200), as: UTF8.self))")
            }
            core.fail(error)
            context?.close(promise: nil)
            return
        case .ok, .row, .error:
            break
        }
        guard let number = head.number else {
            core.counters.discardedLines.add(1, ordering: .relaxed)
            core.logger.debug("reply with a foreign tag dropped", metadata: ["call.tag": "\(head.tag)"])
            return
        }
        switch core.route(head, line: line, tag: number) {
        case .none: break
        case .resume(let continuation, let reply):
            routed.append((continuation, reply))
            resumed += 1
        case .pause:
            if paused.isEmpty { core.setReadsPaused(true) }
            paused.insert(number)
        }
    }

    /// Hands every reply routed so far to its task, back to back. A resumption only enqueues
    /// the task on its executor (the pool, or this event loop's queue), so nothing re-enters the
    /// handler meanwhile.
    private func resumeRouted() {
        if takenInPlace > 0 {
            core.counters.repliesTakenInPlace.add(takenInPlace, ordering: .relaxed)
            takenInPlace = 0
        }
        guard !routed.isEmpty else { return }
        ConnectionCore.Counters.raise(core.counters.peakRepliesPerRead, to: routed.count)
        for i in routed.indices {
            guard let reply = routed[i].reply.take() else { continue }
            routed[i].continuation.resume(returning: .success(reply))
        }
        routed.removeAll(keepingCapacity: true)
    }

    /// The daemon broke the protocol: replies can no longer be matched, so the connection ends.
    private func violation(_ text: String) {
        core.logger.warning("protocol violation", metadata: ["conn.socket": "\(core.socketPath)", "error": "\(text)"])
        closed = true
        core.fail(KeelError(.disconnected, "the daemon at \(core.socketPath) sent \(text); the connection is closed"))
        context?.close(promise: nil)
    }

    // MARK: Streams' consumers (scheduled onto the event loop by the core)

    /// A paused stream's consumer caught up.
    func resume(_ tag: UInt64) {
        guard paused.remove(tag) != nil else { return }
        core.resumed(tag)
        restartReading()
    }

    /// A stream's consumer went away: its lines are discarded from now on.
    func streamGone(_ tag: UInt64) {
        core.discard(tag)
        guard paused.remove(tag) != nil else { return }
        restartReading()
    }

    private func restartReading() {
        guard paused.isEmpty, let context else { return }
        core.setReadsPaused(false)
        processBacklog()
        // The backlog may have held the last replies requests were waiting on (ConnectionCore.queued).
        core.readEnded(resumed: resumed)
        resumed = 0
        if paused.isEmpty, backlog.isEmpty, readWanted {
            readWanted = false
            context.read()
        }
    }
}
