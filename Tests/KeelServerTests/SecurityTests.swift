// Peer credentials: only allowed uids connect, only admin uids run admin commands.

import Foundation
import KeelTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Security")
struct SecurityTests {
    @Test("A peer that is not an admin gets PERMISSION for each admin command, and nothing else changes")
    func nonAdmin() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(["adminUIDs": [Int]()])
        try keeld.start()
        let client = try keeld.connect()
        try client.ok(#"i BATCH.INSERT {"entity":"Company","objects":[{"name":"A"}]}"#)
        for command in ["CHECKPOINT", "COMPACT", "VERIFY", #"BACKUP {"path":"b1"}"#, #"HISTORY.PRUNE {"through":1}"#] {
            let reply = try client.request("a \(command)")
            #expect(reply.errorCode == "PERMISSION", "\(command)")
            #expect(reply.errorMessage?.contains("admin") == true)
        }
        #expect(try client.request("p PING").isOK)
        #expect(try client.request(#"h HISTORY {"after":0}"#).rows.count == 1, "the history is whole")
        #expect(!FileManager.default.fileExists(atPath: keeld.folder + "/backups/b1"))
    }

    /// Runs a one-line exchange as another uid (setpriv) with python3; nil when that cannot run
    /// here (not root, no setpriv, no python3).
    private func exchange(as uid: Int, socket: String, send: String) throws -> String? {
        guard getuid() == 0 else { return nil }
        let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let setpriv, let python else { return nil }
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(60)
            s.connect(sys.argv[1])
            s.sendall(sys.argv[2].encode() + b"\\n")
            data = b""
            while not data.endswith(b"\\n"):
                chunk = s.recv(4096)
                if not chunk: break
                data += chunk
            sys.stdout.write(data.decode())
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: setpriv)
        process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", python, "-c", script, socket, send]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test("A uid that is not allowed is refused with one PERMISSION line; an allowed one is served (as root, with setpriv)")
    func disallowedUID() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        // A socket reachable by everyone, so that only SO_PEERCRED stands in the way.
        try FileManager.default.createDirectory(atPath: keeld.folder + "/run", withIntermediateDirectories: true)
        chmod(keeld.folder, 0o755)
        chmod(keeld.folder + "/run", 0o755)
        try keeld.configure(["socketMode": "0666", "allowedUIDs": [65533]])
        try keeld.start()
        guard let refused = try exchange(as: 65534, socket: keeld.socketPath, send: "p PING") else {
            // Not root or no setpriv/python3 here: the refusal path cannot be exercised.
            return
        }
        #expect(refused.hasPrefix("* ERR PERMISSION {\"message\":\"uid 65534 may not connect"))
        let allowed = try exchange(as: 65533, socket: keeld.socketPath, send: "p PING")
        #expect(allowed == "p OK\n")
        #expect(try keeld.connect().request("p PING").isOK)
    }
}
