// How a burst of requests is written while a flush job follows the tasks one read resumed
// (ConnectionCore+Writing.swift: `resuming`, `queued`, `burstPart`): the policy run on the
// connection's state alone, without a socket.

import Testing

@testable import KeelClient

@Suite("KeelConnection: bursts of requests written in parts")
struct BurstPartTests {
    /// Which of `requests` new calls write the queued lines themselves, after a read resumed
    /// `resumed` tasks with `waiting` other calls still unanswered; a write empties `outgoing`
    /// as `flush` does (what it resets under the lock). nil: no flush job was asked for.
    static func writers(resumed: Int, waiting: Int = 0, requests: Int, paused: Bool = false, jobPending: Bool = false) -> (job: Bool, writers: [Int]) {
        var s = ConnectionCore.State()
        var tag: UInt64 = 1
        func register() {
            s.calls[tag] = PendingCall(kind: .discarded, deadline: nil, timeout: .zero, command: "GET")
            tag += 1
        }
        for _ in 0..<waiting { register() }
        s.readsPaused = paused
        s.flushJobPending = jobPending
        let job = ConnectionCore.resuming(resumed, &s)
        var writers: [Int] = []
        for request in 1...requests {
            register()
            if ConnectionCore.queued(&s) {
                writers.append(request)
                s.flushScheduled = false
                s.flushDeferred = false
                s.queuedCalls = 0
            }
        }
        return (job, writers)
    }

    @Test("a part is an even share of the calls in flight, never fewer than the minimum")
    func partSizes() {
        #expect(ConnectionCore.burstPart(inFlight: 16, parts: 2, minimum: 4) == 8)
        #expect(ConnectionCore.burstPart(inFlight: 17, parts: 2, minimum: 4) == 9)
        #expect(ConnectionCore.burstPart(inFlight: 64, parts: 2, minimum: 4) == 32)
        #expect(ConnectionCore.burstPart(inFlight: 16, parts: 4, minimum: 4) == 4)
        #expect(ConnectionCore.burstPart(inFlight: 6, parts: 2, minimum: 4) == 4)
        #expect(ConnectionCore.burstPart(inFlight: 2, parts: 2, minimum: 4) == 4)
        #expect(ConnectionCore.burstPart(inFlight: 16, parts: 1, minimum: 4) == 16)
        #expect(ConnectionCore.burstPart(inFlight: 16, parts: 0, minimum: 4) == 16)
    }

    @Test("16 tasks resumed together: the 8th request writes the first half, the 16th the second")
    func sixteenInTwoParts() {
        let split = Self.writers(resumed: 16, requests: 16)
        let part = ConnectionCore.burstPart(inFlight: 16)
        #expect(split.job)
        #expect(split.writers == Array(stride(from: part, through: 16, by: part)))
        #expect(ConnectionCore.burstParts < 2 || split.writers.first! < 16)
        // Half the burst answered while the other half is on the wire: the part stays the
        // share of all 16 calls in flight, not of the 8 resumed (parts do not shrink read by read).
        let half = Self.writers(resumed: 8, waiting: 8, requests: 8)
        #expect(half.job)
        #expect(half.writers == (part <= 8 ? Array(stride(from: part, through: 8, by: part)) : []))
    }

    @Test("few resumed tasks make one part, left to the flush job; one resumed task makes no job")
    func smallBursts() {
        let three = Self.writers(resumed: 3, requests: 3)
        #expect(three.job)
        #expect(three.writers == [])
        // One task resumed: no job; with another call on the wire its request waits for the
        // next read (deferred), and without one it writes at once.
        #expect(Self.writers(resumed: 1, waiting: 1, requests: 1) == (false, []))
        #expect(Self.writers(resumed: 1, requests: 1) == (false, [1]))
    }

    @Test("no job while reads are paused or while an earlier job is still queued")
    func noJob() {
        // Paused for a slow stream: every request writes at once.
        #expect(Self.writers(resumed: 16, requests: 3, paused: true) == (false, [1, 2, 3]))
        // An earlier job pending: the lines wait for it; no part is cut (its part is unknown).
        #expect(Self.writers(resumed: 16, requests: 16, jobPending: true) == (false, []))
    }
}
