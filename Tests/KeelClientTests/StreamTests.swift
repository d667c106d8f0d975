// Streams: FETCH and HISTORY rows as they come, with back-pressure (a slow consumer makes the
// connection stop reading instead of buffering), errors after the rows, early drops.

import KeelClient
import KeelModel
import KeelTestSupport
import Testing

@Suite("KeelConnection: streams and back-pressure")
struct StreamTests {
    @Test("a FETCH of many rows consumed slowly is never held whole: the buffer stays near its high-water mark")
    func slowConsumerBoundedBuffer() async throws {
        let daemon = try LiveDaemon()
        let highWater = 64
        let connection = try await daemon.connect(LiveDaemon.options(highWater: highWater, lowWater: 16))
        let total = 20_000
        for batch in 0..<4 {
            let objects: [JSON] = (0..<(total / 4)).map { i in
                ["name": .string("c-\(batch * (total / 4) + i)"), "website": .string("https://example.com/" + String(repeating: "w", count: 100))]
            }
            _ = try await connection.batchInsert(entity: "Company", objects: objects)
        }
        var seen = 0
        var bytes = 0
        for try await row in connection.rows("FETCH", ["entity": "Company"]) {
            seen += 1
            bytes += row.serialized().utf8.count
            // The slow consumer: a pause now and then lets the socket fill and the buffer reach
            // its mark.
            if seen % 500 == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(seen == total)
        let statistics = connection.statistics
        // Held at once: at most the high-water mark plus the rows of one read of the socket
        // (NIO reads at most 64 KiB at a time), never the whole result (~2.6 MB).
        let rowBytes = bytes / total
        #expect(statistics.pauses > 0)
        #expect(statistics.peakStreamRows <= highWater + (64 << 10) / rowBytes + 1)
        #expect(statistics.peakStreamBytes <= (highWater + 1) * (rowBytes + 64) + (64 << 10))
        #expect(statistics.peakUnreadBytes <= 64 << 10)
        #expect(statistics.peakStreamRows < total / 20)
        try await connection.ping()
    }

    @Test("a stream dropped before its end discards the rest by tag; calls after it are answered")
    func droppedEarly() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect(LiveDaemon.options(highWater: 16, lowWater: 4))
        _ = try await insertCompanies(connection, count: 2000, padding: 100)
        let before = connection.statistics.discardedLines
        var taken = 0
        for try await _ in connection.rows("FETCH", ["entity": "Company"]) {
            taken += 1
            if taken == 10 { break }
        }
        let count = try await connection.request("COUNT", ["entity": "Company"])
        #expect(count?["count"] == 2000)
        // The other 1,990 rows and the final OK were dropped: by tag as they came, except those
        // already buffered when the stream went (at most the buffer's peak), dropped with it.
        let discarded = connection.statistics.discardedLines - before
        #expect(discarded <= 1991)
        #expect(discarded >= 1991 - connection.statistics.peakStreamRows)
        #expect(connection.statistics.peakStreamRows < 1000)
        #expect(connection.statistics.callsInFlight == 0)
    }

    @Test("a FETCH that fails throws the daemon's ERR from the stream; rows before it are delivered")
    func streamError() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        let bad = await keelError { _ = try await connection.rows("FETCH", ["entity": "Nope"]).collect() }
        #expect(bad?.code == .noSuchEntity)
        let predicate = await keelError { _ = try await connection.rows("FETCH", ["entity": "Company", "predicate": "name ==="]).collect() }
        #expect(predicate?.code == .predicate)
        let notObject = await keelError { _ = try await connection.rows("FETCH", "Company").collect() }
        #expect(notObject?.code == .badRequest)
        // The stream of a call that could not even be sent ends with its error at once.
        #expect(connection.statistics.callsInFlight == 0)
        try await connection.ping()
    }

    @Test("HISTORY streams the transactions after one, typed; HISTORY.PRUNE deletes through one")
    func history() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        var txns: [Int64] = []
        for i in 0..<5 {
            let result = try await connection.batchInsert(entity: "Company", objects: [["name": .string("h\(i)")]])
            txns.append(try #require(result.txn))
        }
        let all = try await connection.history(after: 0).collect()
        #expect(all.map(\.txn).suffix(5) == txns[...])
        #expect(all.last?.inserted.count == 1)
        #expect(all.last?.inserted.first?.hasPrefix("Company/") == true)
        #expect(all.last?.time.isEmpty == false)
        let limited = try await connection.history(after: txns[1], limit: 2).collect()
        #expect(limited.map(\.txn) == [txns[2], txns[3]])
        let error = await keelError { _ = try await connection.history(after: -1).collect() }
        #expect(error?.code == .badRequest)
        // HISTORY.PRUNE: the records through a transaction go; HISTORY before it is EXPIRED.
        #expect(try await connection.pruneHistory(through: txns[1]) == all.count - 3)
        #expect(try await connection.history(after: txns[1]).collect().map(\.txn) == Array(txns[2...]))
        let expired = await keelError { _ = try await connection.history(after: 0).collect() }
        #expect(expired?.code == .expired && expired?.details?["prunedThrough"]?.intValue == txns[1], "\(String(describing: expired))")
    }

    @Test("the stream API converts to AsyncThrowingStream with back-pressure kept")
    func throwingStream() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect(LiveDaemon.options(highWater: 8, lowWater: 2))
        _ = try await insertCompanies(connection, count: 500, padding: 100)
        var names: Set<String> = []
        for try await row in connection.rows("FETCH", ["entity": "Company"]).throwingStream {
            names.insert(row["name"]?.stringValue ?? "")
        }
        #expect(names.count == 500)
        #expect(connection.statistics.peakStreamRows < 500)
    }
}
