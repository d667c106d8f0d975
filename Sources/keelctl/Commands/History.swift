// keelctl history: the transactions committed after one, oldest first — what HISTORY answers
// (Core Data's persistent history), offline from the data folder or online from keeld; `watch`
// shows the ones still to come. `--delete-through TXN` deletes the records through a transaction
// instead (HISTORY.PRUNE, Core Data's deleteHistory(before:)).
//
//     txn 42 2026-12-08T00:01:02.123Z: inserted Employee/7, Employee/8; updated Department/2
//     txn 43 2026-12-08T00:01:05.020Z: deleted Student/1

import ArgumentParser
import Foundation
import KeelModel

struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prints the transactions committed after one: when, and the objects inserted, updated and deleted.",
        discussion: """
            Example: keelctl history --socket .keel/keeld.sock --after 40 --limit 10

            One line per transaction, oldest first, from the one after --after (default 0: from \
            the first); --json prints each one's JSON instead (a HISTORY row). A store that prunes \
            its history (keeld's historyRetention) cannot answer after a transaction whose \
            successors it pruned: that fails (exit 1), naming the newest one pruned.

            --delete-through TXN deletes the records of the transactions through TXN instead, in \
            every store (HISTORY.PRUNE; a TXN past the last transaction means the last): do it \
            once every reader of the history has seen TXN. It prints how many went.
            """)

    @OptionGroup var location: Location

    @Option(help: ArgumentHelp("Start after this transaction (0: from the first).", valueName: "txn"))
    var after: Int64 = 0

    @Option(help: ArgumentHelp("Print at most this many transactions.", valueName: "n"))
    var limit: Int?

    @Flag(help: "Print each transaction's JSON on a line.")
    var json = false

    @Option(help: ArgumentHelp("Delete the records of the transactions through this one instead of printing.", valueName: "txn"))
    var deleteThrough: Int64?

    func validate() throws {
        if after < 0 { throw ValidationError("--after must be a transaction number from 0") }
        if let limit, limit < 0 { throw ValidationError("--limit must be a whole number from 0") }
        if let deleteThrough {
            if deleteThrough < 0 { throw ValidationError("--delete-through must be a transaction number from 0") }
            if after != 0 || limit != nil { throw ValidationError("--delete-through deletes; --after and --limit are for printing") }
        }
    }

    func run() async throws {
        if let deleteThrough {
            try await location.run { backend in
                let reply = try await backend.pruneHistory(through: deleteThrough)
                if json { print(reply.serialized()); return }
                let deleted = reply["deleted"]?.intValue ?? 0
                let through = reply["prunedThrough"]?.intValue ?? deleteThrough
                print("deleted \(deleted) history record\(deleted == 1 ? "" : "s"), through transaction \(through)")
            }
            return
        }
        try await location.run(readOnly: true, reading: true) { backend in
            // In pages, printed as they come: a long history is never held whole.
            var last = after
            var remaining = limit ?? .max
            while remaining > 0 {
                let want = min(remaining, Self.pageSize)
                let page = try await backend.history(after: last, limit: want)
                for row in page { print(json ? row.serialized() : Self.line(row)) }
                guard page.count == want, let newest = page.last?["txn"]?.intValue else { break }
                last = newest
                remaining -= page.count
            }
        }
    }

    /// Transactions asked for at a time.
    static let pageSize = 512

    /// `txn 42 2026-12-08T00:01:02.123Z: inserted Employee/7; updated Department/2`.
    static func line(_ row: JSON) -> String {
        let parts = ["inserted", "updated", "deleted"].compactMap { kind -> String? in
            let ids = (row[kind]?.arrayValue ?? []).compactMap(\.stringValue)
            return ids.isEmpty ? nil : "\(kind) \(ids.joined(separator: ", "))"
        }
        let head = "txn \(row["txn"]?.intValue ?? 0) \(row["time"]?.stringValue ?? "")"
        return parts.isEmpty ? head : head + ": " + parts.joined(separator: "; ")
    }
}
