// limits.maxConnections: a connection over the limit gets one `* ERR BUSY` line and is closed,
// without a thread of its own; a connection's place comes back when it closes, however it
// closes; STATS counts the connections served and those refused.

import Foundation
import KeelModel
import KeelTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Connection limit")
struct ConnectionLimitTests {
    /// STATS as `client` sees it.
    private func stats(_ client: LineClient) throws -> JSON {
        try #require(try client.request("s STATS").payload)
    }

    /// Asks STATS until the daemon counts `count` connections (a close reaches the daemon a
    /// moment after the client made it); false if it never does.
    private func awaitConnections(_ count: Int, on client: LineClient) throws -> Bool {
        for _ in 0..<2_000 {
            if try stats(client)["connections"] == .int(Int64(count)) { return true }
            usleep(5_000)
        }
        return false
    }

    /// Reads a refused connection: its one line, then the end of the stream.
    private func expectRefusedBusy(_ client: LineClient, limit: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let line = try client.readLine()
        #expect(
            line?.hasPrefix(#"* ERR BUSY {"message":"keeld has too many connections (\#(limit)); "#) == true, "\(line ?? "end of stream")",
            sourceLocation: sourceLocation)
        #expect(try client.readLine() == nil, "the refused connection is closed", sourceLocation: sourceLocation)
    }

    /// Makes the close of `client` abrupt (SO_LINGER 0: no orderly shutdown; the daemon's read
    /// fails with a reset when replies it wrote are unread) and closes it.
    private func reset(_ client: inout LineClient?) {
        guard let fd = client?.fd else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        client = nil
    }

    /// The keeld process's threads (/proc/PID/task).
    private func threads(of pid: Int32) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count
    }

    @Test("Over maxConnections a connection gets one * ERR BUSY line and is closed, unanswered; once one closes, a new one is served")
    func busyOverTheLimit() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(limits: ["maxConnections": 3])
        try keeld.start()
        let first = try keeld.connect()
        var second: LineClient? = try keeld.connect()
        let third = try keeld.connect()
        for client in [first, second!, third] { try client.ok("p PING") }

        // The fourth: its request is read and dropped, its one line is the refusal.
        let fourth = try keeld.connect()
        fourth.setTimeout(seconds: 10)
        try fourth.send("p PING\n")
        try expectRefusedBusy(fourth, limit: 3)

        var figures = try stats(first)
        #expect(figures["connections"] == 3)
        #expect(figures["connectionsRefused"] == 1)
        // The ones served still are.
        try third.ok("p PING")

        // One closes (plainly): a new connection is served in its place, and the next is refused.
        second = nil
        #expect(try awaitConnections(2, on: first))
        let fifth = try keeld.connect()
        try fifth.ok("h HELLO")
        let sixth = try keeld.connect()
        sixth.setTimeout(seconds: 10)
        try expectRefusedBusy(sixth, limit: 3)
        figures = try stats(first)
        #expect(figures["connections"] == 3)
        #expect(figures["connectionsRefused"] == 2)
        #expect(keeld.stop() == 0)
        let log = (try? String(contentsOfFile: keeld.stderrPath, encoding: .utf8)) ?? ""
        // One warning for the spell at the limit, not one per refused connection.
        #expect(log.components(separatedBy: "connection limit reached").count - 1 == 2, "\(log)")
    }

    @Test("Refused connections get no thread: twenty over the limit leave keeld's threads as they were")
    func noThreadForRefused() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(limits: ["maxConnections": 2])
        try keeld.start()
        let served = try (0..<2).map { _ in try keeld.connect() }
        for client in served { try client.ok("p PING") }
        let before = try threads(of: keeld.pid)
        // Held open until each has its refusal, so all twenty are there at once.
        let refused = try (0..<20).map { _ in try keeld.connect() }
        for client in refused {
            client.setTimeout(seconds: 10)
            try expectRefusedBusy(client, limit: 2)
        }
        #expect(try threads(of: keeld.pid) == before)
        let figures = try stats(served[0])
        #expect(figures["connections"] == 2)
        #expect(figures["connectionsRefused"] == 20)
    }

    @Test("Abrupt disconnects — resets, half a line, requests unread, mid-save — give their places back, once each")
    func abruptDisconnects() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(limits: ["maxConnections": 3])
        try keeld.start()
        let monitor = try keeld.connect()
        try monitor.ok("p PING")
        for round in 0..<10 {
            var a: LineClient? = try keeld.connect()
            var b: LineClient? = try keeld.connect()
            try a?.ok("p PING")
            try b?.ok("p PING")
            // Full: a fourth is refused.
            let over = try keeld.connect()
            over.setTimeout(seconds: 10)
            try expectRefusedBusy(over, limit: 3)
            switch round % 3 {
            case 0:
                // Requests whose replies are never read, then a reset; half a line, then a reset.
                try a?.send(String(repeating: "f FETCH {\"entity\":\"Employee\"}\n", count: 50))
                reset(&a)
                try b?.send("half a li")
                reset(&b)
            case 1:
                // A save under way, then gone; half a line, then a plain close.
                try a?.send(#"i INSERT {"entity":"Company","values":{"name":"C\#(round)"}}"# + "\ns SAVE\n")
                reset(&a)
                try b?.send("p PI")
                b = nil
            default:
                // The sending side shut down (the daemon answers, then closes); requests, then a reset.
                if let fd = a?.fd { shutdown(fd, Int32(SHUT_WR)) }
                try b?.send("p PING\np PING\n")
                reset(&b)
            }
            // Both places come back (`a` of the last case is still open: the daemon closes it).
            try #require(try awaitConnections(1, on: monitor), "round \(round)")
            _ = a
        }
        // Exactly two places are free: not fewer (a place leaked), not more (one given back twice).
        let clients = try (0..<2).map { _ in try keeld.connect() }
        for client in clients { try client.ok("p PING") }
        let over = try keeld.connect()
        over.setTimeout(seconds: 10)
        try expectRefusedBusy(over, limit: 3)
        let figures = try stats(monitor)
        #expect(figures["connections"] == 3)
        #expect(figures["connectionsRefused"] == 11)
    }
}

