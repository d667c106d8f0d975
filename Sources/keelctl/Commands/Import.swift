// keelctl import FILE: the objects of a JSON array or JSON lines file inserted in saves of
// bounded size; a failure undoes what was saved. Format and rules: KeelModel/Transfer/
// ImportPlan.swift and Docs/Operations.md, "Import and export".

import ArgumentParser
import Foundation
import KeelModel

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Inserts the objects of a JSON array or JSON lines file; relationships refer to objects of the same file by key.",
        discussion: """
            Each object is a JSON object: "$entity" names its entity (else --entity), the key field \
            (--key, default "$id") holds its key (a string or an integer, unique within its entity \
            hierarchy), attributes take their wire values, a to-one relationship takes the key of \
            another object of the file (or null), a to-many an array of keys; either side of a link \
            may be written. References go only to objects of the same file. What `keelctl export` \
            writes is such a file.

            Everything is checked before anything is written; each problem is named by its line \
            and field. Objects are then inserted in saves of --chunk objects (those that others \
            require first), with a progress bar. If a save fails, the saves already made are undone \
            and the error names the lines of the objects it concerns: nothing is left half-imported. \
            FILE "-" reads standard input. Online (--socket), inserts go through keeld's \
            BATCH.INSERT, one entity per save; a cycle of required relationships must then be \
            imported offline.
            """)

    @OptionGroup var location: Location

    @Option(help: ArgumentHelp("The entity of objects without \"$entity\".", valueName: "name"))
    var entity: String?

    @Option(help: ArgumentHelp("The member holding each object's key: \"$id\" (not stored), or an attribute's name (stored too).", valueName: "field"))
    var key = "$id"

    @Option(help: ArgumentHelp("Objects per save.", valueName: "n"))
    var chunk = 5000

    @Argument(help: ArgumentHelp("The file to import (a JSON array of objects, or one object per line).", valueName: "file"))
    var file: String

    func validate() throws {
        guard chunk > 0 else { throw ValidationError("--chunk must be at least 1") }
    }

    func run() async throws {
        let bytes = try Self.read(file)
        let items: [ImportItem]
        do throws(KeelError) {
            items = try ImportSource.read(bytes)
        } catch {
            throw Failure("\(file): \(error.message); nothing was imported")
        }
        let bar = ProgressBar()
        let options = ImportOptions(entity: entity, keyField: key)
        let result = try await location.run(creating: true) { backend in
            let plan: ImportPlan
            do throws(KeelError) {
                plan = try ImportPlan(model: backend.model, items: items, options: options)
            } catch {
                throw Failure("\(file): \(Self.refusal(error)); nothing was imported")
            }
            return try await bar.during("importing", ticking: false) { () throws(KeelError) in
                try await backend.importObjects(plan, chunkSize: chunk, progress: bar)
            }
        }
        let counts = result.inserted.map { "\($0.entity) \($0.count)" }.joined(separator: ", ")
        print("imported \(result.total) object\(result.total == 1 ? "" : "s") in \(result.saves) save\(result.saves == 1 ? "" : "s")" + (counts.isEmpty ? "" : ": \(counts)"))
    }

    /// The plan's refusal with every problem it found (it stops at ImportPlan.problemLimit), each
    /// "line N: …", not only the first ones its message has room for.
    static func refusal(_ error: KeelError) -> String {
        let items = (error.details?["problems"]?.arrayValue ?? []).compactMap { item -> String? in
            guard let line = item["line"]?.intValue, let message = item["message"]?.stringValue else { return nil }
            return "line \(line): \(message)"
        }
        guard items.count > 1 else { return error.message }
        let stopped = items.count >= ImportPlan.problemLimit ? " (the check stopped after \(ImportPlan.problemLimit))" : ""
        return "\(items.count) problems\(stopped): " + items.joined(separator: "; ")
    }

    static func read(_ file: String) throws(Failure) -> [UInt8] {
        if file == "-" { return [UInt8](FileHandle.standardInput.readDataToEndOfFile()) }
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure("cannot read \(file): \(FileSystemSupport.errnoText())") }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            throw Failure("cannot read \(file): it is a folder; give the file to import")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw Failure("cannot read \(file): \(FileSystemSupport.errnoText())") }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<n])
        }
    }
}
