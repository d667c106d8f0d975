// The reading side of a connection: bytes into the backlog, framed one line at a time while the
// connection is within its limits; each request parsed, checked against the command table and
// the peer's rights, then answered on the loop or handed to the connection's thread.

import KeelModel
import KeelProtocol
import NIOCore

extension ConnectionHandler {
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing, link != nil else { return }
        backlog.append(unwrapInboundIn(data))
        processBacklog(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        endBurst(context: context)
        closeIfFinished()
        updateWaiting()
        context.fireChannelReadComplete()
    }

    /// The client shut down its side (`printf … | socat`): every request it sent is still
    /// answered, then the connection closes.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let channelEvent = event as? ChannelEvent, case .inputClosed = channelEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if refused {
            context.close(promise: nil)
            return
        }
        inputEnded = true
        processBacklog(context: context)
        endBurst(context: context)
        closeIfFinished()
        updateWaiting()
    }

    /// Frames backlog bytes one line at a time until none is left or the connection is over a
    /// limit; then hands over what the burst produced.
    func processBacklog(context: ChannelHandlerContext) {
        // Read once per pass: the gate's count only falls meanwhile, except by this loop's
        // own `inline` (counted below) and the thread's output (which waits on the gate itself).
        outputAtStart = link?.gate.bufferedBytes ?? 0
        while !closing, !isOverLimit, !backlog.isEmpty {
            var buffer = backlog[0]
            let consumed = buffer.withUnsafeReadableBytes { raw -> Int in
                var offset = 0
                while offset < raw.count, !closing, !isOverLimit {
                    let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                    let end = LineFramer.firstNewline(in: rest).map { $0 + 1 } ?? rest.count
                    framer.feed(UnsafeRawBufferPointer(rebasing: rest[..<end]), take)
                    offset += end
                }
                return offset
            }
            buffer.moveReaderIndex(forwardBy: consumed)
            if buffer.readableBytes == 0 { backlog.removeFirst() } else { backlog[0] = buffer }
        }
        if closing { backlog.removeAll() }
        // The input ended with a line still under way (no LF before the shutdown): it is the
        // last request, answered like the others.
        if inputEnded, backlog.isEmpty, !closing { framer.finish(take) }
        if !backlog.isEmpty { endBurst(context: context) }
    }

    /// One frame of the request stream: a line to handle, or a line over the limit to refuse.
    /// (Called while `framer` is being fed: it must not touch `framer`.)
    private func take(_ frame: LineFramer.Frame) {
        guard !closing else { return }
        switch frame {
        case .line(let line):
            handle(line)
        case .tooLong(let prefix):
            let tag = Request.leadingTag(of: prefix) ?? "*"
            emit(.reply(.error(tag: tag, KeelError(
                .tooLarge, "the request line is longer than the limit of \(server.limits.maxRequestBytes) bytes (maxRequestBytes)"))))
        }
    }

    /// The burst is over (or paused): the replies answered here go out in one write, the rest
    /// to the connection's thread as one job.
    func endBurst(context: ChannelHandlerContext) {
        if !inline.isEmpty {
            write(inline)
            inline = ""
        }
        if !items.isEmpty, let link {
            link.output.submitted(items.count)
            link.worker.submit(.items(items))
            items = []
        }
    }

    /// One request line: parsed, checked against the table, answered here or handed over.
    private func handle(_ line: [UInt8]) {
        let request: Request
        do {
            request = try Request.parse(line)
        } catch {
            emit(.reply(error.reply))
            return
        }
        let spec: CommandSpec
        do {
            spec = try CommandTable.resolve(request)
        } catch {
            emit(.reply(.error(tag: request.tag, error)))
            return
        }
        if server.isShuttingDown {
            emit(.reply(.error(tag: request.tag, KeelError(.busy, "shutting down"))))
            return
        }
        if spec.isAdmin, let link, !link.isAdmin {
            emit(.reply(.error(tag: request.tag, KeelError(
                .permission, "\(spec.name) is an admin command; uid \(link.peer.uid) is not an admin of this daemon"))))
            return
        }
        if spec.group == .connection, canAnswerHere {
            do throws(KeelError) {
                let payload = try ConnectionCommands.answer(request, server: server, connection: id, link: link)
                Reply.ok(tag: request.tag, payload).write(to: &inline)
                if spec.name == "QUIT" { closing = true }
            } catch {
                Reply.error(tag: request.tag, error).write(to: &inline)
            }
            return
        }
        emit(.request(request, spec))
    }

    private var canAnswerHere: Bool { inFlight == 0 && items.isEmpty }

    private func emit(_ item: SessionItem) {
        if case .reply(let reply) = item, canAnswerHere {
            reply.write(to: &inline)
        } else {
            items.append(item)
        }
    }

    // MARK: Back-pressure

    /// Too many requests in flight, or too many reply bytes waiting: frame nothing more.
    private var isOverLimit: Bool {
        guard let link else { return true }
        return inFlight + items.count >= server.limits.inFlightRequests
            || outputAtStart + inline.utf8.count > link.gate.limit
    }

    func read(context: ChannelHandlerContext) {
        outputAtStart = link?.gate.bufferedBytes ?? 0
        if refused {
            context.read()  // drained and dropped until the peer closes
        } else if closing || inputEnded || !backlog.isEmpty || isOverLimit {
            readWanted = true
            updateWaiting()
        } else {
            context.read()
        }
    }

    /// Called as replies are written: below half the limits, the backlog is framed again, then
    /// the socket read again.
    func resumeIfDrained() {
        guard !closing, let context, let link else { return }
        guard inFlight < max(1, server.limits.inFlightRequests / 2), link.gate.bufferedBytes <= link.gate.limit / 2 else { return }
        outputAtStart = link.gate.bufferedBytes
        if !backlog.isEmpty {
            processBacklog(context: context)
            endBurst(context: context)
        }
        closeIfFinished()
        if backlog.isEmpty, readWanted, !inputEnded, !isOverLimit {
            readWanted = false
            context.read()
        }
        updateWaiting()
    }

    /// QUIT answered, or the input ended: close once everything sent has been answered.
    func closeIfFinished() {
        guard !refused, closing || inputEnded, backlog.isEmpty, inFlight == 0, items.isEmpty else { return }
        closeAfterPendingWrites()
    }
}
