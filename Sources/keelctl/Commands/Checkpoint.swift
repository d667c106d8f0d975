// keelctl checkpoint: every log moved into its page file.

import ArgumentParser
import KeelModel

struct Checkpoint: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Moves every store file's log into its page file and truncates the log; prints the log bytes before and after.",
        discussion: """
            Online, a snapshot a client still reads can keep part of a log alive; that part stays \
            until the snapshot ends. Offline, the folder is closed with a complete checkpoint.
            """)

    @OptionGroup var location: Location

    func run() async throws {
        let (before, after) = try await location.run { backend in
            let before = try await backend.statistics(contents: false)["logBytes"]?.intValue ?? 0
            try await backend.checkpoint()
            let after = try await backend.statistics(contents: false)["logBytes"]?.intValue ?? 0
            return (before, after)
        }
        print("log bytes before: \(before)")
        print("log bytes after:  \(after)")
    }
}
