// One connection's state and the loop that runs its requests, on its own thread
// (SessionWorker). Everything here is confined to that thread: the contexts, the subscription,
// the output being gathered. Requests run in order; each gets exactly one final line; the
// lines of one burst go out in one write, from this thread (`flush` when no job waits behind, or
// when a FETCH has gathered a chunk, or — for a connection that asked with HELLO's
// `coalesceMicros` — when a finished reply has waited that long: ReplyCoalescing.swift).
//
// Commands: Session+Dispatch.swift (the handler of each command of the table),
// ConnectionCommands.swift (HELLO, PING, QUIT, MODEL).

import Collections
import KeelModel
import KeelProtocol
import Logging

final class Session {
    let server: ServerContext
    let link: ConnectionLink
    var logger: Logger
    /// Reply lines gathered and not yet handed to the connection's writer, as UTF-8 (objects are
    /// written straight into it: ManagedObject+Wire.swift).
    private var pending: [UInt8] = []
    /// Final lines among `pending`.
    private var pendingFinals = 0
    /// How long the final lines among `pending` have waited (HELLO's `coalesceMicros`).
    private var coalescing = ReplyCoalescing()
    /// The job under way began right after another job of this connection (SessionActivity).
    private var servedAlone = false
    /// After the shutdown barrier: every request is answered BUSY.
    private var refusing = false
    /// QUIT answered: the connection closes once its OK is written.
    private var quitting = false
    /// The request running is the last of its job (its reply may go out at once: no line of the
    /// job follows it).
    private var runningLastOfJob = false
    /// SUBSCRIBE's subscription, if any.
    var subscription: Subscription?
    /// The connection's contexts by name, in the order opened; `main` first, always there.
    /// Confined to this thread, as contexts must be (Docs/Contexts.md, "The isolation rule").
    var contexts: OrderedDictionary<String, ObjectContext> = [:]

    /// Output gathered beyond this is handed over at once (a FETCH streams in chunks this big).
    static let chunkBytes = 64 << 10

    init(server: ServerContext, link: ConnectionLink) {
        self.server = server
        self.link = link
        var logger = server.logger
        logger[metadataKey: "conn.id"] = "\(link.id)"
        self.logger = logger
        let main = ObjectContext(store: server.store)
        main.pendingObjectLimit = server.limits.pendingObjectsPerContext
        contexts[Self.mainContext] = main
    }

    /// The thread's body: jobs until the connection closes (or QUIT).
    func run() {
        while !quitting, let job = link.worker.next() {
            handle(job)
        }
        teardown()
    }

    private func handle(_ job: SessionJob) {
        switch job {
        case .items(let items):
            servedAlone = server.sessionActivity.began(connection: link.id)
            defer { server.sessionActivity.ended() }
            for (index, item) in items.enumerated() {
                guard !quitting, !link.worker.isClosed else { break }
                runningLastOfJob = index == items.count - 1
                process(item)
                let early = coalescing.due(
                    pendingFinals: pendingFinals, limit: link.coalesceNanoseconds, now: ReplyCoalescing.uptimeNanoseconds,
                    mayWriteEarly: { servedAlone && server.sessionActivity.mayWriteEarly(connection: link.id) })
                // Replies handed over before the job's end (early, or a burst of big ones) to a client
                // that does not read: wait here, do not buffer them (at most maxBufferedBytes and one part).
                if early || pending.count >= Self.chunkBytes {
                    flush()
                    guard link.gate.waitForRoom() else { break }
                }
            }
        case .drainEvents:
            subscription?.drainStarted()
        case .barrier(let reached):
            refusing = true
            flush()
            reached()
            return
        }
        if subscription != nil, !quitting { drainEvents() }
        if quitting || !link.worker.hasQueuedJobs { flush() }
    }

