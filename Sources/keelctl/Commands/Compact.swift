// keelctl compact: every store file rewritten without free pages and with fresh compression.

import ArgumentParser
import KeelModel

struct Compact: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rewrites every store file without free pages and with fresh compression; prints bytes before and after.",
        discussion: """
            Each store file is copied, tree by tree in key order, into a new file beside it, which \
            replaces the old one by an atomic rename: a crash at any moment leaves either the old \
            file or the new one, complete. It needs free disk space for the live pages of the store \
            file being rewritten (plus 4 MiB) and refuses, saying how much, when the disk lacks it. \
            Online (--socket), saves wait while it runs and reads go on.
            """)

    @OptionGroup var location: Location

    func run() async throws {
        let bar = ProgressBar()
        let (before, after) = try await location.run { backend in
            try await bar.during("compacting", ticking: location.isOnline) { () throws(KeelError) in
                try await backend.compact(progress: bar)
            }
        }
        print("bytes before: \(before)")
        print("bytes after:  \(after)")
    }
}
