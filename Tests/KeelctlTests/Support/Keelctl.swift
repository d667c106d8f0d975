// Running the built keelctl (.build/debug/keelctl; `swift build --build-tests` and `make test`
// build it) in a test's own folder, with its output and exit status; and the folder itself,
// with the test model and helpers that make and read stores in-process. Every store a test reads
// back is verified in full (`verifyAll`) before it is closed.

import Foundation
import KeelModel
import KeelStorage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What one run of keelctl did.
struct Run: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

struct KeelctlError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum Keelctl {
    /// The repository root, from this file's path.
    static let root: String = {
        let path = #filePath
        guard let range = path.range(of: "/Tests/KeelctlTests/") else { return FileManager.default.currentDirectoryPath }
        return String(path[..<range.lowerBound])
    }()

    static var binary: String { root + "/.build/debug/keelctl" }

    /// `setpriv`, to run keelctl as another user; nil when it is missing.
    static let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// A process running keelctl with `arguments` in `directory`, its output going to files there;
    /// as the user and group `uid` (through setpriv, which must exist) when it is given.
    static func start(
        _ arguments: [String], in directory: String, stdin: String? = nil, as uid: UInt32? = nil
    ) throws -> (Process, out: String, err: String) {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw KeelctlError("no keelctl binary at \(binary): run `swift build --build-tests` (make test does)")
        }
        let tag = UUID().uuidString
        let out = directory + "/.out-\(tag)", err = directory + "/.err-\(tag)"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        let process = Process()
        if let uid, let setpriv {
            process.executableURL = URL(fileURLWithPath: setpriv)
            process.arguments = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", binary] + arguments
        } else {
            precondition(uid == nil, "running keelctl as another user needs setpriv")
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = FileHandle(forWritingAtPath: out)
        process.standardError = FileHandle(forWritingAtPath: err)
        if let stdin {
            let input = directory + "/.in-\(tag)"
            _ = FileManager.default.createFile(atPath: input, contents: Data(stdin.utf8))
            process.standardInput = FileHandle(forReadingAtPath: input)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        return (process, out, err)
    }

    /// Runs keelctl to its end.
    static func run(_ arguments: [String], in directory: String, stdin: String? = nil, as uid: UInt32? = nil) throws -> Run {
        let (process, out, err) = try start(arguments, in: directory, stdin: stdin, as: uid)
        process.waitUntilExit()
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: err)
        }
        return Run(
            status: process.terminationStatus, stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }
}

/// A temporary folder for one test: `model.json` (the test model), data folders in it, and
/// keelctl run there.
final class Workspace {
    let path: String

    init() throws {
        var template = Array("/tmp/keelctl-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw KeelctlError("mkdtemp failed") }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        try LibraryModel.text.write(toFile: path + "/model.json", atomically: true, encoding: .utf8)
        try ItemModel.text.write(toFile: path + "/items.json", atomically: true, encoding: .utf8)
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: path) }

    /// keelctl with `arguments`, in this folder.
    func keelctl(_ arguments: String..., stdin: String? = nil) throws -> Run {
        try Keelctl.run(arguments, in: path, stdin: stdin)
    }

    func keelctl(arguments: [String], stdin: String? = nil) throws -> Run {
        try Keelctl.run(arguments, in: path, stdin: stdin)
    }

    /// Opens (creating) the data folder `name` with the test model, runs `body`, checks that every
    /// verification passes, and closes it.
    @discardableResult
    func withStore<R>(_ name: String = "data", model: Model = LibraryModel.model, _ body: (ObjectStore) throws -> R) throws -> R {
        var options = ObjectStoreOptions()
        options.storage.syncMode = .normal
        let store = try ObjectStore.open(directory: path + "/" + name, model: model, options: options)
        defer { try? store.close() }
        let result = try body(store)
        let faults = try store.verifyAll()
        #expect(faults.isEmpty, "the store \(name) fails verification: \(faults)")
        return result
    }

    func file(_ name: String) -> String { path + "/" + name }

    func read(_ name: String) throws -> String { try String(contentsOfFile: file(name), encoding: .utf8) }

    func write(_ name: String, _ text: String) throws { try text.write(toFile: file(name), atomically: true, encoding: .utf8) }
}

extension Keelctl {
    /// Runs keelctl with its standard error on a pseudo-terminal (so it draws progress); returns
    /// what it wrote there.
    static func runOnTerminal(_ arguments: [String], in directory: String) throws -> (status: Int32, terminal: String) {
        // posix_openpt and friends are not in the Glibc module; their Linux ioctls are.
        let (TIOCGPTN, TIOCSPTLCK): (UInt, UInt) = (0x8004_5430, 0x4004_5431)
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, TIOCSPTLCK, &unlock) == 0, ioctl(master, TIOCGPTN, &number) == 0 else {
            throw KeelctlError("no pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        defer { close(master) }
        let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        guard slave >= 0 else { throw KeelctlError("cannot open the pseudo-terminal's other side") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 100) > 0 {
                let n = read(master, &buffer, buffer.count)
                if n > 0 { bytes.append(contentsOf: buffer[..<n]); continue }
            }
            if !process.isRunning { break }
        }
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: bytes, as: UTF8.self))
    }
}
