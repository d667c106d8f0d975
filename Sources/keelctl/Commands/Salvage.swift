// keelctl salvage: opens a data folder whose log recovery refuses as damaged (a frame fails its
// checksum and frames after it had been made durable: Docs/FileFormat.md, recovery rule 4),
// keeping every transaction before the damage, and says what it dropped. Offline only.

import ArgumentParser
import KeelModel

struct Salvage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Opens a data folder whose log is damaged, keeping the transactions before the damage; prints what was dropped.",
        discussion: """
            For a folder that keeld and the other commands refuse with "the log is damaged at \
            offset N … run `keelctl salvage`". Each store file's log is read up to the damage; the \
            transactions after it — durable ones, acknowledged to their clients — are lost for good, \
            and the log is cut there; then every log is checkpointed. Restoring a backup loses \
            less when there is a recent one: copy the folder aside before salvaging. A folder whose \
            logs are sound is opened and checkpointed, and nothing is dropped. Run `keelctl \
            verify` afterwards: a save that spanned two store files may survive in one of them only. \
            Offline only (--data).
            """)

    @OptionGroup var location: Location

    func validate() throws {
        if location.isOnline {
            throw ValidationError("salvage works offline only (--data DIR): stop keeld first")
        }
    }

    func run() async throws {
        let folder = try OfflineFolder.acquire(location, salvage: true)
        defer { folder.release() }
        let store = try folder.open()
        let salvaged = store.salvagedLogs
        try await onThread { () throws(KeelError) in
            try store.checkpoint()
            try store.close()
        }
        guard !salvaged.isEmpty else {
            print("sound: no damaged log in \(folder.directory); nothing was dropped")
            return
        }
        for (file, damage) in salvaged { print("\(file): \(damage); the transactions after the damage were dropped") }
        print("salvaged \(salvaged.count) store file\(salvaged.count == 1 ? "" : "s"); run `keelctl verify --data \(folder.directory)` next")
    }
}
