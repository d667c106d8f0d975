// The request and connection limits (spec/protocol.md, "Framing" and "Errors": TOO_LARGE, LIMIT,
// BUSY, back-pressure). HELLO advertises them; `config/keeld.json` documents each with its default.

public import KeelModel

public struct ServerLimits: Sendable, Equatable {
    /// A request line longer than this (without its LF) is answered `TOO_LARGE` and skipped.
    public var maxRequestBytes: Int = 16 << 20
    /// Contexts a connection may have open, `main` included (`LIMIT` beyond).
    public var contextsPerConnection: Int = 64
    /// Pending (unsaved) objects one context may hold (`LIMIT` beyond).
    public var pendingObjectsPerContext: Int = 100_000
    /// Requests of one connection read but not yet answered; beyond it the daemon stops reading
    /// that connection until replies go out (back-pressure, not an error).
    public var inFlightRequests: Int = 1024
    /// Events queued for one subscriber; beyond it the queue is dropped and the overflow event
    /// is sent instead.
    public var subscriberQueueLength: Int = 1024
    /// Reply bytes the daemon holds for a connection that does not read them; beyond it the
    /// daemon stops reading that connection and pauses its FETCH streams.
    public var maxBufferedBytes: Int = 4 << 20
    /// Connections served at once (each has a thread of its own); one more is answered
    /// `* ERR BUSY` and closed, without a thread. A connection counts from its admission until
    /// it is closed and its thread has ended.
    public var maxConnections: Int = 1024

    public init() {}

    /// The limits as HELLO reports them.
    public var json: JSON {
        [
            "maxRequestBytes": .int(Int64(maxRequestBytes)),
            "contextsPerConnection": .int(Int64(contextsPerConnection)),
            "pendingObjectsPerContext": .int(Int64(pendingObjectsPerContext)),
            "inFlightRequests": .int(Int64(inFlightRequests)),
            "subscriberQueueLength": .int(Int64(subscriberQueueLength)),
            "maxBufferedBytes": .int(Int64(maxBufferedBytes)),
            "maxConnections": .int(Int64(maxConnections)),
        ]
    }

    /// The keys of the `limits` object of the configuration file, with a setter for each.
    /// (Key paths to stored properties of a Sendable struct are immutable values.)
    nonisolated(unsafe) static let keys: [(String, WritableKeyPath<ServerLimits, Int>)] = [
        ("maxRequestBytes", \.maxRequestBytes),
        ("contextsPerConnection", \.contextsPerConnection),
        ("pendingObjectsPerContext", \.pendingObjectsPerContext),
        ("inFlightRequests", \.inFlightRequests),
        ("subscriberQueueLength", \.subscriberQueueLength),
        ("maxBufferedBytes", \.maxBufferedBytes),
        ("maxConnections", \.maxConnections),
    ]
}
