// keelctl verify: every check there is; exit 0 clean, exit 1 with each fault named.

import ArgumentParser
import KeelModel

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Checks every page checksum, B+tree invariant, index against its rows, relationship against its inverse and unique constraint.",
        discussion: """
            Prints one line per fault — its kind (page, row, inverse, dangling, link, index, unique, \
            read) and what it concerns (store file, page, tree, object) — and exits 1; prints \
            "clean: …" and exits 0 when there is none. Offline, a folder whose object store cannot \
            even be opened still gets its page and tree checks.
            """)

    @OptionGroup var location: Location

    func run() async throws {
        let bar = ProgressBar()
        let (faults, summary) = try await check(bar)
        for fault in faults { print(fault.description) }
        guard faults.isEmpty else {
            throw Failure("verification found \(faults.count) fault\(faults.count == 1 ? "" : "s")")
        }
        print("clean: \(summary)")
    }

    /// The faults, and what was checked ("2 store files, 120 pages, 1000 objects").
    private func check(_ bar: ProgressBar) async throws -> ([StoreFault], String) {
        guard !location.isOnline else { return try await location.run { try await Self.check($0, bar, ticking: true) } }
        let folder = try OfflineFolder.acquire(location)
        let store: ObjectStore
        do throws(Failure) {
            store = try folder.open()
        } catch {
            // The object layer cannot open the folder: the page and tree checks still can.
            defer { folder.release() }
            let configurations = Array(folder.model.configurations.keys)
            var faults = try await onThread { () throws(KeelError) in
                ObjectStore.verifyStoreFiles(directory: folder.directory, configurations: configurations, options: folder.options, progress: bar.report)
            }
            bar.finish()
            faults.append(StoreFault(kind: "read", message: error.message))
            return (faults, "")
        }
        return try await Location.using(OfflineBackend(folder: folder, store: store, reading: true)) { try await Self.check($0, bar, ticking: false) }
    }

    private static func check(_ backend: any Backend, _ bar: ProgressBar, ticking: Bool) async throws -> ([StoreFault], String) {
        let faults = try await bar.during("verifying", ticking: ticking) { () throws(KeelError) in try await backend.verify(progress: bar) }
        guard faults.isEmpty else { return (faults, "") }  // the figures would read the damage again
        let stats = try await backend.statistics(contents: false)
        let files = stats["files"]?.objectValue?.count ?? 0
        let pages = (stats["pagesUsed"]?.intValue ?? 0) + (stats["pagesFree"]?.intValue ?? 0)
        let objects = stats["totalObjects"]?.intValue ?? 0
        return (faults, "\(files) store file\(files == 1 ? "" : "s"), \(pages) pages, \(objects) objects")
    }
}
