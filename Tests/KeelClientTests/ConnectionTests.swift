// Connecting, HELLO and MODEL, errors as KeelError, and many calls from many tasks on one
// connection.

import Glibc
@testable import KeelClient
import KeelModel
import KeelTestSupport
import NIOCore
import Synchronization
import Testing

@Suite("KeelConnection: connecting, calls and errors")
struct ConnectionTests {
    @Test("connect says HELLO and loads the daemon's model; PING answers")
    func hello() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        #expect(connection.hello.server == "keeld")
        #expect(connection.hello.protocolVersion == 1)
        #expect(!connection.hello.version.isEmpty)
        let local = try ModelLoader.load(path: Keeld.model)
        #expect(connection.hello.modelHash == local.hash)
        #expect(connection.model.hash == local.hash)
        #expect(connection.hello.modelName == local.name)
        #expect(connection.hello.limits.maxRequestBytes == 16 << 20)
        // The client asks for early replies by default (Options.coalesceMicros), and the daemon took it.
        #expect(connection.hello.coalesceMicros == 20)
        #expect(connection.model.entity(named: "Employee") != nil)
        try await connection.ping()
        #expect(connection.isConnected && connection.closeReason == nil)
        await connection.close()
    }

    @Test("no daemon, or a stale socket: UNAVAILABLE at once, saying which; with waitFor, the connection is made once the daemon is up")
    func unavailable() async throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        let error = await keelError { _ = try await KeelConnection.connect(socketPath: keeld.socketPath) }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains(keeld.socketPath) == true)
        #expect(error?.message.hasSuffix("No such file or directory (no socket there: is keeld running, with this socketPath?)") == true,
                "\(error?.message ?? "-")")

        // A socket file nobody listens on (a keeld that was killed): refused, said as such.
        try keeld.start()
        keeld.kill()
        let refused = await keelError { _ = try await KeelConnection.connect(socketPath: keeld.socketPath) }
        #expect(refused?.code == .unavailable)
        #expect(refused?.message.hasSuffix("Connection refused (nothing listens on the socket: keeld has stopped)") == true,
                "\(refused?.message ?? "-")")

        // A client that waits while the daemon starts.
        var options = KeelConnection.Options()
        options.waitFor = .seconds(120)
        let path = keeld.socketPath
        let waiting = Task { try await KeelConnection.connect(socketPath: path, clientName: "waiter", options: options) }
        try keeld.start()
        let connection = try await waiting.value
        try await connection.ping()
        await connection.close()
    }

    @Test("a socket error is said in the system's words with its number, not in NIO's text (which names the system call)")
    func systemReason() {
        let reset = IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)")
        #expect(KeelConnection.systemReason(reset) == "Connection reset by peer (errno 104)")
        #expect(KeelConnection.connectFailure(IOError(errnoCode: EACCES, reason: "connect(descriptor:addr:size:)")) == "Permission denied (errno 13)")
        #expect(KeelConnection.connectFailure(IOError(errnoCode: ENOENT, reason: "connect(descriptor:addr:size:)"))
            == "No such file or directory (no socket there: is keeld running, with this socketPath?)")
        #expect(KeelConnection.systemReason(KeelError(.io, "x")) == "IO: x")
    }

    @Test("every ERR arrives as a KeelError with the daemon's code, message and details")
    func errors() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        let notFound = await keelError { _ = try await connection.request("GET", ["$id": "Employee/999"]) }
        #expect(notFound?.code == .notFound)
        #expect(notFound?.message.contains("Employee/999") == true)
        let unknown = await keelError { _ = try await connection.request("FLY") }
        #expect(unknown?.code == .unknownCommand)
        let bad = await keelError { _ = try await connection.request("GET", ["$id": 5, "bogus": true]) }
        #expect(bad?.code == .badRequest)
        #expect(bad?.details?["problems"]?.arrayValue?.count == 2)
        let predicate = await keelError { _ = try await connection.request("COUNT", ["entity": "Employee", "predicate": "age >>> 3"]) }
        #expect(predicate?.code == .predicate)
        #expect(predicate?.details?["position"]?.intValue != nil)
        let validation = await keelError {
            _ = try await connection.request("INSERT", ["entity": "Employee", "values": ["age": 3]])
            _ = try await connection.request("SAVE")
        }
        #expect(validation?.code == .validation)
        #expect(validation?.details != nil)
        // None of it broke the connection.
        try await connection.ping()
        #expect(KeelError.Code.clientSide.isDisjoint(with: [notFound, unknown, bad, predicate, validation].compactMap { $0?.code }))
    }

    @Test("a request no line can carry fails before it is sent, and the connection stays usable")
    func clientSideChecks() async throws {
        let daemon = try LiveDaemon(limits: ["maxRequestBytes": 4096, "maxConnections": 40])
        let connection = try await daemon.connect()
        #expect(connection.hello.limits.maxRequestBytes == 4096)
        #expect(connection.hello.limits.maxConnections == 40)
        let injected = await keelError { _ = try await connection.request("PING\n1 QUIT") }
        #expect(injected?.code == .badRequest)
        let array = await keelError { _ = try await connection.request("GET", ["a", "b"]) }
        #expect(array?.code == .badRequest)
        let large = await keelError {
            _ = try await connection.request("INSERT", ["entity": "Company", "values": ["name": .string(String(repeating: "n", count: 5000))]])
        }
        #expect(large?.code == .tooLarge)
        #expect(connection.statistics.callsInFlight == 0)
        // Values with line breaks are escaped, never cut the line.
        let id = try await connection.request("INSERT", ["entity": "Company", "values": ["name": "two\nlines\r\n"]])?["$id"]?.stringValue
        let object = try await connection.request("GET", ["$id": .string(try #require(id))])
        #expect(object?["name"] == "two\nlines\r\n")
    }

    /// With the client's default `coalesceMicros` (20), with replies each written on their own
    /// (0), and with the daemon's default (a burst's replies together).
    @Test("1,000 concurrent calls from separate tasks on one connection each get their own answer", arguments: [20, 0, nil] as [Int?])
    func thousandConcurrentCalls(coalesceMicros: Int?) async throws {
        let daemon = try LiveDaemon()
        var options = LiveDaemon.options()
        options.coalesceMicros = coalesceMicros
        let connection = try await daemon.connect(options)
        #expect(connection.hello.coalesceMicros == coalesceMicros)
        let ids = try await insertCompanies(connection, count: 900)
        // 900 GETs (each answer must name its own company), 50 GETs of objects that do not exist
        // (each ERR must name its own ID), 50 COUNTs (each must count its own name).
        let mismatches = Findings()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for call in 0..<1000 {
                group.addTask {
                    switch call {
                    case 0..<900:
                        let object = try await connection.request("GET", ["$id": .string(ids[call])])
                        if object?["$id"]?.stringValue != ids[call] || object?["name"]?.stringValue != "c-\(call)" {
                            mismatches.add("GET \(call) → \(object?.serialized() ?? "nil")")
                        }
                    case 900..<950:
                        await Self.getMissing(connection, "Company/\(1_000_000 + call)", mismatches)
                    default:
                        let name = "c-\(call - 950)"
                        let reply = try await connection.request("COUNT", ["entity": "Company", "predicate": "name == %@", "args": [.string(name)]])
                        if reply?["count"]?.intValue != 1 { mismatches.add("COUNT \(name) → \(reply?.serialized() ?? "nil")") }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(mismatches.all == [])
        #expect(connection.statistics.callsInFlight == 0)
        #expect(connection.statistics.discardedLines == 0)
    }

    /// A GET of an object that does not exist: its ERR must be NOT_FOUND and name the object.
    static func getMissing(_ connection: KeelConnection, _ missing: String, _ findings: Findings) async {
        do throws(KeelError) {
            _ = try await connection.request("GET", ["$id": .string(missing)])
            findings.add("GET \(missing) succeeded")
        } catch {
            if error.code != .notFound || !error.message.contains(missing) { findings.add("GET \(missing) → \(error)") }
        }
    }

    @Test("replies that arrive in one read resume their tasks together, each with its own OK or ERR")
    func repliesResumedTogether() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect(LiveDaemon.options())
        let ids = try await insertCompanies(connection, count: 64)
        let wrong = Findings()
        // 64 tasks making 20 calls each, pipelined on the one connection: their replies come
        // several to a read. Every fifth call asks for an object that does not exist (its ERR
        // must name it), the others for their own company.
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<64 {
                let work: @Sendable () async -> Void = {
                    for round in 0..<20 {
                        let i = (task + round) % 64
                        do throws(KeelError) {
                            if round % 5 == 4 {
                                await Self.getMissing(connection, "Company/\(1_000_000 + task * 100 + round)", wrong)
                            } else {
                                let object = try await connection.request("GET", ["$id": .string(ids[i])])
                                if object?["$id"]?.stringValue != ids[i] || object?["name"]?.stringValue != "c-\(i)" {
                                    wrong.add("task \(task) GET \(ids[i]) → \(object?.serialized() ?? "nil")")
                                }
                            }
                        } catch {
                            wrong.add("task \(task): \(error)")
                        }
                    }
                }
                // Half on the pool, half on the connection's event loop (resumed there).
                if task % 2 == 0 { group.addTask(operation: work) } else { group.addTask(executorPreference: connection.executor, operation: work) }
            }
        }
        #expect(wrong.all == [])
        #expect(connection.statistics.peakRepliesPerRead > 1)
        #expect(connection.statistics.callsInFlight == 0)
        #expect(connection.statistics.discardedLines == 0)
        try await connection.ping()
        await connection.close()
    }

    @Test("replies that come whole within a read are handed over in place, longer ones gathered across reads; each is its own call's")
    func repliesInPlaceAndGathered() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect(LiveDaemon.options())
        // GET replies from ~200 B to ~100 KB: the largest never fit one read (at most 64 KiB), so
        // they are gathered by the framer; the rest mostly come whole, several to a read.
        let sizes = [0, 10, 1_000, 5_000, 20_000, 70_000, 100_000]
        let websites = sizes.enumerated().map { n, size in "https://example.com/\(String(repeating: "w", count: size))/\(n)" }
        _ = try await connection.batchInsert(entity: "Company", objects: websites.enumerated().map { n, website in ["name": .string("s-\(n)"), "website": .string(website)] })
        var ids = [String](repeating: "", count: sizes.count)
        for n in sizes.indices {
            let found = try await connection.rows("FETCH", ["entity": "Company", "predicate": "name == %@", "args": [.string("s-\(n)")]]).collect()
            ids[n] = try #require(found.first?["$id"]?.stringValue)
        }
        let wrong = Findings()
        let calls = 280
        let found = ids
        await withTaskGroup(of: Void.self) { group in
            for call in 0..<calls {
                group.addTask {
                    let n = call % sizes.count
                    do throws(KeelError) {
                        if call % 10 == 9 {
                            // A final ERR line, in place or gathered alike.
                            await Self.getMissing(connection, "Company/\(2_000_000 + call)", wrong)
                        } else {
                            let object = try await connection.request("GET", ["$id": .string(found[n])])
                            if object?["$id"]?.stringValue != found[n] || object?["website"]?.stringValue != websites[n] {
                                wrong.add("call \(call) GET \(found[n]) → \(object?["$id"]?.stringValue ?? "nil"), website of \(object?["website"]?.stringValue?.count ?? -1) characters")
                            }
                        }
                    } catch {
                        wrong.add("call \(call): \(error)")
                    }
                }
            }
        }
        #expect(wrong.all == [])
        let statistics = connection.statistics
        // Both ways were taken: in place, and (for the replies over 64 KiB at least) gathered.
        #expect(statistics.repliesTakenInPlace > 0)
        #expect(statistics.repliesTakenInPlace < calls)
        #expect(statistics.callsInFlight == 0)
        #expect(statistics.discardedLines == 0)
        try await connection.ping()
        await connection.close()
    }

    @Test("a reply line over maxReplyBytes fails its call with TOO_LARGE; the connection stays in step")
    func replyTooLarge() async throws {
        let daemon = try LiveDaemon()
        var options = LiveDaemon.options()
        options.maxReplyBytes = 64 << 10  // the MODEL reply at connect still fits
        let connection = try await daemon.connect(options)
        let short = try #require(try await connection.request("INSERT", ["entity": "Company", "values": ["name": "short"]])?["$id"]?.stringValue)
        let long = try #require(
            try await connection.request("INSERT", ["entity": "Company", "values": ["name": "long", "website": .string("https://example.com/" + String(repeating: "l", count: 70_000))]])?["$id"]?.stringValue)
        _ = try await connection.request("SAVE")
        let get = await keelError { _ = try await connection.request("GET", ["$id": .string(long)]) }
        #expect(get?.code == .tooLarge)
        #expect(try await connection.request("GET", ["$id": .string(short)])?["name"] == "short")
        // In a stream: the rows before it arrive, then the stream fails; the rest is dropped.
        var names: [String] = []
        let stream = await keelError {
            for try await row in connection.rows("FETCH", ["entity": "Company", "sort": [["key": "name", "ascending": false]]]) {
                names.append(row["name"]?.stringValue ?? "")
            }
        }
        #expect(names == ["short"])  // sorted descending: "short" before "long"
        #expect(stream?.code == .tooLarge)
        try await connection.ping()
        #expect(connection.statistics.callsInFlight == 0)
    }

    @Test("requests the socket does not take at once (it is full) go through the event loop, whole and in order with the rest")
    func requestsLargerThanTheSocket() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect(LiveDaemon.options())
        let ids = try await insertCompanies(connection, count: 48)
        // Larger than a Unix socket's send buffer (208 KiB by default): a send takes part of it,
        // NIO writes the rest when the socket can take it, and direct writes wait until it has.
        let padding = String(repeating: "p", count: 300_000)
        let wrong = Findings()
        await withTaskGroup(of: Void.self) { group in
            for call in 0..<96 {
                let i = call % 48
                let work: @Sendable () async -> Void = {
                    do throws(KeelError) {
                        if call % 4 == 0 {
                            // Counts its own company and not the padded name (no company has it).
                            let reply = try await connection.request(
                                "COUNT", ["entity": "Company", "predicate": "name == %@ OR name == %@", "args": [.string("c-\(i)"), .string("\(padding)\(call)")]])
                            if reply?["count"]?.intValue != 1 { wrong.add("COUNT \(call) → \(reply?.serialized() ?? "nil")") }
                        } else {
                            let object = try await connection.request("GET", ["$id": .string(ids[i])])
                            if object?["name"]?.stringValue != "c-\(i)" { wrong.add("GET \(call) → \(object?.serialized() ?? "nil")") }
                        }
                    } catch {
                        wrong.add("\(call): \(error)")
                    }
                }
                // Half of the calls are written from the pool's threads, half from the event loop.
                if call % 8 < 4 { group.addTask(operation: work) } else { group.addTask(executorPreference: connection.executor, operation: work) }
            }
        }
        #expect(wrong.all == [])
        #expect(connection.statistics.writesLeftToEventLoop > 0)
        #expect(connection.statistics.callsInFlight == 0)
        #expect(connection.statistics.discardedLines == 0)
        try await connection.ping()
        await connection.close()
    }

    @Test("tasks that prefer the connection's executor make their calls on its event loop")
    func executor() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        let ids = try await insertCompanies(connection, count: 64)
        let wrong = Findings()
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<64 {
                group.addTask(executorPreference: connection.executor) {
                    do throws(KeelError) {
                        let object = try await connection.request("GET", ["$id": .string(ids[i])])
                        if object?["name"]?.stringValue != "c-\(i)" { wrong.add("\(i): \(object?.serialized() ?? "nil")") }
                    } catch {
                        wrong.add("\(i): \(error)")
                    }
                }
            }
        }
        #expect(wrong.all == [])
        let rows = try await withTaskExecutorPreference(connection.executor) {
            try await connection.rows("FETCH", ["entity": "Company"]).collect()
        }
        #expect(rows.count == 64)
    }

    @Test("close() lets calls in flight finish, then every later call fails with DISCONNECTED")
    func close() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        _ = try await insertCompanies(connection, count: 300)
        // A stream is sent when it is made: it is in flight when close() begins.
        let rows = connection.rows("FETCH", ["entity": "Company"])
        await connection.close()
        #expect(try await rows.collect().count == 300)
        let after = await keelError { try await connection.ping() }
        #expect(after?.code == .disconnected)
        #expect(after?.message.contains("close()") == true)
        #expect(!connection.isConnected)
        await connection.close()
    }
}
