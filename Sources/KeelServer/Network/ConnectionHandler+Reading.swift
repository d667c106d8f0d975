// The reading side of a connection when the event loop reads it: bytes into the backlog, framed
// one line at a time while the connection is within its limits (RequestIntake: parsed, checked
// against the command table and the peer's rights), then answered on the loop or handed to the
// connection's thread. When the thread reads its socket itself (ConnectionInput, the usual case),
// the loop asks NIO for no read; NIO still reads what the client sent before shutting down its
// side, and that goes to the thread as it is.

import KeelModel
import KeelProtocol
import NIOCore

extension ConnectionHandler {
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing, let link else { return }
        if link.input != nil {
            link.worker.submit(.input(unwrapInboundIn(data)))
            return
        }
        backlog.append(unwrapInboundIn(data))
        processBacklog(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard link?.input == nil else {
            context.fireChannelReadComplete()
            return
        }
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
        if let link, link.input != nil {
            link.worker.submit(.inputEnded)
            return
        }
        inputEnded = true
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
            let consumed = buffer.withUnsafeReadableBytes { raw in
                intake.frame(raw, link: link, while: { !closing && !isOverLimit }) { take($0) }
            }
            buffer.moveReaderIndex(forwardBy: consumed)
            if buffer.readableBytes == 0 { backlog.removeFirst() } else { backlog[0] = buffer }
        }
        if closing { backlog.removeAll() }
        if !backlog.isEmpty { endBurst(context: context) }
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

    /// One checked request (RequestIntake): a connection command is answered here when nothing
    /// is in flight before it; everything else goes to the thread in order.
    private func take(_ item: SessionItem) {
        guard !closing else { return }
        guard case .request(let request, let spec) = item, spec.group == .connection, canAnswerHere else {
            emit(item)
            return
        }
        do throws(KeelError) {
            let payload = try ConnectionCommands.answer(request, server: server, connection: id)
            Reply.ok(tag: request.tag, payload).write(to: &inline)
            if spec.name == "QUIT" { closing = true }
        } catch {
            Reply.error(tag: request.tag, error).write(to: &inline)
        }
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
        } else if link?.input != nil {
            return  // the connection's thread reads the socket
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
