// Starting and stopping keeld: the ready line, the socket's mode and folder, refusals (one
// line, exit 1; a log of another store file among them), the data folder's lock, stale and live
// sockets, SIGTERM.

import Foundation
import KeelTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Start and stop")
struct StartupTests {
    @Test("The ready line names the socket and the pid; the socket is 0660 in a 0700 folder; SIGTERM exits 0 and removes it")
    func readyAndStop() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        let ready = try keeld.start()
        #expect(ready == "keeld ready socket=\(keeld.socketPath) pid=\(keeld.pid)")
        var info = stat()
        #expect(lstat(keeld.socketPath, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_mode & 0o777 == 0o660)
        #expect(stat(keeld.folder + "/run", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(keeld.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: keeld.socketPath))
    }

    @Test("socketMode is applied at creation")
    func socketMode() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(["socketMode": "0600"])
        try keeld.start()
        var info = stat()
        #expect(lstat(keeld.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(keeld.stop() == 0)
    }

    @Test("A second keeld on the same data folder refuses with one line and exit 1")
    func secondDaemon() throws {
        let first = try Keeld()
        defer { first.cleanUp() }
        try first.start()
        let second = Keeld(sharing: first)
        let refusal = try second.runExpectingRefusal(arguments: [
            "--config", first.configPath, "--socket", first.folder + "/run/other.sock",
        ])
        #expect(refusal.status == 1)
        #expect(refusal.stderr.split(separator: "\n").count == 1)
        #expect(refusal.stderr.contains("in use by another keeld (pid \(first.pid))"))
        #expect(try first.connect().request("p PING").isOK)
    }

    @Test("A stale socket left by a killed keeld is replaced; a live one refuses the start")
    func staleSocket() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        keeld.kill()
        #expect(FileManager.default.fileExists(atPath: keeld.socketPath))
        try keeld.start()
        #expect(try keeld.connect().request("p PING").isOK)
        #expect(keeld.stderr.contains("replaced a stale socket"))

        // Another data folder, the same socket, which is live: refused.
        let other = try Keeld()
        defer { other.cleanUp() }
        let refusal = try other.runExpectingRefusal(arguments: [
            "--data", other.dataPath, "--model", Keeld.model, "--socket", keeld.socketPath,
        ])
        #expect(refusal.status == 1)
        #expect(refusal.stderr == "keeld: another daemon is listening on \(keeld.socketPath)\n")
        #expect(try keeld.connect().request("p PING").isOK)
        #expect(keeld.stop() == 0)
    }

    @Test("A file that is not a socket at the socket path refuses the start")
    func notASocket() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try FileManager.default.createDirectory(atPath: keeld.folder + "/run", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: keeld.socketPath, contents: Data("keep me".utf8))
        let refusal = try keeld.runExpectingRefusal()
        #expect(refusal.status == 1)
        #expect(refusal.stderr.contains("is not a socket"))
        #expect(FileManager.default.contents(atPath: keeld.socketPath) == Data("keep me".utf8))
    }

    @Test("An invalid model, a bad configuration or a bad flag refuse with one line and exit 1")
    func refusals() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        let badModel = keeld.folder + "/bad-model.json"
        try Data(#"{"name":"X","version":1,"entities":[{"name":"lower"}]}"#.utf8).write(to: URL(fileURLWithPath: badModel))
        var refusal = try keeld.runExpectingRefusal(arguments: ["--config", keeld.configPath, "--model", badModel])
        #expect(refusal.status == 1)
        #expect(refusal.stderr.hasPrefix("keeld: the model cannot be loaded"))
        #expect(refusal.stderr.split(separator: "\n").count == 1)

        try keeld.configure(["syncMode": "sometimes", "socketPaht": "x"])
        refusal = try keeld.runExpectingRefusal()
        #expect(refusal.status == 1)
        #expect(refusal.stderr.contains("syncMode must be"))
        #expect(refusal.stderr.contains("unknown key \"socketPaht\""))
        #expect(refusal.stderr.split(separator: "\n").count == 1)

        try keeld.configure()
        refusal = try keeld.runExpectingRefusal(arguments: ["--config", keeld.configPath, "--log-level", "loud"])
        #expect(refusal.status == 1)
        #expect(refusal.stderr.contains("--log-level must be one of"))
    }

    @Test("A log copied from another store file of the folder refuses the start with one line naming both files; the right log back, it starts")
    func logOfAnotherStoreFile() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        #expect(keeld.stop() == 0)
        let feedbackLog = keeld.dataPath + "/Feedback.keel-wal"
        let own = try Data(contentsOf: URL(fileURLWithPath: feedbackLog))
        try FileManager.default.removeItem(atPath: feedbackLog)
        try FileManager.default.copyItem(atPath: keeld.dataPath + "/Default.keel-wal", toPath: feedbackLog)
        // Started, not run to its exit: a keeld that took the log would serve, not exit.
        do {
            try keeld.start()
            Issue.record("keeld started with another store file's log")
            _ = keeld.stop()
        } catch {
            #expect(keeld.process?.terminationStatus == 1)
            let refusal = keeld.stderr
            #expect(refusal.split(separator: "\n").count == 1, "\(refusal)")
            #expect(refusal.hasPrefix("keeld: ") && refusal.contains("\(feedbackLog) belongs to another store file"), "\(refusal)")
            #expect(refusal.contains("the page file \(keeld.dataPath)/Feedback.keel "), "\(refusal)")
        }
        try own.write(to: URL(fileURLWithPath: feedbackLog))
        try keeld.start()
        #expect(try keeld.connect().request("p PING").isOK)
        #expect(keeld.stop() == 0)
    }

    @Test("config/keeld.json is valid and holds exactly the defaults")
    func shippedConfiguration() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        // The shipped file, with only the paths moved to the test's folder.
        try keeld.start(arguments: [
            "--config", Keeld.root + "/config/keeld.json", "--data", keeld.dataPath, "--model", Keeld.model,
            "--socket", keeld.socketPath,
        ])
        let hello = try keeld.connect().request("h HELLO")
        #expect(hello.payload?["limits"] == [
            "maxRequestBytes": 16_777_216, "contextsPerConnection": 64, "pendingObjectsPerContext": 100_000,
            "inFlightRequests": 1024, "subscriberQueueLength": 1024, "maxBufferedBytes": 4_194_304, "maxConnections": 1024,
        ])
        #expect(keeld.stop() == 0)
    }
}
