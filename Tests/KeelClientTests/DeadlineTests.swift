// Deadlines and cancellation that never desynchronise the connection. A reply is made honestly
// late by queueing it behind a FETCH whose consumer has stopped: the connection stops reading
// the socket (back-pressure), so nothing behind the stalled stream can arrive until the
// consumer goes on — however fast the daemon is. No timing is asserted: a call behind the stall
// cannot be answered before its deadline, whatever the deadline.

import KeelClient
import KeelModel
import KeelTestSupport
import Testing

@Suite("KeelConnection: deadlines and cancellation")
struct DeadlineTests {
    /// A daemon with `companies` companies, a connection that pauses streams early, and a FETCH
    /// of them all with one row taken: the connection has stopped reading.
    final class Stall {
        let daemon: LiveDaemon
        let connection: KeelConnection
        /// The stalled stream's only reference: setting it to nil drops the stream.
        var rows: KeelStream<JSON>.AsyncIterator?

        init(companies: Int = 3000, options: KeelConnection.Options = LiveDaemon.options(highWater: 8, lowWater: 2)) async throws {
            daemon = try LiveDaemon()
            connection = try await daemon.connect(options)
            _ = try await insertCompanies(connection, count: companies, padding: 200)
            rows = connection.rows("FETCH", ["entity": "Company", "sort": [["key": "name"]]]).makeAsyncIterator()
            _ = try await rows?.next()
        }
    }

    @Test("a call whose reply is late throws TIMEOUT; its late reply and rows are discarded by tag; the next call works")
    func lateReplyDiscarded() async throws {
        let stall = try await Stall()
        let connection = stall.connection
        let before = connection.statistics.discardedLines
        // Both are behind the stalled FETCH: neither reply can come before its deadline.
        let ping = await keelError { try await connection.ping(deadline: .milliseconds(100)) }
        #expect(ping?.code == .timeout)
        #expect(ping?.message.contains("PING") == true)
        let late = connection.rows("FETCH", ["entity": "Company", "limit": 50], deadline: .milliseconds(100))
        let fetch = await keelError { _ = try await late.collect() }
        #expect(fetch?.code == .timeout)
        // The stalled stream goes on and delivers every row, in order.
        var count = 1
        while let row = try await stall.rows?.next() {
            #expect(row["name"]?.stringValue != nil)
            count += 1
        }
        #expect(count == 3000)
        // The late PING's OK, and the late FETCH's 50 rows and OK, came and were dropped by tag.
        try await connection.ping()
        #expect(connection.statistics.discardedLines - before == 1 + 50 + 1)
        #expect(connection.statistics.callsInFlight == 0)
        let answer = try await connection.request("COUNT", ["entity": "Company"])
        #expect(answer?["count"] == 3000)
    }

    @Test("an admin command named in any case waits by the maintenance deadline, any other command by the default one")
    func adminCommandsWaitByTheMaintenanceDeadline() async throws {
        // A default deadline long enough for the setup's calls on a loaded machine.
        var options = LiveDaemon.options(deadline: .seconds(2), highWater: 8, lowWater: 2)
        options.maintenanceDeadline = .seconds(600)
        let stall = try await Stall(companies: 500, options: options)
        let connection = stall.connection
        // Behind the stalled FETCH: the admin calls cannot be answered until it goes on.
        let admin = ["checkpoint", "Verify", "cHECKPOINT"].map { command in Task { try await connection.request(command) } }
        while connection.statistics.callsInFlight < 4 { await Task.yield() }
        // Names of an admin command's length that are not one, and others: the default deadline.
        for command in ["VERIFI", "checkpoints"] {
            let error = await keelError { _ = try await connection.request(command) }
            #expect(error?.code == .timeout, "\(command)")
        }
        // The two calls above waited the default deadline out one after the other; the admin
        // calls, made before them, are answered once the stream goes on (with the default
        // deadline they would have thrown TIMEOUT long ago).
        while try await stall.rows?.next() != nil {}
        for call in admin {
            _ = try await call.value
        }
    }

    @Test("a cancelled call throws CANCELLED at once; its reply is discarded; the connection stays in step")
    func cancellation() async throws {
        let stall = try await Stall(companies: 2000)
        let connection = stall.connection
        let before = connection.statistics.discardedLines
        let waiting = Task { try await connection.request("COUNT", ["entity": "Company"]) }
        // The COUNT cannot be answered while the stream is stalled: cancel it while it waits.
        while connection.statistics.callsInFlight < 2 { await Task.yield() }
        waiting.cancel()
        let error = await keelError { _ = try await waiting.value }
        #expect(error?.code == .cancelled)
        // Dropping the stalled stream discards the rest of its rows too.
        #expect(stall.rows != nil)
        stall.rows = nil
        try await connection.ping()
        #expect(connection.statistics.callsInFlight == 0)
        // At least the COUNT's reply and many of the dropped stream's rows were discarded.
        #expect(connection.statistics.discardedLines - before > 1000)
    }

    @Test("a task cancelled before its call is sent sends nothing")
    func cancelledBeforeSending() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await connection.request("BATCH.INSERT", ["entity": "Company", "objects": [["name": "never"]]])
        }
        let error = await keelError { _ = try await task.value }
        #expect(error?.code == .cancelled)
        #expect(try await connection.request("COUNT", ["entity": "Company"])?["count"] == 0)
    }
}
