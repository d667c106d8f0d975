// One connection to keeld over its Unix socket (spec/protocol.md), shared by any number of
// tasks: calls made at once are pipelined on the socket and matched to their replies by tag;
// rows stream with back-pressure; every call has a deadline; a lost connection fails every call
// at once. Docs/ClientConnection.md is the long form.
//
//     let connection = try await KeelConnection.connect(socketPath: ".keel/keeld.sock", clientName: "app")
//     let employee = try await connection.request("GET", ["$id": "Employee/1"])
//     for try await row in connection.rows("FETCH", ["entity": "Employee"]) { … }
//
// Reconnection is never silent: contexts and their unsaved changes live on the connection and
// die with it, so after `DISCONNECTED` the application decides (`reconnect()`), knowing that
// what it had pending is gone.
//
// The pieces: ConnectionCore (calls by tag, outgoing bytes, deadlines; shared state under one
// lock), ClientHandler (the event loop's side: framing, routing, back-pressure), StreamBuffer
// and KeelStream (rows to a consumer), ConnectionCore+Events (subscriptions).

public import KeelModel
import KeelProtocol
import Logging
import NIOCore
import NIOPosix

public final class KeelConnection: Sendable {
    /// The socket this connection was made to.
    public let socketPath: String
    /// The name it gave in HELLO (the daemon's log shows it).
    public let clientName: String
    public let options: Options
    /// The daemon's HELLO reply.
    public let hello: ServerHello
    /// The model the daemon serves (its MODEL reply, loaded and checked against the HELLO hash).
    public let model: Model
    let core: ConnectionCore
    let channel: any Channel

    private init(socketPath: String, clientName: String, options: Options, hello: ServerHello, model: Model, core: ConnectionCore, channel: any Channel) {
        self.socketPath = socketPath
        self.clientName = clientName
        self.options = options
        self.hello = hello
        self.model = model
        self.core = core
        self.channel = channel
    }

    deinit {
        // Nobody can call it any more: release the socket (calls in flight hold the core, not
        // this object, and fail with DISCONNECTED).
        if core.beginClose(KeelError(.disconnected, "the connection was released")) { channel.close(promise: nil) }
    }

    // MARK: Connecting

    /// Connects to keeld at `socketPath`, says HELLO (protocol 1) and reads the MODEL. Throws
    /// `UNAVAILABLE` when nobody listens there (after trying for `options.waitFor`, if set),
    /// the daemon's ERR when it refuses (`PERMISSION` for a uid it does not admit,
    /// `BAD_REQUEST` for a protocol it does not speak).
    public static func connect(socketPath: String, clientName: String = "KeelClient", options: Options = Options()) async throws(KeelError)
        -> KeelConnection
    {
        let start = ContinuousClock.now
        while true {
            do {
                return try await attempt(socketPath: socketPath, clientName: clientName, options: options)
            } catch where error.code == .unavailable {
                guard let waitFor = options.waitFor, ContinuousClock.now - start < waitFor else { throw error }
                do {
                    try await Task.sleep(for: .milliseconds(50))
                } catch {
                    throw KeelError(.cancelled, "the task was cancelled while waiting for keeld at \(socketPath)")
                }
            }
        }
    }

