// HELLO's `coalesceMicros`: the rule that lets a finished reply leave before the rest of its
// burst (ReplyCoalescing), and the same against a real keeld — STATS' `replies` and
// `replyParts` count what the sessions handed to their writers.

import Foundation
import KeelModel
import KeelTestSupport
import Testing

@testable import KeelServer

@Suite("Reply coalescing")
struct ReplyCoalescingTests {
    /// Runs `due` at the uptime `at` (nanoseconds), the daemon with room for early replies or not.
    private static func due(_ rule: inout ReplyCoalescing, finals: Int, limit: UInt64, at: UInt64, room: Bool = true) -> Bool {
        rule.due(pendingFinals: finals, limit: limit, now: { at }, mayWriteEarly: { room })
    }

    @Test("a reply leaves once the oldest waiting one has waited the limit, and the wait starts again after a flush")
    func waitsTheLimit() {
        var rule = ReplyCoalescing()
        let limit: UInt64 = 20_000
        // Nothing waits: never due, whatever the time.
        #expect(!Self.due(&rule, finals: 0, limit: limit, at: 1_000))
        // The first final line finished at 5,000: the wait starts there.
        #expect(!Self.due(&rule, finals: 1, limit: limit, at: 5_000))
        #expect(!Self.due(&rule, finals: 2, limit: limit, at: 24_999))
        #expect(Self.due(&rule, finals: 3, limit: limit, at: 25_000))
        // Not handed over (say, the writer was not asked): still due later.
        #expect(Self.due(&rule, finals: 3, limit: limit, at: 26_000))
        rule.flushed()
        // The next part's wait starts with its own first final line, not with the flush.
        #expect(!Self.due(&rule, finals: 0, limit: limit, at: 30_000))
        #expect(!Self.due(&rule, finals: 1, limit: limit, at: 40_000))
        #expect(!Self.due(&rule, finals: 1, limit: limit, at: 59_999))
        #expect(Self.due(&rule, finals: 2, limit: limit, at: 60_000))
    }

    @Test("limit 0 writes each reply after its request; no limit never writes early; no room never writes early")
    func limitsAndCores() {
        var zero = ReplyCoalescing()
        #expect(Self.due(&zero, finals: 1, limit: 0, at: 7))
        zero.flushed()
        #expect(Self.due(&zero, finals: 1, limit: 0, at: 8))

        var unbounded = ReplyCoalescing()
        for at in stride(from: UInt64(0), through: 10_000_000_000, by: 1_000_000_000) {
            #expect(!Self.due(&unbounded, finals: 5, limit: ReplyCoalescing.unbounded, at: at))
        }

        var busy = ReplyCoalescing()
        #expect(!Self.due(&busy, finals: 1, limit: 0, at: 1, room: false))
        #expect(!Self.due(&busy, finals: 2, limit: 0, at: 1_000_000, room: false))
        // Room comes: the waiting replies go.
        #expect(Self.due(&busy, finals: 2, limit: 0, at: 1_000_001))
    }

    @Test("early replies only for the connection whose job began last, after a job of its own, with a core idle")
    func sessionActivity() {
        let activity = SessionActivity(cores: 2)
        #expect(activity.hasIdleCore)
        // Connection 1's first job: the one before was nobody's.
        #expect(!activity.began(connection: 1))
        #expect(activity.mayWriteEarly(connection: 1))
        activity.ended()
        // Its next job follows its own: it has the daemon to itself.
        #expect(activity.began(connection: 1))
        #expect(activity.mayWriteEarly(connection: 1))
        // Connection 2 begins a job meanwhile: both cores run sessions, and 1's is not the latest.
        #expect(!activity.began(connection: 2))
        #expect(!activity.hasIdleCore)
        #expect(!activity.mayWriteEarly(connection: 1))
        #expect(!activity.mayWriteEarly(connection: 2))
        activity.ended()
        // Connection 2's job is the latest begun (and 1 is done): 2 has room, 1 does not.
        #expect(activity.mayWriteEarly(connection: 2))
        #expect(!activity.mayWriteEarly(connection: 1))
        activity.ended()
        // Zero cores reported is taken as one: a session at work leaves no core idle.
        let one = SessionActivity(cores: 0)
        _ = one.began(connection: 1)
        #expect(!one.hasIdleCore)
        #expect(!one.mayWriteEarly(connection: 1))
        activity.handedOver(finals: 3)
        // Output without a final line (a chunk of rows, events) is not a part.
        activity.handedOver(finals: 0)
        activity.handedOver(finals: 1)
        #expect(activity.written == (replies: 4, parts: 2))
    }

