// When a connection's finished replies leave before the rest of their burst (HELLO's
// `coalesceMicros`; Docs/Protocol.md, "Order, pipelining and flushing"; Docs/Decisions/0011).
//
// By default the replies of one read burst are written together once the burst is done: one
// send for many requests. A client that runs many independent calls on one connection (the Swift
// client's tasks) gains from its first replies leaving early instead: their callers go on and
// send their next requests while the daemon still runs the rest of the burst, so the two sides
// overlap rather than take turns. A connection asks for that with HELLO's `coalesceMicros`: a
// finished reply then waits at most that long for company. The wait is checked after each
// request; it is not a timer (a reply never waits for a request that has not come).
//
// Early replies cost sends (one per part instead of one per burst). They pay when the client's
// side would otherwise wait for the daemon: a connection that has the daemon to itself (the job
// before its burst was its own, and no other connection's has begun since) and a core idle to run
// the client. With several connections at work their bursts already interleave — one's requests
// run while another's client reads its replies — and early parts would only take CPU from them,
// so a reply then waits for its burst's end as by default (measured: Docs/Performance.md,
// "Client", round 10).

import Dispatch
import Synchronization

/// One connection's coalescing state, confined to its session thread.
struct ReplyCoalescing {
    /// No limit: replies wait for the end of their burst (the default).
    static let unbounded = UInt64.max
    /// The largest `coalesceMicros` HELLO accepts (one second).
    static let maximumMicros: Int64 = 1_000_000

    /// When the oldest unsent final reply was found waiting (uptime nanoseconds), nil when none.
    private var oldestSince: UInt64?

    /// After a request has run: whether the gathered replies should be written now, because the
    /// oldest of `pendingFinals` final lines has waited `limit` nanoseconds or more and the
    /// daemon has room for it (`mayWriteEarly`, asked only then). `now` is read only when a limit
    /// applies.
    mutating func due(pendingFinals: Int, limit: UInt64, now: () -> UInt64, mayWriteEarly: () -> Bool) -> Bool {
        guard pendingFinals > 0, limit != Self.unbounded else { return false }
        let time = now()
        guard let since = oldestSince else {
            // The first final line of this part finished with the request just run.
            oldestSince = time
            return limit == 0 && mayWriteEarly()
        }
        return time &- since >= limit && mayWriteEarly()
    }

    /// The gathered replies were handed over: the next part starts with its first final line.
    mutating func flushed() {
        oldestSince = nil
    }

    /// The session thread's clock (monotonic, nanoseconds).
    static func uptimeNanoseconds() -> UInt64 {
        DispatchTime.now().uptimeNanoseconds
    }
}

/// The daemon's sessions at work: how many run requests (against the cores), whose job began last,
/// and what they have written (STATS: `replies`, `replyParts`).
final class SessionActivity: Sendable {
    private let working = Atomic<Int>(0)
    /// The connection whose session began the latest job (0: none yet; connection IDs start at 1).
    private let lastJob = Atomic<Int>(0)
    let cores: Int
    /// Final reply lines handed to the connections' writers, and the parts they went in (a burst's
    /// replies in one part by default; more with HELLO's `coalesceMicros`, or between big
    /// replies). Output without a final line (a FETCH's chunk of rows, events) is not a part.
    private let replies = Atomic<Int>(0)
    private let parts = Atomic<Int>(0)

    init(cores: Int) {
        self.cores = max(1, cores)
    }

    /// `connection`'s session starts running a burst of requests. Returns whether the job before
    /// it, of any session, was this connection's too.
    func began(connection: Int) -> Bool {
        working.wrappingAdd(1, ordering: .relaxed)
        return lastJob.exchange(connection, ordering: .relaxed) == connection
    }
    /// A session is done with its burst.
    func ended() { working.wrappingSubtract(1, ordering: .relaxed) }

    /// Fewer sessions run requests than there are cores.
    var hasIdleCore: Bool { working.load(ordering: .relaxed) < cores }

    /// Whether `connection`'s session may write replies before its burst is done: its job is the
    /// latest begun (no other connection's since), and a core is idle. The caller also checks that
    /// the job before was its own (`began`).
    func mayWriteEarly(connection: Int) -> Bool {
        lastJob.load(ordering: .relaxed) == connection && hasIdleCore
    }

    /// A session handed `finals` final lines to its writer in one part (none: not counted).
    func handedOver(finals: Int) {
        guard finals > 0 else { return }
        replies.wrappingAdd(finals, ordering: .relaxed)
        parts.wrappingAdd(1, ordering: .relaxed)
    }

    /// STATS' figures: `replies` (final lines written by sessions) and `replyParts`.
    var written: (replies: Int, parts: Int) { (replies.load(ordering: .relaxed), parts.load(ordering: .relaxed)) }
}
