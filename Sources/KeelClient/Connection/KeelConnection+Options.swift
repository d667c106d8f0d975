// What a connection is told when it is made (`Options`), what the daemon says about itself at
// HELLO (`ServerHello`), and what the connection measures about itself (`Statistics`).

public import KeelModel
public import Logging

extension KeelConnection {
    /// How a connection behaves. Every field has a default; change what you need.
    public struct Options: Sendable {
        /// How long a call waits for its reply when it names no deadline of its own.
        public var deadline: Duration = .seconds(30)
        /// The default deadline of the admin commands (CHECKPOINT, COMPACT, VERIFY, BACKUP),
        /// which rewrite or read a whole store and take as long as the store is large.
        public var maintenanceDeadline: Duration = .seconds(600)
        /// While the daemon is not there yet (no socket, nobody listening), keep trying to connect
        /// for this long (a daemon that is starting); nil: fail at once with `UNAVAILABLE`.
        public var waitFor: Duration? = nil
        /// Rows a stream holds for a consumer that has not taken them yet; when one stream holds
        /// this many, the connection stops reading the socket (the daemon then pauses too).
        public var streamHighWater: Int = 512
        /// Reading resumes when the paused stream's consumer has taken it down to this many.
        public var streamLowWater: Int = 128
        /// Change events one subscription holds for a consumer that does not take them; beyond it
        /// they are dropped and the consumer gets one event with `overflow` set instead (as the
        /// daemon does for its own queue).
        public var eventBufferLength: Int = 1024
        /// How long, at most, a finished reply waits in the daemon for the rest of its burst
        /// before it is written (HELLO's `coalesceMicros`, 0 … 1,000,000 µs; Docs/Protocol.md,
        /// "Order, pipelining and flushing"). With many tasks calling on one connection, their
        /// first replies then reach them — and their next requests the daemon — while the daemon
        /// still runs the rest of the burst, so the two sides overlap instead of taking turns. The
        /// daemon writes early only while the connection has it to itself (no other connection's
        /// requests running or begun meanwhile) and a core is idle. nil: the daemon's default,
        /// a burst's replies written together when it is done (fewest sends; for a connection
        /// that sends a batch and reads it back before anything else).
        public var coalesceMicros: Int? = 20
        /// The longest reply line accepted (a longer one fails its call with `TOO_LARGE`; the
        /// connection stays usable).
        public var maxReplyBytes: Int = 256 << 20
        /// Where the connection logs (dotted metadata keys: `conn.socket`, `call.tag`); silent by
        /// default.
        public var logger: Logger = Logger(label: "keel.client", factory: { _ in SwiftLogNoOpLogHandler() })

        public init() {}
    }

    /// The daemon's HELLO reply: who it is, the model it serves and its limits.
    public struct ServerHello: Sendable {
        /// `keeld`.
        public let server: String
        /// The daemon's version.
        public let version: String
        /// The protocol version both sides speak.
        public let protocolVersion: Int
        /// The model's name.
        public let modelName: String
        /// The model's hash (spec/model.md): equal hashes, same model.
        public let modelHash: String
        /// The daemon's per-connection limits.
        public let limits: Limits
        /// The `coalesceMicros` the daemon took from this connection's HELLO; nil when it was not
        /// asked for (the daemon's default: a burst's replies leave together).
        public let coalesceMicros: Int?
        /// The whole reply, for keys this client does not know.
        public let json: JSON

        /// The limits HELLO reports (config/keeld.json explains each); a key the daemon did not
        /// send reads as the protocol's default.
        public struct Limits: Sendable, Equatable {
            public let maxRequestBytes: Int
            public let contextsPerConnection: Int
            public let pendingObjectsPerContext: Int
            public let inFlightRequests: Int
            public let subscriberQueueLength: Int
            public let maxBufferedBytes: Int
            /// Connections the daemon serves at once (one more is answered `* ERR BUSY`).
            public let maxConnections: Int
        }

        init(_ json: JSON) throws(KeelError) {
            guard json.objectValue != nil, let hash = json["modelHash"]?.stringValue else {
                throw KeelError(.disconnected, "the daemon's HELLO reply is not what protocol 1 describes: \(json.serialized())")
            }
            let limits = json["limits"] ?? [:]
            func limit(_ key: String, _ fallback: Int) -> Int { limits[key]?.intValue.map { Int(clamping: $0) } ?? fallback }
            self.server = json["server"]?.stringValue ?? ""
            self.version = json["version"]?.stringValue ?? ""
            self.protocolVersion = json["protocol"]?.intValue.map { Int(clamping: $0) } ?? 1
            self.modelName = json["model"]?.stringValue ?? ""
            self.modelHash = hash
            self.limits = Limits(
                maxRequestBytes: limit("maxRequestBytes", 16 << 20), contextsPerConnection: limit("contextsPerConnection", 64),
                pendingObjectsPerContext: limit("pendingObjectsPerContext", 100_000),
                inFlightRequests: limit("inFlightRequests", 1024), subscriberQueueLength: limit("subscriberQueueLength", 1024),
                maxBufferedBytes: limit("maxBufferedBytes", 4 << 20), maxConnections: limit("maxConnections", 1024))
            self.coalesceMicros = json["coalesceMicros"]?.intValue.map { Int(clamping: $0) }
            self.json = json
        }
    }

    /// What the connection has done and held, for tests and diagnostics.
    public struct Statistics: Sendable, Equatable {
        /// Calls sent whose final line has not come (expired and cancelled ones included until
        /// their late reply is discarded).
        public var callsInFlight: Int
        /// The most rows one stream has held for its consumer at once.
        public var peakStreamRows: Int
        /// The most bytes (of reply lines) one stream has held for its consumer at once.
        public var peakStreamBytes: Int
        /// The most bytes read from the socket and not yet cut into lines (while reading is
        /// paused, at most one read's worth).
        public var peakUnreadBytes: Int
        /// Times reading stopped because a stream's consumer fell behind.
        public var pauses: Int
        /// Reply lines dropped because their call had expired or been cancelled (ROW lines and
        /// final lines alike), or because no call had their tag.
        public var discardedLines: Int
        /// Writes of request lines that the socket did not take whole at once (it was full):
        /// the rest went out through the event loop when the socket could take it.
        public var writesLeftToEventLoop: Int
        /// The most waiting calls answered by one read of the socket, whose tasks were resumed
        /// together at the end of it (pipelined calls' replies arrive in bursts).
        public var peakRepliesPerRead: Int
        /// Final reply lines (OK or ERR) handed to their calls as slices of the read that brought
        /// them, without a copy: those that came whole within one read (a line split across
        /// reads is gathered, and copied).
        public var repliesTakenInPlace: Int
    }
}
