// A real keeld for one test (KeelTestSupport's Keeld) and connections to it through the client.

import KeelClient
import KeelModel
import KeelTestSupport
import Synchronization
import Testing

final class LiveDaemon {
    let keeld: Keeld

    /// Starts keeld on a fresh folder; `settings` and `limits` go over the test defaults.
    init(_ settings: [String: Any] = [:], limits: [String: Int] = [:]) throws {
        keeld = try Keeld()
        try keeld.configure(settings, limits: limits)
        try keeld.start()
    }

    deinit { keeld.cleanUp() }

    var socketPath: String { keeld.socketPath }

    /// A connection (the test's name as the client's).
    func connect(_ options: KeelConnection.Options = KeelConnection.Options(), name: String = "KeelClientTests") async throws -> KeelConnection {
        try await KeelConnection.connect(socketPath: keeld.socketPath, clientName: name, options: options)
    }

    /// Options with every field the tests care about in one place.
    static func options(deadline: Duration = .seconds(60), highWater: Int = 512, lowWater: Int = 128, events: Int = 1024) -> KeelConnection.Options {
        var options = KeelConnection.Options()
        options.deadline = deadline
        options.streamHighWater = highWater
        options.streamLowWater = lowWater
        options.eventBufferLength = events
        return options
    }
}

/// The error a call threw, as a `KeelError` (a test fails if it threw something else or nothing).
func keelError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async -> KeelError? {
    do {
        try await body()
        Issue.record("expected a KeelError, the call succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as KeelError {
        return error
    } catch {
        Issue.record("expected a KeelError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// `count` companies named `<prefix><i>` (each with a long website, so rows have some weight),
/// in one BATCH.INSERT; their IDs by index, read back by name.
func insertCompanies(_ connection: KeelConnection, count: Int, prefix: String = "c-", padding: Int = 0) async throws -> [String] {
    let pad = String(repeating: "x", count: padding)
    let objects: [JSON] = (0..<count).map { i in ["name": .string("\(prefix)\(i)"), "website": .string("https://example.com/\(pad)\(i)")] }
    let result = try await connection.batchInsert(entity: "Company", objects: objects)
    #expect(result.inserted == count)
    var ids = [String](repeating: "", count: count)
    for try await row in connection.rows("FETCH", ["entity": "Company", "predicate": "name BEGINSWITH %@", "args": [.string(prefix)]]) {
        guard let name = row["name"]?.stringValue, let i = Int(name.dropFirst(prefix.count)), let id = row["$id"]?.stringValue else { continue }
        ids[i] = id
    }
    return ids
}

/// What concurrent tasks of a test found wrong, collected from any of them.
final class Findings: Sendable {
    /// Guards the list.
    private let list = Mutex<[String]>([])
    func add(_ finding: String) { list.withLock { $0.append(finding) } }
    var all: [String] { list.withLock { $0 } }
}
