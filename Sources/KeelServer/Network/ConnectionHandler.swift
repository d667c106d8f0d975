// One connection on its event loop: frames lines (LineFramer, bounded), answers what needs no
// store at once, hands the rest of each read burst to the connection's thread as one job, and
// writes what comes back. Back-pressure: it stops reading while too many requests are in
// flight or too many reply bytes wait for a client that does not read (OutputGate), and
// resumes once they drain.
//
// Order: a request is answered on the loop only when nothing of the connection is in flight or
// waiting in this burst; from the first request that goes to the thread on, every later one of
// the burst goes there too (already-answered ones as their reply line), so replies always come
// in request order. Replies answered on the loop during a burst go out in one write and one
// flush at the end of the burst.

import KeelModel
import KeelProtocol
import Logging
import NIOCore

final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let server: ServerContext
    private let id: Int
    private var logger: Logger
    private var framer: LineFramer
    private var context: ChannelHandlerContext?
    private var link: ConnectionLink?
    /// Replies answered on the loop during this burst.
    private var inline = ""
    /// This burst's work for the connection's thread, in order.
    private var items: [SessionItem] = []
    /// Requests handed to the thread and not yet answered.
    private var inFlight = 0
    /// A read was asked for while reading was paused.
    private var readWanted = false
    /// QUIT answered or the peer refused: nothing more is read.
    private var closing = false

    init(server: ServerContext) {
        self.server = server
        self.id = server.makeConnectionID()
        self.framer = LineFramer(maximumLength: server.limits.maxRequestBytes)
        var logger = server.logger
        logger[metadataKey: "conn.id"] = "\(id)"
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        PeerCredentials.of(context.channel).whenComplete { result in
            handler.value.admit(result)
        }
        context.fireChannelActive()
    }

    /// Admits the peer (starting its session thread) or refuses it with one line.
    private func admit(_ peer: Result<PeerCredentials, any Error>) {
        guard let context else { return }
        let daemonUID = server.daemonUID
        guard case .success(let credentials) = peer, server.configuration.allows(uid: credentials.uid, daemonUID: daemonUID)
        else {
            let who: String
            if case .success(let credentials) = peer { who = "uid \(credentials.uid) may not connect to this daemon" } else {
                who = "the daemon cannot read the peer's credentials"
            }
            logger.notice("connection refused", metadata: ["peer": "\(who)"])
            closing = true
            let line = Reply.error(tag: "*", KeelError(.permission, who)).line()
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(string: line))).whenComplete { _ in
                channel.close(promise: nil)
            }
            return
        }
        let worker = SessionWorker()
        let gate = OutputGate(limit: server.limits.maxBufferedBytes)
        let link = ConnectionLink(
            id: id, peer: credentials, isAdmin: server.configuration.isAdmin(uid: credentials.uid, daemonUID: daemonUID),
            gate: gate, worker: worker, eventLoop: context.eventLoop, handler: NIOLoopBound(self, eventLoop: context.eventLoop))
        self.link = link
        server.register(link)
        server.sessionStarted()
        let server = self.server
        worker.start(name: "keel.conn.\(id)") {
            Session(server: server, link: link).run()
            server.sessionEnded()
        }
        logger.debug("connection accepted", metadata: ["peer.uid": "\(credentials.uid)", "peer.pid": "\(credentials.pid)"])
        if readWanted, !isPaused {
            readWanted = false
            context.read()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let link {
            link.worker.close()
            link.gate.close()
            server.unregister(link.id)
            logger.debug("connection closed")
        }
        context.fireChannelInactive()
    }

    /// The client shut down its side (`printf … | socat`): every request it sent is still
    /// answered, then the connection closes.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let channelEvent = event as? ChannelEvent, case .inputClosed = channelEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        endBurst(context: context)
        closing = true
        if inFlight == 0 { closeAfterPendingWrites() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing, link != nil else { return }
        let buffer = unwrapInboundIn(data)
        let limit = framer.maximumLength
        framer.feed(buffer.readableBytesView) { frame in
            guard !closing else { return }
            switch frame {
            case .line(let line):
                handle(line)
            case .tooLong(let prefix):
                let tag = Request.leadingTag(of: prefix) ?? "*"
                emit(.reply(.error(tag: tag, KeelError(
                    .tooLarge, "the request line is longer than the limit of \(limit) bytes (maxRequestBytes)"))))
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        endBurst(context: context)
        if closing, inFlight == 0 {
            closeAfterPendingWrites()
        }
        context.fireChannelReadComplete()
    }

    /// The burst is over: the replies answered here go out in one write, the rest to the
    /// connection's thread as one job.
    private func endBurst(context: ChannelHandlerContext) {
        if !inline.isEmpty {
            write(inline, context: context)
            inline = ""
        }
        if !items.isEmpty, let link {
            inFlight += items.count
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
        if ConnectionCommands.names.contains(spec.name), canAnswerHere {
            do throws(KeelError) {
                let payload = try ConnectionCommands.answer(request, server: server, connection: id)
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

    // MARK: Writing

    /// Lines from the connection's thread (ConnectionLink.deliver), already counted in the gate.
    func deliver(_ text: String, bytes: Int, finals: Int, close: Bool) {
        inFlight -= finals
        guard let context, let gate = link?.gate else { return }
        let buffer = context.channel.allocator.buffer(string: text)
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { [handler = NIOLoopBound(self, eventLoop: context.eventLoop)] _ in
            gate.drained(bytes)
            handler.value.resumeIfDrained()
        }
        if close || (closing && inFlight == 0) {
            closeAfterPendingWrites()
        } else {
            resumeIfDrained()
        }
    }

    private func write(_ text: String, context: ChannelHandlerContext) {
        guard let gate = link?.gate else { return }
        let bytes = text.utf8.count
        gate.add(bytes)
        let buffer = context.channel.allocator.buffer(string: text)
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { [handler = NIOLoopBound(self, eventLoop: context.eventLoop)] _ in
            gate.drained(bytes)
            handler.value.resumeIfDrained()
        }
    }

    /// Closes once everything written so far has reached the socket.
    func closeAfterPendingWrites() {
        guard let context else { return }
        closing = true
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    func closeNow() {
        closing = true
        context?.close(promise: nil)
    }

    // MARK: Back-pressure

    private var isPaused: Bool {
        guard let link else { return true }
        return inFlight >= server.limits.inFlightRequests || link.gate.isOverLimit
    }

    func read(context: ChannelHandlerContext) {
        if isPaused || closing {
            readWanted = true
        } else {
            context.read()
        }
    }

    private func resumeIfDrained() {
        guard readWanted, !closing, let context, let link else { return }
        guard inFlight < max(1, server.limits.inFlightRequests / 2), link.gate.bufferedBytes <= link.gate.limit / 2 else { return }
        readWanted = false
        context.read()
    }
}
