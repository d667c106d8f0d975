// The daemon killed (SIGKILL) under load: every call in flight fails promptly with
// DISCONNECTED (never left to its deadline), every later call at once; after a restart a new
// connection works and sees every save that was acknowledged.

import Foundation
import KeelClient
import KeelModel
import KeelTestSupport
import Testing

@Suite("KeelConnection: the daemon killed and restarted")
struct DisconnectTests {
    @Test("SIGKILL mid-calls: in-flight calls, streams and subscriptions fail with DISCONNECTED; after a restart every acknowledged save is there")
    func killedAndRestarted() async throws {
        let daemon = try LiveDaemon()
        // A deadline far longer than the test: a call that failed did so because the
        // connection went, not because a timer ran out.
        let connection = try await daemon.connect(LiveDaemon.options(deadline: .seconds(600), highWater: 4, lowWater: 1))
        _ = try await insertCompanies(connection, count: 500, padding: 100)
        let events = try await connection.subscribe(entities: ["Company"])
        var stalled = connection.rows("FETCH", ["entity": "Company"]).makeAsyncIterator()
        _ = try await stalled.next()
        // The stalled stream holds back everything behind it: these calls are surely in flight.
        let blocked = (0..<20).map { _ in Task { try await connection.ping() } }

        // Writers on a second connection: each saves companies one by one until the daemon
        // goes, recording what was acknowledged.
        let writers = try await daemon.connect(LiveDaemon.options(deadline: .seconds(600)))
        let acknowledged = Findings()
        let outcomes = Findings()
        let tasks = (0..<8).map { w in
            Task {
                var i = 0
                while true {
                    let context = "w\(w)"
                    do throws(KeelError) {
                        if i == 0 { _ = try await writers.request("CONTEXT.OPEN", ["name": .string(context)]) }
                        let name = "w-\(w)-\(i)"
                        _ = try await writers.request("INSERT", ["entity": "Company", "values": ["name": .string(name)], "context": .string(context)])
                        _ = try await writers.request("SAVE", ["context": .string(context)])
                        acknowledged.add(name)
                    } catch {
                        outcomes.add(error.code.rawValue)
                        return
                    }
                    i += 1
                }
            }
        }
        while acknowledged.all.count < 40, outcomes.all.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        #expect(outcomes.all.isEmpty, "writers failed before the kill: \(outcomes.all)")
        daemon.keeld.kill()

        for task in tasks { await task.value }
        #expect(Set(outcomes.all) == ["DISCONNECTED"])
        for task in blocked {
            let error = await keelError { try await task.value }
            #expect(error?.code == .disconnected)
        }
        let streamError = await keelError { while try await stalled.next() != nil {} }
        #expect(streamError?.code == .disconnected)
        let eventError = await keelError { for try await _ in events {} }
        #expect(eventError?.code == .disconnected)

        // Later calls fail at once, with a message that says what happened and what to do.
        let later = await keelError { try await connection.ping() }
        #expect(later?.code == .disconnected)
        #expect(later?.message.contains(daemon.socketPath) == true)
        #expect(later?.message.contains("connect again") == true)
        #expect(!connection.isConnected)
        #expect(connection.statistics.callsInFlight == 0)

        // Restarted on the same data: a new connection sees every acknowledged save.
        try daemon.keeld.start()
        let fresh = try await connection.reconnect(waitFor: .seconds(30))
        var stored: Set<String> = []
        for try await row in fresh.rows("FETCH", ["entity": "Company", "predicate": "name BEGINSWITH 'w-'", "result": "dictionaries", "properties": ["name"]]) {
            stored.insert(row["name"]?.stringValue ?? "")
        }
        let missing = Set(acknowledged.all).subtracting(stored)
        #expect(missing.isEmpty, "acknowledged saves lost: \(missing.sorted())")
        #expect(try await fresh.request("COUNT", ["entity": "Company", "predicate": "name BEGINSWITH 'c-'"])?["count"] == 500)
        await fresh.close()
        await writers.close()
    }

    @Test("reconnect() refuses a daemon that now serves another model")
    func reconnectModelMismatch() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        _ = daemon.keeld.stop()
        // Same socket, a different model (another data folder, since the store would refuse it).
        let other = daemon.keeld.folder + "/other-model.json"
        let model = try String(contentsOfFile: Keeld.model, encoding: .utf8).replacingOccurrences(of: "\"Book\"", with: "\"Volume\"")
        try model.write(toFile: other, atomically: true, encoding: .utf8)
        try daemon.keeld.configure(["modelPath": other, "dataDirectory": daemon.keeld.folder + "/data2"])
        try daemon.keeld.start()
        let error = await keelError { _ = try await connection.reconnect(waitFor: .seconds(30)) }
        #expect(error?.code == .modelMismatch)
    }
}
