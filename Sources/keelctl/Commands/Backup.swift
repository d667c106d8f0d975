// keelctl backup DEST: a consistent copy of every store file into one backup file.

import ArgumentParser
import Foundation
import KeelModel

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Writes a consistent copy of every store file into one backup file (LZ4-compressed, checksummed).",
        discussion: """
            The copy is of one snapshot of all the store files, taken while saves go on. The file is \
            written as DEST.partial and renamed to DEST once complete and synced; DEST must not \
            exist. Online (--socket), keeld writes it: DEST is then a name under keeld's \
            backupDirectory, and keelctl prints where it went. `keelctl restore` reads it back; the \
            format is in Docs/FileFormat.md, "Backup file".
            """)

    @OptionGroup var location: Location

    @Argument(help: ArgumentHelp("The backup file to write (online: a name under keeld's backupDirectory).", valueName: "dest"))
    var destination: String

    func run() async throws {
        if !location.isOnline {
            // (By hand: swift-corelibs-foundation's `deletingLastPathComponent` traps on a bare name.)
            let folder = destination.lastIndex(of: "/").map { String(destination[..<$0]) } ?? ""
            var isDirectory: ObjCBool = false
            if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) || !isDirectory.boolValue {
                throw Failure("cannot write the backup \(destination): there is no folder \(folder)")
            }
        }
        let bar = ProgressBar()
        let outcome = try await location.run { backend in
            try await bar.during("backing up", ticking: location.isOnline) { () throws(KeelError) in
                try await backend.backup(to: destination, progress: bar)
            }
        }
        print("backup written to \(outcome.path)")
        print("bytes: \(outcome.bytes) (entries: \(outcome.entries), \(outcome.payloadBytes) bytes before compression)")
    }
}
