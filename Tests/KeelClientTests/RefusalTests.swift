// A daemon that refuses the peer answers with one line addressed to the connection (`* ERR
// PERMISSION {…}`) and no reply to HELLO. The client must surface that error from `connect` —
// whether the daemon then closes the socket or keeps it open until the client does (when the
// client closes first, the close runs inside the read that delivered the line; that once emptied
// the read backlog under the loop framing it, a crash).

import Foundation
import KeelClient
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("KeelConnection: a refused connection")
struct RefusalTests {
    @Test("`* ERR PERMISSION` at connect: connect throws PERMISSION with the daemon's message, the daemon closing or not", arguments: [false, true])
    func refusedAtConnect(daemonCloses: Bool) async throws {
        let server = try RefusingServer(
            line: #"* ERR PERMISSION {"message":"uid 4242 may not connect to this daemon"}"# + "\n", close: daemonCloses)
        defer { server.stop() }
        for _ in 0..<20 {
            do {
                let connection = try await KeelConnection.connect(socketPath: server.path)
                Issue.record("connected to a daemon that refused: \(connection)")
            } catch {
                #expect(error.code == .permission)
                #expect(error.message == "uid 4242 may not connect to this daemon")
            }
        }
        #expect(server.accepted() == 20)
    }
}

/// A Unix-socket listener that answers every connection with `line`, then closes it (`close`) or
/// waits until the peer closes.
private final class RefusingServer: @unchecked Sendable {
    // `@unchecked Sendable`: every field is immutable (the counter is its own lock).
    let path: String
    private let listener: Int32
    private let counter = CounterBox()

    init(line: String, close: Bool) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keel-refuse-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/refuse.sock"
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 16) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot listen on \(path)"])
        }
        listener = fd
        let bytes = Array(line.utf8)
        let counter = self.counter
        let serve: @Sendable (Int32) -> Void = { peer in
            _ = bytes.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if !close {
                // Wait for the client to hang up (it reads the line, fails the connect, closes).
                var scratch = [UInt8](repeating: 0, count: 4096)
                while scratch.withUnsafeMutableBytes({ recv(peer, $0.baseAddress, $0.count, 0) }) > 0 {}
            }
            Glibc.close(peer)
        }
        Thread.detachNewThread {
            while true {
                let peer = accept(fd, nil, nil)
                guard peer >= 0 else { return }  // the listener was shut down
                counter.add()
                Thread.detachNewThread { serve(peer) }
            }
        }
    }

    func accepted() -> Int { counter.value }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
}

private final class CounterBox: @unchecked Sendable {
    // `@unchecked Sendable`: `count` is read and written under `lock` only.
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
