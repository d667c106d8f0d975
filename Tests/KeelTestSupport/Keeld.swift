// A real keeld for a test: the binary the build made (.build/debug/keeld), started as a child
// process on a temporary data folder and socket, with a configuration file written for the
// test. `start()` returns once the ready line came; `stop()` sends SIGTERM and returns the exit
// status; `kill()` is SIGKILL. Shared by every integration suite (KeelServerTests,
// KeelClientTests, keelctl's tests) through this non-test target.

public import Foundation

#if canImport(Glibc)
import Glibc
#endif

public final class Keeld {
    /// The repository root, from this file's path.
    public static let root: String = {
        let path = #filePath
        guard let range = path.range(of: "/Tests/KeelTestSupport/") else { return FileManager.default.currentDirectoryPath }
        return String(path[..<range.lowerBound])
    }()

    public static var binary: String { root + "/.build/debug/keeld" }
    public static var model: String { root + "/config/model.json" }

    public let folder: String
    public var socketPath: String { folder + "/run/keeld.sock" }
    public var dataPath: String { folder + "/data" }
    public var stderrPath: String { folder + "/keeld.stderr" }
    public var configPath: String { folder + "/keeld.json" }
    public private(set) var process: Process?
    public private(set) var pid: Int32 = 0

    /// A fresh temporary folder (short, so the socket path fits sun_path).
    public init() throws {
        var template = Array("/tmp/keel-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw KeeldError("mkdtemp failed") }
        folder = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Another daemon on the same folder (for the second-daemon test).
    public init(sharing other: Keeld) {
        folder = other.folder
    }

    deinit {
        kill()
    }

    /// Stops the daemon (SIGKILL) and removes the temporary folder.
    public func cleanUp() {
        kill()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Writes the configuration: the test's socket and data folder, then `settings` over them.
    public func configure(_ settings: [String: Any] = [:], limits: [String: Int] = [:]) throws {
        var json: [String: Any] = [
            "socketPath": socketPath, "dataDirectory": dataPath, "modelPath": Self.model,
            "logLevel": "notice", "backupDirectory": folder + "/backups", "shutdownGraceSeconds": 10,
        ]
        for (key, value) in settings { json[key] = value }
        if !limits.isEmpty { json["limits"] = limits }
        let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        try data.write(to: URL(fileURLWithPath: configPath))
    }

    /// Starts keeld and waits for its ready line. Throws with its standard error if it exits
    /// instead.
    @discardableResult
    public func start(arguments: [String]? = nil, timeout: Double = 60) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw KeeldError("no keeld binary at \(Self.binary): run `swift build --build-tests` (make test does)")
        }
        let process = try makeProcess(arguments: arguments)
        let out = Pipe()
        process.standardOutput = out
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        self.pid = process.processIdentifier
        let line = try readLine(out.fileHandleForReading.fileDescriptor, timeout: timeout)
        guard let line else {
            process.waitUntilExit()
            throw KeeldError("keeld exited \(process.terminationStatus) before it was ready: \(stderr)")
        }
        return line
    }

    /// Runs keeld expecting it to refuse: its exit status and standard error.
    public func runExpectingRefusal(arguments: [String]? = nil) throws -> (status: Int32, stderr: String) {
        let process = try makeProcess(arguments: arguments)
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// keeld in the test's folder, with `arguments` or the test's configuration file (written
    /// with the defaults if the test wrote none).
    private func makeProcess(arguments: [String]?) throws -> Process {
        if !FileManager.default.fileExists(atPath: configPath) { try configure() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments ?? ["--config", configPath]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        return process
    }

    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// SIGTERM, then the exit status (nil if it did not exit within `timeout`).
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 60) -> Int32? {
        guard let process else { return nil }
        Glibc.kill(process.processIdentifier, signal)
        return waitForExit(timeout: timeout)
    }

    /// SIGKILL, and waits (up to 30 s) for the process to be gone: exited as Foundation sees it,
    /// or a zombie — it has let go of its files, locks and socket. Not `waitUntilExit()`, which
    /// spins forever on a run loop when Foundation misses the child's exit (seen: a test run
    /// stuck at 100% CPU in `Keeld.cleanUp` with two `<defunct>` keelds).
    public func kill() {
        guard let process, process.isRunning else { return }
        let pid = process.processIdentifier
        Glibc.kill(pid, SIGKILL)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, !Self.isGone(pid), Date() < deadline { usleep(5_000) }
    }

    /// Whether `pid` has exited: no such process, or a zombie not reaped yet whose threads have all
    /// ended (the main thread shows `Z` while the others still close the process's files).
    static func isGone(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        // "pid (comm) S …": the state follows the last ')'.
        guard let close = stat.lastIndex(of: ")"),
            stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
        else { return false }
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count) ?? 0
        return threads <= 1
    }

    public func waitForExit(timeout: Double) -> Int32? {
        guard let process else { return nil }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        guard !process.isRunning else { return nil }
        return process.terminationStatus
    }

    /// Resident memory of the daemon, in KiB (VmRSS).
    public var residentKiB: Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    /// A new client connection.
    public func connect() throws -> LineClient { try LineClient(path: socketPath) }

    private func readLine(_ fd: Int32, timeout: Double) throws -> String? {
        var bytes: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            guard ready > 0 else { continue }
            var byte: UInt8 = 0
            let n = read(fd, &byte, 1)
            if n <= 0 { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        throw KeeldError("keeld was not ready within \(timeout) s: \(stderr)")
    }
}

public struct KeeldError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