    @Test("HELLO's coalesceMicros is echoed; out of range or not a whole number is BAD_REQUEST and changes nothing")
    func helloArgument() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let client = try keeld.connect()
        let plain = try #require(try client.request(#"h0 HELLO {"protocol":1}"#).payload)
        #expect(plain["coalesceMicros"] == nil)
        for value in ["0", "20", "1000000", "20.0"] {
            let reply = try client.request(#"h HELLO {"protocol":1,"coalesceMicros":\#(value)}"#)
            #expect(reply.payload?["coalesceMicros"]?.intValue == Int64(Double(value) ?? -1), "\(value)")
        }
        for value in ["-1", "1000001", "2.5", #""20""#, "true", "[20]"] {
            let reply = try client.request(#"h HELLO {"protocol":1,"coalesceMicros":\#(value)}"#)
            #expect(reply.errorCode == "BAD_REQUEST", "\(value): \(reply.finalLine)")
            #expect(reply.errorMessage?.contains("coalesceMicros") == true, "\(value)")
        }
        // A protocol the daemon does not speak is refused first, whatever coalesceMicros says.
        let both = try client.request(#"h HELLO {"protocol":2,"coalesceMicros":-1}"#)
        #expect(both.errorMessage?.contains("protocol 2") == true)
        #expect(try client.request("p PING").isOK)
    }

    /// STATS' `replies` and `replyParts`.
    private static func written(_ client: LineClient, tag: String) throws -> (replies: Int64, parts: Int64) {
        let stats = try #require(try client.request("\(tag) STATS").payload)
        return (try #require(stats["replies"]?.intValue), try #require(stats["replyParts"]?.intValue))
    }

    @Test("with coalesceMicros 0 each reply of a burst is handed over on its own; without it (and after a HELLO without it) the burst's replies go together")
    func burstsInParts() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let client = try keeld.connect()
        let burst = (0..<8).map { "c\($0) COUNT {\"entity\":\"Company\"}\n" }.joined()
        /// Sends the burst, reads its replies and returns the final lines written meanwhile and the
        /// parts they went in (the STATS reply taken first is among them).
        func writtenForBurst() throws -> (replies: Int64, parts: Int64) {
            let before = try Self.written(client, tag: "s1")
            try client.send(burst)
            for i in 0..<8 { #expect(try client.response(tag: "c\(i)").payload?["count"] == 0) }
            let after = try Self.written(client, tag: "s2")
            return (after.replies - before.replies, after.parts - before.parts)
        }

        // The daemon's default: one part for the burst (two if the event loop happened to read it
        // in two pieces), plus the first STATS reply's own.
        let together = try writtenForBurst()
        #expect(together.replies == 9)
        #expect(together.parts <= 3, "\(together.parts) parts for one burst")

        // coalesceMicros 0 on a daemon with a core to spare: one part per reply.
        #expect(try client.request(#"h HELLO {"protocol":1,"coalesceMicros":0}"#).payload?["coalesceMicros"] == 0)
        let alone = try writtenForBurst()
        #expect(alone.replies == 9)
        if ProcessInfo.processInfo.activeProcessorCount > 1 {
            #expect(alone.parts == 9)
        }

        // A HELLO without the key sets the default again.
        #expect(try client.request(#"h2 HELLO {"protocol":1}"#).payload?["coalesceMicros"] == nil)
        let again = try writtenForBurst()
        #expect(again.replies == 9)
        #expect(again.parts <= 3, "\(again.parts) parts for one burst after a HELLO without coalesceMicros")
    }
}
