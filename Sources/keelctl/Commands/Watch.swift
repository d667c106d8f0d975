// keelctl watch: the changes a running keeld commits, one line per transaction as it becomes
// durable (the protocol's SUBSCRIBE, through KeelConnection) — what `redis-cli monitor` is to
// Redis, for saves. Online only: offline, the data folder is locked to keelctl itself, so nothing
// else could change it.
//
//     txn 42: inserted Employee/7, Employee/8; updated Department/2
//     txn 43: deleted Student/1
//     txn 51: events were dropped (this watcher fell behind); what it showed may be stale

import ArgumentParser
import Foundation
import KeelClient
import KeelModel

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prints each transaction keeld commits, as it happens: the objects inserted, updated and deleted (online only).",
        discussion: """
            Example: keelctl watch --socket .keel/keeld.sock --entity Employee --entity Department

            One line per committed transaction, once it is durable, with the IDs of the objects it \
            inserted, updated and deleted (only those of the --entity entities and their \
            sub-entities, when given; transactions touching none of them print nothing). --json \
            prints each event's JSON instead (the protocol's EVENT). A watcher that falls behind by \
            more than 1,024 events gets one line saying events were dropped. It runs until Ctrl-C, \
            or until --count events have been printed; when keeld goes away it fails (exit 1). A \
            line on standard error says when it is watching.
            """)

    @OptionGroup var location: Location

    @Option(help: ArgumentHelp("Only changes to objects of this entity and its sub-entities (repeat for more).", valueName: "name"))
    var entity: [String] = []

    @Option(help: ArgumentHelp("Stop after this many events.", valueName: "n"))
    var count: Int?

    @Flag(help: "Print each event's JSON on a line.")
    var json = false

    func validate() throws {
        guard location.socket != nil else {
            throw ValidationError("watch follows a running keeld: give --socket PATH (offline, nothing but keelctl could change the folder)")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        guard let socket = location.socket else { return }
        let connection = try await OnlineBackend.connect(socket).connection
        let outcome = await follow(connection, socket: socket)
        await connection.close()
        try outcome.get()
    }

    /// Subscribes and prints events until `count` (or the connection's end).
    private func follow(_ connection: KeelConnection, socket: String) async -> Result<Void, Failure> {
        let events: KeelStream<ChangeEvent>
        do throws(KeelError) {
            events = try await connection.subscribe(entities: entity.isEmpty ? nil : entity)
        } catch {
            return .failure(Failure(error))
        }
        let following = entity.isEmpty ? "every entity" : entity.joined(separator: ", ")
        FileHandle.standardError.write(Data("keelctl: watching keeld at \(socket) for changes to \(following)\n".utf8))
        var printed = 0
        do throws(KeelError) {
            for try await event in events {
                // Written at once (not through print's buffer): a line as it happens, also into a pipe.
                FileHandle.standardOutput.write(Data(((json ? Self.json(event).serialized() : Self.line(event)) + "\n").utf8))
                printed += 1
                if let count, printed >= count { return .success(()) }
            }
            return .failure(Failure("keeld at \(socket) ended the subscription"))
        } catch {
            return .failure(Failure("keeld at \(socket) went away: \(error.message)"))
        }
    }

    /// `txn 42: inserted Employee/7, Employee/8; updated Department/2`.
    static func line(_ event: ChangeEvent) -> String {
        if event.overflow { return "txn \(event.txn): events were dropped (this watcher fell behind); what it showed may be stale" }
        let parts = [("inserted", event.inserted), ("updated", event.updated), ("deleted", event.deleted)]
            .filter { !$0.1.isEmpty }
            .map { "\($0.0) \($0.1.joined(separator: ", "))" }
        return "txn \(event.txn): " + parts.joined(separator: "; ")
    }

    /// The event as the protocol's EVENT payload.
    static func json(_ event: ChangeEvent) -> JSON {
        if event.overflow { return ["txn": .int(event.txn), "overflow": true] }
        return [
            "txn": .int(event.txn), "inserted": .array(event.inserted.map(JSON.string)),
            "updated": .array(event.updated.map(JSON.string)), "deleted": .array(event.deleted.map(JSON.string)),
        ]
    }
}
