// keelctl verify: every check there is; exit 0 clean, exit 1 with each fault named.
//
// The text output lists every fault the check has, one line each, each line printed as the check
// finds it (FaultOutput: nothing of them is kept, so millions of faults cost no more memory than a
// few): offline that is every fault found; online, the faults VERIFY's reply lists —
// the first 100 — then one line counting the others. `--json` is bounded like VERIFY's reply
// whatever the count: the first 100 faults and `faultCount`.

import ArgumentParser
import KeelModel
import Synchronization

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Checks every page checksum, B+tree invariant, index against its rows, relationship against its inverse and unique constraint.",
        discussion: """
            Prints one line per fault — its kind (page, row, inverse, dangling, link, index, unique, \
            stray, read) and what it concerns (store file, page, tree, object) — and exits 1; prints \
            "clean: …" and exits 0 when there is none. Online, keeld's reply lists the first 100 \
            faults and counts the others. Offline, a folder whose object store cannot even be opened \
            still gets its page and tree checks.
            """)

    @OptionGroup var location: Location

    @Flag(help: "Print the outcome as one JSON object: ok, the first 100 faults (as VERIFY's details.faults) and faultCount.")
    var json = false

    func run() async throws {
        let bar = ProgressBar()
        let output = FaultOutput(printing: !json, bar: bar)
        let (count, summary) = try await check(bar, output)
        if json {
            print(Self.json(output.kept, count: count, summary).serialized())
        } else {
            let unlisted = count - output.listed
            if unlisted > 0 {
                print("… and \(unlisted) more fault\(unlisted == 1 ? "" : "s") (keeld's reply lists the first \(output.listed); verify the data folder offline, keeld stopped, to list each)")
            }
        }
        guard count == 0 else {
            throw Failure("verification found \(count) fault\(count == 1 ? "" : "s")")
        }
        if !json { print("clean: \(summary.text)") }
    }

    /// Where the faults go as they are found: printed a line each (the progress line erased
    /// first), or the first 100 kept for `--json`; counted either way.
    final class FaultOutput: Sendable {
        private let printing: Bool
        private let bar: ProgressBar
        private let state = Mutex<(listed: Int, kept: [StoreFault])>((0, []))

        init(printing: Bool, bar: ProgressBar) {
            self.printing = printing
            self.bar = bar
        }

        /// The faults handed over.
        var listed: Int { state.withLock { $0.listed } }
        /// The first `ProblemReport.detailLimit` of them, when not printing.
        var kept: [StoreFault] { state.withLock { $0.kept } }

        func add(_ fault: StoreFault) {
            state.withLock { s in
                s.listed += 1
                if printing {
                    bar.finish()
                    print(fault.description)
                } else if s.kept.count < ProblemReport.detailLimit {
                    s.kept.append(fault)
                }
            }
        }
    }

    /// `{"ok":…,"faults":[the first 100],"faultCount":n}`, and when clean what was checked:
    /// `storeFiles`, `pages`, `objects`.
    static func json(_ faults: [StoreFault], count: Int, _ summary: Summary) -> JSON {
        guard count == 0 else {
            return [
                "ok": false, "faults": .array(faults.prefix(ProblemReport.detailLimit).map(\.json)),
                "faultCount": .int(Int64(count)),
            ]
        }
        return [
            "ok": true, "faults": [], "faultCount": 0, "storeFiles": .int(summary.files), "pages": .int(summary.pages),
            "objects": .int(summary.objects),
        ]
    }

    /// What a clean check covered.
    struct Summary {
        var files: Int64 = 0
        var pages: Int64 = 0
        var objects: Int64 = 0

        /// "2 store files, 120 pages, 1000 objects".
        var text: String { "\(files) store file\(files == 1 ? "" : "s"), \(pages) pages, \(objects) objects" }
    }

    /// The faults (to `output`), how many, and what was checked.
    private func check(_ bar: ProgressBar, _ output: FaultOutput) async throws -> (Int, Summary) {
        guard !location.isOnline else { return try await location.run { try await Self.check($0, bar, output, ticking: true) } }
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
            for fault in faults { output.add(fault) }
            return (faults.count, Summary())
        }
        return try await Location.using(OfflineBackend(folder: folder, store: store, reading: true)) {
            try await Self.check($0, bar, output, ticking: false)
        }
    }

    private static func check(_ backend: any Backend, _ bar: ProgressBar, _ output: FaultOutput, ticking: Bool) async throws -> (Int, Summary) {
        let count = try await bar.during("verifying", ticking: ticking) { () throws(KeelError) in
            try await backend.verify(progress: bar) { output.add($0) }
        }
        guard count == 0 else { return (count, Summary()) }  // the figures would read the damage again
        let stats = try await backend.statistics(contents: false)
        return (count, Summary(
            files: Int64(stats["files"]?.objectValue?.count ?? 0),
            pages: (stats["pagesUsed"]?.intValue ?? 0) + (stats["pagesFree"]?.intValue ?? 0),
            objects: stats["totalObjects"]?.intValue ?? 0))
    }
}
