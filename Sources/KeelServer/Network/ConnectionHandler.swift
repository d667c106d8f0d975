// One connection on its event loop: frames lines (LineFramer, bounded), answers what needs no
// store at once, hands the rest of each read burst to the connection's thread as one job, and
// writes what comes back (ConnectionHandler+Reading.swift has the reading side).
//
// Back-pressure: bytes read are framed one line at a time; while too many requests are in
// flight or too many reply bytes wait for a client that does not read (OutputGate), the rest
// of what was read waits in `backlog` (at most one read burst) and no further read is asked
// of the socket. Both resume once the client has read half of what waits.
//
// Order: a request is answered on the loop only when nothing of the connection is in flight or
// waiting in this burst; from the first request that goes to the thread on, every later one of
// the burst goes there too (already-answered ones as their reply line), so replies always come
// in request order. Replies answered on the loop during a burst go out in one write at the end
// of the burst; the thread writes its own replies (ReplyWriter: straight to the socket when
// nothing else of the connection is being written), and wakes the loop only while it waits for
// them (`updateWaiting`).

import KeelModel
import KeelProtocol
import Logging
import NIOCore

final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let server: ServerContext
    let id: Int
    var logger: Logger
    var framer: LineFramer
    var context: ChannelHandlerContext?
    var link: ConnectionLink?
    /// Bytes read and not framed yet: the rest of a burst while the connection is over a limit.
    var backlog: [ByteBuffer] = []
    /// Replies answered on the loop during this burst.
    var inline = ""
    /// This burst's work for the connection's thread, in order.
    var items: [SessionItem] = []
    /// Requests handed to the thread and not yet answered (counted in the ReplyWriter, which the
    /// thread lowers as it writes).
    var inFlight: Int { link?.output.inFlight ?? 0 }
    /// Whether the ReplyWriter was told that this loop waits for answers (mirrors it, so the
    /// usual case costs no lock).
    private var waitingForAnswers = false
    /// A read was asked for while reading was paused.
    var readWanted = false
    /// QUIT answered, the peer refused or the daemon closing it: nothing more is read.
    var closing = false
    /// The client shut down its side: once what it sent is answered, the connection closes.
    var inputEnded = false
    /// The connection's unwritten output when the current pass over the backlog began.
    var outputAtStart = 0
    /// The close has been asked for (once).
    private var closeRequested = false
    /// The peer was refused: what it sends is read and dropped until it closes (closing at once
    /// with unread input would reset the connection and could lose the refusal line).
    var refused = false

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

    /// Admits the peer (starting its session thread) or refuses it with one line: PERMISSION for
    /// a uid that may not connect, BUSY over `limits.maxConnections`.
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
            refuse(KeelError(.permission, who), context: context)
            return
        }
        // Over the connection limit: one BUSY line and a close, no thread (the warning is logged
        // once per spell at the limit, by admitConnection).
        guard server.admitConnection() else {
            let limit = server.limits.maxConnections
            logger.debug("connection refused: at the connection limit", metadata: ["limits.maxConnections": "\(limit)"])
            refuse(
                KeelError(.busy, "keeld has too many connections (\(limit)); try again once one has closed (limits.maxConnections)"),
                context: context)
            return
        }
        let worker = SessionWorker()
        let gate = OutputGate(limit: server.limits.maxBufferedBytes)
        // The session thread's replies go straight to the socket through a descriptor of its own
        // (without one, through NIO as the loop's do). It is made only while the spare descriptor
        // is held, so it never takes the slot a refusal of waiting connections frees
        // (AcceptFailures.swift).
        let descriptors = server.descriptors
        let socket = try? context.pipeline.syncOperations.withUnsafeTransportIfAvailable(of: NIOBSDSocket.Handle.self) { fd in
            descriptors.whileSpareHeld { SocketWriter(duplicating: fd) }
        }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let output = ReplyWriter(channel: context.channel, socket: socket ?? nil, gate: gate) { bound.value.resumeIfDrained() }
        let link = ConnectionLink(
            id: id, peer: credentials, isAdmin: server.configuration.isAdmin(uid: credentials.uid, daemonUID: daemonUID),
            output: output, worker: worker, eventLoop: context.eventLoop, handler: bound)
        self.link = link
        server.register(link)
        server.sessionStarted()
        let server = self.server
        worker.start(name: "keel.conn.\(id)") {
            Session(server: server, link: link).run()
            server.sessionEnded()
            link.release(from: server)
        }
        logger.debug("connection accepted", metadata: ["peer.uid": "\(credentials.uid)", "peer.pid": "\(credentials.pid)"])
        resumeIfDrained()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let link {
            link.worker.close()
            link.output.closed()
            link.gate.close()
            server.unregister(link.id)
            link.release(from: server)
            // The link holds this handler (the way back to the loop): let go of it, or neither
            // would ever be freed.
            self.link = nil
            logger.debug("connection closed")
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    // MARK: Writing

    /// The session thread wrote answers while this loop waited for them (ConnectionLink.deliver).
    func answered() {
        resumeIfDrained()
        closeIfFinished()
        updateWaiting()
    }

    /// Replies answered on the loop, in order behind everything handed in before. When the
    /// socket took them at once there is no NIO write whose completion would resume a paused
    /// connection, so a pause looks again on the next loop turn.
    func write(_ text: String) {
        guard let link else { return }
        _ = link.output.write(text, finals: 0)
        if readWanted || !backlog.isEmpty, let context {
            context.eventLoop.execute { [handler = NIOLoopBound(self, eventLoop: context.eventLoop)] in
                handler.value.resumeIfDrained()
            }
        }
    }

    /// Tells the ReplyWriter whether this loop waits for the thread's answers (reading paused at
    /// a limit, a backlog left, a close waiting for the last reply): only then does the thread
    /// wake it. When the wait begins, the loop looks once more (an answer may have come just
    /// before the writer knew).
    func updateWaiting() {
        let waiting = !closeRequested && (readWanted || !backlog.isEmpty || closing || inputEnded)
        guard waiting != waitingForAnswers, let link, let context else { return }
        waitingForAnswers = waiting
        guard link.output.setLoopWaiting(waiting) else { return }
        context.eventLoop.execute { [handler = NIOLoopBound(self, eventLoop: context.eventLoop)] in
            handler.value.resumeIfDrained()
            handler.value.closeIfFinished()
        }
    }

    /// Closes once everything written so far has reached the socket.
    func closeAfterPendingWrites() {
        guard let context, !closeRequested else { return }
        closeRequested = true
        closing = true
        updateWaiting()
        if let link {
            link.output.closeWhenWritten()
            return
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    /// Sends the refusal line (tag `*`), shuts the output, and closes when the peer does (or
    /// after 2 s).
    private func refuse(_ error: KeelError, context: ChannelHandlerContext) {
        refused = true
        closing = true
        let line = Reply.error(tag: "*", error).line()
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(string: line))).whenComplete { _ in
            channel.close(mode: .output, promise: nil)
        }
        channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
        context.read()
    }

    func closeNow() {
        closing = true
        context?.close(promise: nil)
    }
}
