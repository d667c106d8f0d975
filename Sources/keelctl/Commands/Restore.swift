// keelctl restore SRC: a backup file rebuilt into an empty data folder, verified before it is
// reported done. Offline only: keeld does not serve a folder being restored.

import ArgumentParser
import Foundation
import KeelModel
import KeelStorage

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restores a backup file into an empty data folder and verifies it before it finishes.",
        discussion: """
            Offline only: the folder (--data, created when missing) must be empty. Every block of \
            the backup is checked before it is used; the store files are rebuilt (compacted) under \
            temporary names and renamed once complete; then the folder is opened with the model the \
            backup recorded (it must be --model's, when one is given) and every check of `verify` \
            runs. A damaged backup or a failed check leaves nothing behind and exits 1. With \
            --check, only the backup file is read and checked; nothing is written.
            """)

    @OptionGroup var location: Location

    @Flag(help: "Only check the backup file (every block, the end block); write nothing.")
    var check = false

    @Argument(help: ArgumentHelp("The backup file.", valueName: "src"))
    var source: String

    func validate() throws {
        if location.isOnline {
            throw ValidationError("restore works offline only (--data DIR): stop keeld, restore into an empty folder, and point keeld at it")
        }
    }

    func run() async throws {
        let bar = ProgressBar()
        let path = source
        guard FileManager.default.fileExists(atPath: path) else { throw Failure("no backup file at \(path)") }
        if check {
            let summary = try await bar.during("checking", ticking: false) { () throws(KeelError) in
                try await onThread { () throws(KeelError) in try ObjectStore.checkBackup(path, progress: bar.report) }
            }
            print("\(path): a complete backup, every block checked")
            print(Self.describe(summary))
            return
        }
        let directory = try location.dataDirectory()
        let lock: DataFolderLock
        do throws(KeelError) {
            lock = try DataFolderLock.acquire(directory: directory, program: "keelctl")
        } catch {
            throw Failure(error.message + (error.code == .busy ? ": stop it first; a restore goes into an empty folder" : ""))
        }
        defer { lock.release() }
        let model: Model?
        do throws(KeelError) {
            model = try location.model.map { (path) throws(KeelError) in try ModelLoader.load(path: path) }
        } catch {
            throw Failure("the model \(location.model ?? "") cannot be loaded: \(error.message)")
        }
        let options = ObjectStoreOptions(storage: try location.settings().storeOptions)
        let (summary, restored) = try await bar.during("restoring", ticking: false) { () throws(KeelError) in
            try await onThread { () throws(KeelError) in
                try ObjectStore.restore(backup: path, into: directory, model: model, options: options, progress: bar.report)
            }
        }
        print("restored \(path) into \(directory): model \(restored.name) version \(restored.version), verified clean")
        print(Self.describe(summary))
    }

    static func describe(_ summary: BackupSummary) -> String {
        let stores = summary.stores.map { "\($0.name) (\($0.pageSize)-byte pages)" }.joined(separator: ", ")
        var text = "stores: \(stores); trees: \(summary.trees); entries: \(summary.entries); bytes: \(summary.bytes) (\(summary.payloadBytes) before compression)"
        if let info = try? JSON.parse(summary.info), let model = info["model"]?.stringValue {
            text += "\nmade from model \(model) (hash \(info["modelHash"]?.stringValue ?? "?")) at save \(info["lastSave"]?.intValue ?? 0)"
        }
        return text
    }
}