    private static func attempt(socketPath: String, clientName: String, options: Options) async throws(KeelError) -> KeelConnection {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        var logger = options.logger
        logger[metadataKey: "conn.socket"] = "\(socketPath)"
        let core = ConnectionCore(eventLoop: loop, socketPath: socketPath, logger: logger)
        let maxReplyBytes = options.maxReplyBytes
        let bootstrap = ClientBootstrap(group: loop)
            // One read (at most 64 KiB) per readiness, so a paused stream holds back at most one.
            .channelOption(.maxMessagesPerRead, value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ClientHandler(core: core, maxReplyBytes: maxReplyBytes))
                }
            }
        // The socket is made here, not by NIO, so that the core can write to it from any thread
        // (SocketWriter); NIO reads it.
        let channel: any Channel
        let writer: SocketWriter?
        do {
            let socket = try SocketWriter.connect(unixSocketPath: socketPath)
            writer = SocketWriter(duplicating: socket)
            channel = try await bootstrap.withConnectedSocket(socket).get()
        } catch {
            throw KeelError(.unavailable, "cannot connect to keeld at \(socketPath): \(Self.connectFailure(error))", cause: error)
        }
        core.state.withLock {
            $0.channel = channel
            $0.wire.socket = writer
        }
        do throws(KeelError) {
            let timeout = TimeAmount(options.deadline)
            var helloArguments: JSON = ["protocol": .int(Int64(CommandTable.protocolVersions.max() ?? 1)), "client": .string(clientName)]
            if let micros = options.coalesceMicros, case .object(var members) = helloArguments {
                members["coalesceMicros"] = .int(Int64(micros))
                helloArguments = .object(members)
            }
            let helloReply = try await core.call("HELLO", helloArguments, timeout: timeout)
            let hello = try ServerHello(helloReply ?? .null)
            core.maxRequestBytes.store(hello.limits.maxRequestBytes, ordering: .relaxed)
            guard let modelJSON = try await core.call("MODEL", nil, timeout: timeout) else {
                throw KeelError(.disconnected, "the daemon's MODEL reply is empty")
            }
            let model = try ModelLoader.load(json: modelJSON)
            guard model.hash == hello.modelHash else {
                throw KeelError(
                    .modelMismatch, "the daemon's MODEL hashes to \(model.hash) here, but its HELLO says \(hello.modelHash)")
            }
            logger.debug("connected", metadata: ["server.version": "\(hello.version)", "model.hash": "\(hello.modelHash)"])
            return KeelConnection(
                socketPath: socketPath, clientName: clientName, options: options, hello: hello, model: model, core: core, channel: channel)
        } catch {
            core.fail(error)
            channel.close(promise: nil)
            throw error
        }
    }

    /// A new connection to the same daemon, with the same name and options (this one is closed
    /// first if it is not gone already). Nothing of this connection carries over: its contexts
    /// and their unsaved changes are gone, its streams and subscriptions have ended. Throws
    /// `MODEL_MISMATCH` when the daemon now serves another model (everything built on `model`
    /// would be wrong), and what `connect` throws.
    public func reconnect(waitFor: Duration? = nil) async throws(KeelError) -> KeelConnection {
        await close()
        var options = self.options
        if let waitFor { options.waitFor = waitFor }
        let fresh = try await KeelConnection.connect(socketPath: socketPath, clientName: clientName, options: options)
        guard fresh.hello.modelHash == hello.modelHash else {
            await fresh.close()
            throw KeelError(
                .modelMismatch,
                "keeld at \(socketPath) now serves model \(fresh.hello.modelName) (hash \(fresh.hello.modelHash)), not \(hello.modelName) (hash \(hello.modelHash))")
        }
        return fresh
    }

    // MARK: Calls

    /// Sends `command` (any command of the protocol) with `arguments` (a JSON object) and
    /// returns the OK payload (nil for a bare `OK`). The daemon's ERR is thrown as a `KeelError`
    /// with its code, message and details; the client's own failures are `TIMEOUT` (after
    /// `deadline`, default `options.deadline`, or `options.maintenanceDeadline` for admin
    /// commands), `CANCELLED`, `DISCONNECTED`, and `BAD_REQUEST`/`TOO_LARGE` for a request no
    /// line can carry (nothing is sent then). Use `rows` for FETCH and HISTORY.
    public func request(_ command: String, _ arguments: JSON? = nil, deadline: Duration? = nil) async throws(KeelError) -> JSON? {
        try await core.call(command, arguments, timeout: timeout(command, deadline))
    }

    /// Sends `command` and streams its ROW lines as they come; the stream ends at its OK or
    /// throws its ERR. A consumer that falls behind makes the connection stop reading (every
    /// reply behind this one waits too); dropping the stream early discards the rest. The
    /// deadline applies to each wait for the daemon, not to the consumer's pace.
    public func rows(_ command: String, _ arguments: JSON? = nil, deadline: Duration? = nil) -> KeelStream<JSON> {
        stream(command, arguments, deadline: deadline) { row in row }
    }

    func stream<Element: Sendable>(
        _ command: String, _ arguments: JSON?, deadline: Duration?, decode: @escaping @Sendable (JSON) throws(KeelError) -> Element
    ) -> KeelStream<Element> {
        core.stream(
            command, arguments, timeout: timeout(command, deadline), highWater: options.streamHighWater, lowWater: options.streamLowWater,
            decode: decode)
    }

    private func timeout(_ command: String, _ deadline: Duration?) -> TimeAmount {
        if let deadline { return TimeAmount(deadline) }
        return TimeAmount(Self.isAdmin(command) ? options.maintenanceDeadline : options.deadline)
    }

    /// The admin commands of the table, upper-cased.
    private static let adminCommands = Set(CommandTable.all.filter(\.isAdmin).map(\.name))
    /// Bit n is set when an admin command's name is n UTF-8 bytes long (names over 63 bytes set
    /// bit 63): most calls are told apart by their length alone, without hashing the name.
    static let adminNameLengths: UInt64 = adminCommands.reduce(0) { $0 | UInt64(1) << UInt64(min($1.utf8.count, 63)) }

    /// Whether `command` (any case) is an admin command; no allocation for an upper-case name,
    /// and no hashing for a name whose length no admin command has (`GET`, `FETCH`, …).
    static func isAdmin(_ command: String) -> Bool {
        // Upper-casing an ASCII name keeps its length, and only ASCII letters make a command name.
        guard adminNameLengths & (UInt64(1) << UInt64(min(command.utf8.count, 63))) != 0 else { return false }
        if adminCommands.contains(command) { return true }
        return command.utf8.contains { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) } && adminCommands.contains(command.uppercased())
    }

    // MARK: State

    /// The connection's event loop as a task executor: a task that prefers it
    /// (`withTaskExecutorPreference(connection.executor) { … }`) makes its calls without a
    /// thread hop each way (EventLoopExecutor.swift). It must not block.
    public var executor: any TaskExecutor { core.executor }

    /// Ends the connection: later calls fail with `DISCONNECTED` at once; calls already made
    /// get their replies first (QUIT goes after them, and the daemon answers in order). Open
    /// contexts close with it, their unsaved changes dropped. Calling it again does nothing.
    public func close() async {
        guard core.beginClose(KeelError(.disconnected, "the connection was closed by the application (close())")) else { return }
        _ = try? await core.call("QUIT", nil, timeout: TimeAmount(min(options.deadline, .seconds(5))), whileClosing: true)
        core.fail(KeelError(.disconnected, "the connection was closed by the application (close())"))
        try? await channel.close()
    }

    /// Why the connection cannot be used any more (`DISCONNECTED`, or what refused it); nil
    /// while it can.
    public var closeReason: KeelError? { core.failure }

    /// Whether calls can still be made.
    public var isConnected: Bool { core.failure == nil }

    /// What the connection has done and held so far.
    public var statistics: Statistics {
        let counters = core.counters
        return Statistics(
            callsInFlight: core.callsInFlight, peakStreamRows: counters.peakStreamRows.load(ordering: .relaxed),
            peakStreamBytes: counters.peakStreamBytes.load(ordering: .relaxed),
            peakUnreadBytes: counters.peakUnreadBytes.load(ordering: .relaxed), pauses: counters.pauses.load(ordering: .relaxed),
            discardedLines: counters.discardedLines.load(ordering: .relaxed),
            writesLeftToEventLoop: counters.writesLeftToEventLoop.load(ordering: .relaxed),
            peakRepliesPerRead: counters.peakRepliesPerRead.load(ordering: .relaxed),
            repliesTakenInPlace: counters.repliesTakenInPlace.load(ordering: .relaxed))
    }
}

extension KeelConnection {
    /// Why a connect failed, in words a user acts on: the system's reason, and for the two
    /// usual cases what it means (no socket file: keeld is not running there; refused: a socket
    /// file nobody listens on, left by a keeld that stopped).
    static func connectFailure(_ error: any Error) -> String {
        switch (error as? IOError)?.errnoCode {
        case ENOENT?: "\(FileSystemSupport.errnoText(ENOENT)) (no socket there: is keeld running, with this socketPath?)"
        case ECONNREFUSED?: "\(FileSystemSupport.errnoText(ECONNREFUSED)) (nothing listens on the socket: keeld has stopped)"
        default: systemReason(error)
        }
    }

    /// A socket error in the system's words and its number ("Connection reset by peer (errno
    /// 104)"), not NIO's text, which names the system call and repeats the reason; any other
    /// error as it describes itself.
    static func systemReason(_ error: any Error) -> String {
        guard let error = error as? IOError else { return "\(error)" }
        return "\(FileSystemSupport.errnoText(error.errnoCode)) (errno \(error.errnoCode))"
    }
}
