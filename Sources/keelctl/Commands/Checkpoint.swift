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
        // The log files keep their preallocated size; the frames in them are what a checkpoint moves.
        func figures(_ stats: JSON) -> String {
            "\(stats["logBytes"]?.intValue ?? 0) (frames \(stats["logFrameBytes"]?.intValue ?? 0))"
        }
        let (before, after) = try await location.run { backend in
            let before = figures(try await backend.statistics(contents: false))
            try await backend.checkpoint()
            return (before, figures(try await backend.statistics(contents: false)))
        }
        print("log bytes before: \(before)")
        print("log bytes after:  \(after)")
    }
}