    private func process(_ item: SessionItem) {
        switch item {
        case .reply(let reply):
            append(reply)
        case .request(let request, let spec):
            guard !refusing else {
                append(.error(tag: request.tag, KeelError(.busy, "shutting down")))
                return
            }
            do throws(KeelError) {
                switch try execute(request, spec) {
                case .json(let payload): append(.ok(tag: request.tag, payload))
                case .object(let object): appendLine(tag: request.tag, kind: " OK ", final: true) { object.write(to: &$0, in: server.model) }
                case .insertedID(let id):
                    appendLine(tag: request.tag, kind: " OK ", final: true) { out in
                        out.append(contentsOf: #"{"$id":"#.utf8)
                        out.append(json: .string(id.text(in: server.model)))
                        out.append(UInt8(ascii: "}"))
                    }
                case .answered: break
                }
                if spec.name == "QUIT" { quitting = true }
            } catch {
                // A fault of keeld or of its files is the operator's to see, with the whole path
                // (the client's line leaves the folders out).
                if error.code == .internal || error.code == .corrupt || error.code == .io {
                    logger.error("request failed", metadata: ["request.command": "\(spec.name)", "error": "\(error)"])
                }
                append(.error(tag: request.tag, server.clientFacing(error)))
            }
        }
    }

    /// Runs one request; returns what its OK line carries.
    private func execute(_ request: Request, _ spec: CommandSpec) throws(KeelError) -> Answer {
        if spec.group == .connection {
            return .json(try ConnectionCommands.answer(request, server: server, connection: link.id, link: link))
        }
        guard let handler = Self.handlers[spec.name] else {
            throw KeelError(.internal, "\(spec.name) has no handler in this daemon")
        }
        guard Self.renewingReads.contains(spec.name) else { return try handler(self, request) }
        // A cut-off snapshot is renewed once when nothing is pending (ObjectContext+Renewal).
        return try context(for: request).renewingSnapshot { () throws(KeelError) -> Answer in try handler(self, request) }
    }

    /// Commands that only read their context: retried once on a new snapshot when the old one
    /// was cut off and the context has nothing pending.
    private static let renewingReads: Set<String> = ["FETCH", "COUNT", "EXPLAIN", "GET"]

    /// A SAVE's OK line, the moment the save is durable (Session.save): called from inside the
    /// save, on this thread or on the thread of the save group's leader while this one waits for
    /// it — which is why it touches only the output, never a context. When the SAVE ends its job
    /// and no job waits, the output goes out now (one send with the job's earlier replies) and the
    /// answer is true: nothing but the client's next request needs this thread (what is left of
    /// the job — the context taking in the save, events of a subscription — is done when it
    /// wakes; events and shutdown wake it as jobs). Otherwise the line waits for the job's end.
    func answerDurableSave(tag: String, _ result: SaveResult) -> Bool {
        appendLine(tag: tag, kind: " OK ", final: true) { ContextTerms.writeSaveReply(result, to: &$0) }
        guard runningLastOfJob, !link.worker.hasQueuedJobs else { return false }
        flush()
        return true
    }

    /// Adds one line to the output (a ROW, an EVENT, or a final line).
    func append(_ reply: Reply) {
        reply.write(to: &pending)
        if reply.isFinal { pendingFinals += 1 }
    }

    /// Adds one line whose JSON `body` writes straight into the output: `TAG`, then `kind`
    /// (" OK ", " ROW ") and the body, then LF.
    func appendLine(tag: String, kind: String, final: Bool, _ body: (inout [UInt8]) -> Void) {
        pending.append(contentsOf: tag.utf8)
        pending.append(contentsOf: kind.utf8)
        body(&pending)
        pending.append(UInt8(ascii: "\n"))
        if final { pendingFinals += 1 }
    }

    /// Bytes gathered and not yet handed over.
    var pendingBytes: Int { pending.count }

    /// Hands the gathered lines to the connection's writer, which sends them from this thread
    /// (one send) unless earlier output is still being written (ReplyWriter.swift).
    func flush() {
        guard !pending.isEmpty || pendingFinals > 0 else { return }
        link.deliver(pending, finals: pendingFinals, close: quitting)
        server.sessionActivity.handedOver(finals: pendingFinals)
        // Keep a usual chunk's room for the next replies, not a big reply's (a GET of a large
        // binary, a long HISTORY): a connection must not hold its largest reply's memory.
        if pending.capacity > 2 * Self.chunkBytes {
            pending = []
        } else {
            pending.removeAll(keepingCapacity: true)
        }
        pendingFinals = 0
        coalescing.flushed()
    }

    /// Streams one ROW of a reply, waiting while the client is not reading. Throws when the
    /// connection is gone (the request is abandoned, and its reply with it).
    func stream(_ row: Reply) throws(KeelError) {
        append(row)
        try streamed()
    }

    /// Streams one ROW whose JSON `body` writes straight into the output (appendLine), waiting
    /// as `stream` does.
    func streamRow(tag: String, _ body: (inout [UInt8]) -> Void) throws(KeelError) {
        appendLine(tag: tag, kind: " ROW ", final: false, body)
        try streamed()
    }

    /// After a streamed line: a chunk gathered is handed over, and the session waits while the
    /// client is not reading.
    private func streamed() throws(KeelError) {
        guard pending.count >= Self.chunkBytes else { return }
        flush()
        guard link.gate.waitForRoom() else { throw KeelError(.busy, "the connection closed during the reply") }
    }

    /// The connection ended: contexts and subscription are dropped (nothing pending is saved).
    private func teardown() {
        link.worker.close()
        if subscription != nil { server.events.unsubscribe(connection: link.id) }
        // Pending changes are dropped with their contexts: nothing unsaved reaches the store.
        contexts.removeAll()
        logger.debug("session ends")
    }
}
