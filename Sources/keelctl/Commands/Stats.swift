// keelctl stats: objects per entity, and per store file pages, free pages, file and log bytes,
// the compression of values; `--json` prints STATS's JSON (Docs/Protocol.md) instead.

import ArgumentParser
import Foundation
import KeelModel

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prints objects per entity, pages used and free, file and log bytes, and the compression ratio.",
        discussion: """
            The figures come from one snapshot; offline, the folder is opened without writing a \
            byte (so the log bytes are the log file as keeld left it). Walking every tree for the entries, data bytes and \
            compression ratio reads each page once; --quick leaves that out. The compression ratio is \
            the bytes of values as stored in pages over the bytes they hold (values of overflow pages \
            are compressed with LZ4 when that saves an eighth).
            """)

    @OptionGroup var location: Location

    @Flag(help: "Print the figures as one JSON object (STATS's reply).")
    var json = false

    @Flag(help: "Leave out the tree walk (entries, data bytes, compression ratio).")
    var quick = false

    @Flag(help: "Also print one row per tree of each store file: entries, key and value bytes, cell bytes (with slots), leaf and branch pages, leaf fill.")
    var trees = false

    func validate() throws {
        if trees && quick { throw ValidationError("--trees needs the tree walk that --quick leaves out") }
    }

    func run() async throws {
        let stats = try await location.run(readOnly: true) { try await $0.statistics(contents: !quick) }
        if json {
            print(stats.serialized())
            return
        }
        print(Self.render(stats))
        if trees { print("\n" + Self.renderTrees(stats)) }
    }

    /// One row per tree of each store file (`files.<Conf>.trees`), in name order.
    static func renderTrees(_ stats: JSON) -> String {
        var rows: [[String]] = []
        for (file, figures) in stats["files"]?.objectValue ?? [:] {
            for (tree, t) in figures["trees"]?.objectValue ?? [:] {
                let entries = t["entries"]?.intValue ?? 0
                let cells = t["cellBytes"]?.intValue ?? 0
                rows.append([
                    file + ".keel", tree, number(t["entries"]), number(t["keyBytes"]), number(t["valueBytes"]), number(t["cellBytes"]),
                    entries == 0 ? "" : String(format: "%.1f", Double(cells) / Double(entries)),
                    number(t["leafPages"]), number(t["branchPages"]), ratio(t["leafFill"]),
                ])
            }
        }
        let header = ["store file", "tree", "entries", "key bytes", "value bytes", "cell bytes", "per entry", "leaf pages", "branch pages", "leaf fill"]
        return Output.table(header, rows)
    }

    /// The human form: a table of objects per entity, a table of store files.
    static func render(_ stats: JSON) -> String {
        var objects: [[String]] = []
        for (entity, count) in stats["objects"]?.objectValue ?? [:] { objects.append([entity, number(count)]) }
        objects.append(["total", number(stats["totalObjects"])])
        let contents = stats["entries"] != nil
        var header = ["store file", "page file bytes", "log bytes", "page size", "pages used", "pages free"]
        if contents { header += ["entries", "data bytes", "compression"] }
        var files: [[String]] = []
        for (name, file) in stats["files"]?.objectValue ?? [:] {
            var row = [name + ".keel"] + ["pageFileBytes", "logBytes", "pageSize", "pagesUsed", "pagesFree"].map { number(file[$0]) }
            if contents {
                let data = (file["keyBytes"]?.intValue ?? 0) + (file["valueBytes"]?.intValue ?? 0)
                row += [number(file["entries"]), String(data), ratio(file["compressionRatio"])]
            }
            files.append(row)
        }
        var total = ["total", number(stats["fileBytes"]), number(stats["logBytes"]), "", number(stats["pagesUsed"]), number(stats["pagesFree"])]
        if contents { total += [number(stats["entries"]), number(stats["dataBytes"]), ratio(stats["compressionRatio"])] }
        files.append(total)
        var lines = [Output.table(["entity", "objects"], objects), "", Output.table(header, files)]
        lines.append("")
        var last = "last save: \(number(stats["lastTxn"]))"
        // Online (STATS from keeld): the daemon's connections, and those it turned away.
        if let connections = stats["connections"] {
            last += ", connections: \(number(connections))"
            if let overLimit = stats["connectionsRefused"], let noDescriptors = stats["connectionsRefusedNoDescriptors"] {
                last += " (refused: \(number(overLimit)) at limits.maxConnections, \(number(noDescriptors)) for want of descriptors)"
            }
        }
        lines.append(last)
        return lines.joined(separator: "\n")
    }

    private static func number(_ json: JSON?) -> String {
        json?.intValue.map(String.init) ?? ""
    }

    private static func ratio(_ json: JSON?) -> String {
        switch json {
        case .double(let d)?: String(format: "%.2f", d)
        case .int(let i)?: String(format: "%.2f", Double(i))
        default: ""
        }
    }
}
