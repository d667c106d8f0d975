// What a client can rely on when the daemon dies or stops under load: every save answered OK is
// in the store after a restart, and no save is there in part (each save writes a Company and a
// Department of it: both or neither). Random timing, seeded (KEEL_SEED replays); more rounds
// with KEEL_SLOW_TESTS=1.

import Foundation
import KeelModel
import KeelStorage
import KeelTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Durability under load", .serialized)
struct DurabilityTests {
    static var slow: Bool { ProcessInfo.processInfo.environment["KEEL_SLOW_TESTS"] == "1" }

    static func seed() -> UInt64 {
        if let text = ProcessInfo.processInfo.environment["KEEL_SEED"], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 1...UInt64(UInt32.max))
    }

    /// Checks the store against what the writers were told, through a running keeld.
    static func checkStore(_ keeld: Keeld, acknowledged: Set<String>, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let stored = try LoadClients.storedNames(socket: keeld.socketPath)
        let missing = acknowledged.subtracting(stored.companies)
        #expect(missing.isEmpty, "acknowledged saves missing after restart: \(missing.sorted().prefix(10))", sourceLocation: sourceLocation)
        for company in stored.companies where !company.hasPrefix("pending-") {
            let department = "dept-" + company
            #expect(stored.departments[department] == [company], "save of \(company) is partial", sourceLocation: sourceLocation)
        }
        for (department, companies) in stored.departments {
            #expect(companies.count == 1 && stored.companies.contains(companies[0]), "\(department) without its company", sourceLocation: sourceLocation)
        }
        let verify = try keeld.connect().request("v VERIFY")
        #expect(verify.isOK, "\(verify.finalLine)", sourceLocation: sourceLocation)
    }

    @Test("kill -9 under write load from several clients, then restart: every acknowledged save is present and whole")
    func killUnderLoad() throws {
        let seed = Self.seed()
        print("DurabilityTests.killUnderLoad seed \(seed) (KEEL_SEED=\(seed) replays)")
        var rng = SeededRandom(seed: seed)
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        // The smallest checkpoint threshold, so that background checkpoints (the default) run
        // all the time and the kill lands in them too.
        try keeld.configure(["checkpointThresholdBytes": 65_536])
        try keeld.start()
        var acknowledged: Set<String> = []
        var checkpoints = 0
        let rounds = Self.slow ? 20 : 3
        for round in 0..<rounds {
            let record = LoadRecord()
            let writers = LoadClients.start(
                socket: keeld.socketPath, writers: 4, prefix: "k\(round)", record: record, deadline: Date().addingTimeInterval(60))
            usleep(UInt32(100_000 + rng.next() % 700_000))
            let stats = try keeld.connect().request("s STATS")
            checkpoints += Int(stats.payload?["files"]?["Default"]?["checkpoints"]?.intValue ?? 0)
            keeld.kill()
            _ = writers.wait(timeout: .now() + 60)
            #expect(record.violations.isEmpty, "round \(round): \(record.violations.prefix(3))")
            acknowledged.formUnion(record.acknowledged)
            try keeld.start()
            try Self.checkStore(keeld, acknowledged: acknowledged)
        }
        print("DurabilityTests.killUnderLoad: \(rounds) kills, \(acknowledged.count) acknowledged saves checked, \(checkpoints) checkpoints before the kills")
        #expect(!acknowledged.isEmpty, "the writers saved something")
        #expect(checkpoints > 0, "the load crossed the checkpoint threshold")
        #expect(keeld.stop() == 0)
    }

    @Test("SIGTERM under load: exit 0, requests get OK or BUSY, and every acknowledged save survives the restart")
    func sigtermUnderLoad() throws {
        let seed = Self.seed()
        print("DurabilityTests.sigtermUnderLoad seed \(seed) (KEEL_SEED=\(seed) replays)")
        var rng = SeededRandom(seed: seed)
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        var acknowledged: Set<String> = []
        for round in 0..<(Self.slow ? 10 : 2) {
            try keeld.start()
            let record = LoadRecord()
            let writers = LoadClients.start(
                socket: keeld.socketPath, writers: 4, prefix: "t\(round)", record: record, deadline: Date().addingTimeInterval(60))
            usleep(UInt32(100_000 + rng.next() % 500_000))
            let status = keeld.stop()
            #expect(status == 0, "round \(round): keeld exited \(String(describing: status)): \(keeld.stderr.suffix(2000))")
            _ = writers.wait(timeout: .now() + 60)
            #expect(record.violations.isEmpty, "round \(round): \(record.violations.prefix(3))")
            #expect(!FileManager.default.fileExists(atPath: keeld.socketPath), "the socket is removed")
            acknowledged.formUnion(record.acknowledged)
        }
        try keeld.start()
        try Self.checkStore(keeld, acknowledged: acknowledged)
        print("DurabilityTests.sigtermUnderLoad: \(acknowledged.count) acknowledged saves checked")
        #expect(!acknowledged.isEmpty)
        #expect(keeld.stop() == 0)
    }

    @Test("Clients that vanish with saves in flight beside seven other savers: the others are answered, every acknowledged save is whole after kill -9")
    func vanishingSaversInGroups() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        // Eight writers, so that saves can share groups (a leader writes its followers' replies); every
        // third save's connection is reset right after its SAVE is sent, while the group may be
        // answering it.
        let record = LoadRecord()
        let writers = LoadClients.start(
            socket: keeld.socketPath, writers: 8, prefix: "v", record: record, deadline: Date().addingTimeInterval(Self.slow ? 20 : 3),
            vanishEvery: 3)
        _ = writers.wait(timeout: .now() + 90)
        #expect(record.violations.isEmpty, "\(record.violations.prefix(3))")
        let stats = try keeld.connect().request("s STATS")
        #expect(stats.isOK, "the daemon goes on: \(stats.finalLine)")
        keeld.kill()
        try keeld.start()
        try Self.checkStore(keeld, acknowledged: Set(record.acknowledged))
        print("DurabilityTests.vanishingSaversInGroups: \(record.acknowledged.count) acknowledged saves checked")
        #expect(record.acknowledged.count > 50, "the writers saved between their vanishings")
        #expect(keeld.stop() == 0)
    }

    @Test("A client that disconnects in the middle of a save or with pending contexts leaves nothing partial")
    func disconnects() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let observer = try keeld.connect()
        for i in 0..<30 {
            let client = try keeld.connect()
            // A pending context that is never saved.
            try client.send(#"o CONTEXT.OPEN {"name":"bg"}"# + "\n" + #"p INSERT {"entity":"Company","values":{"name":"pending-\#(i)"},"context":"bg"}"# + "\n")
            // A save sent whole and the connection dropped at once, at varying points.
            #expect(try client.response(tag: "o").isOK)
            #expect(try client.response(tag: "p").isOK)
            let company = try client.request(#"a INSERT {"entity":"Company","values":{"name":"x\#(i)"}}"#)
            let id = try #require(company.payload?["$id"]?.stringValue)
            try client.send(#"b INSERT {"entity":"Department","values":{"name":"dept-x\#(i)","companies":["\#(id)"]}}"# + "\ns SAVE\n")
            if i % 3 == 0 { usleep(UInt32(i * 100)) }
            if i % 2 == 0 {
                var linger = linger(l_onoff: 1, l_linger: 0)  // RST instead of FIN
                setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
            }
        }
        usleep(300_000)
        try Self.checkStore(keeld, acknowledged: [])
        let pending = try observer.request(#"c FETCH {"entity":"Company","result":"dictionaries","properties":["name"]}"#)
        #expect(!pending.rows.contains { $0["name"]?.stringValue?.hasPrefix("pending-") == true })
        #expect(try observer.request("p PING").isOK)
    }
}