@Suite("Out of file descriptors")
struct DescriptorExhaustionTests {
    /// Sets keeld's soft limit on open files (prlimit(1)); false when that cannot run here.
    private func setOpenFileLimit(pid: Int32, _ soft: Int) throws -> Bool {
        let tool = ["/usr/bin/prlimit", "/bin/prlimit"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let tool else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["--pid", "\(pid)", "--nofile=\(soft):"]
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    @Test("When accept fails for want of descriptors, every waiting connection is answered * ERR BUSY (none is left unanswered); once descriptors are free, connections are served")
    func outOfDescriptors() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure()
        try keeld.start()
        let monitor = try keeld.connect()
        try monitor.ok("p PING")
        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(keeld.pid)/fd").count
        guard try setOpenFileLimit(pid: keeld.pid, open + 3) else { return }  // no prlimit here
        // Room for a connection or two; the others find no descriptor.
        let clients = try (0..<12).map { _ in try keeld.connect() }
        var served = 0
        var refused = 0
        for client in clients {
            client.setTimeout(seconds: 20)
            // A connection already refused and closed may not take it (EPIPE); its line is there.
            try? client.send("p PING\n")
            let line = try client.line()  // throws on timeout: a connection left unanswered
            if line == "p OK" {
                served += 1
            } else {
                #expect(line.hasPrefix(#"* ERR BUSY {"message":"keeld is out of file descriptors ("#), "\(line)")
                #expect(try client.readLine() == nil)
                refused += 1
            }
        }
        #expect(refused > 0)
        #expect(served + refused == clients.count)
        let figures = try #require(try monitor.request("s STATS").payload)
        #expect(figures["connectionsRefusedNoDescriptors"]?.intValue == Int64(refused))
        // Descriptors again: a new connection is served.
        #expect(try setOpenFileLimit(pid: keeld.pid, 4096))
        try keeld.connect().ok("h HELLO")
        #expect(keeld.stop() == 0)
        let log = (try? String(contentsOfFile: keeld.stderrPath, encoding: .utf8)) ?? ""
        #expect(log.contains("cannot accept connections"), "\(log)")
    }
}
