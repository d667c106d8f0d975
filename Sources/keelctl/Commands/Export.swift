// keelctl export: every object (or those of one entity and its sub-entities) as JSON lines that
// `keelctl import` reads back (KeelModel/Transfer/ExportFormat.swift).

import ArgumentParser
import Foundation
import KeelModel
import KeelStorage
import Synchronization

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Writes every object as JSON lines, to standard output or --out; `keelctl import` reads them back.",
        discussion: """
            One object per line, entity by entity in the model's order, in ID order: "$id" (the key an \
            import finds it by), "$entity", then every stored property, relationships as IDs. \
            Importing the file into a fresh store gives the same objects and relationships under new \
            IDs. With --entity, only that entity and its sub-entities are written; their \
            relationships to objects left out then name keys that an import of the file alone \
            cannot find. The objects come from one snapshot: offline nothing else writes to the held             folder; online every FETCH reads the connection's context, whose snapshot is taken at the             first one (a COMPACT meanwhile cuts it off, and the export fails rather than mix states).
            """)

    @OptionGroup var location: Location

    @Option(help: ArgumentHelp("Only this entity and its sub-entities.", valueName: "name"))
    var entity: String?

    @Option(help: ArgumentHelp("Write to this file (as FILE.partial, renamed once complete) instead of standard output.", valueName: "file"))
    var out: String?

    func run() async throws {
        let bar = ProgressBar()
        let writer = try LineWriter(path: out)
        let entity = self.entity
        let count: Int
        do {
            count = try await location.run(reading: true) { backend in
                let entities = try ExportFormat.entities(entity, in: backend.model)
                var total = 0
                for e in entities { total += try await backend.count(Self.request(e)) }
                let model = backend.model
                let done = Atomic<Int>(0)
                let all = total
                try await bar.during("exporting", ticking: false) { () throws(KeelError) in
                    for e in entities {
                        try await backend.fetch(Self.request(e)) { (row) throws(KeelError) in
                            try writer.write(ExportFormat.line(row, model: model).serialized())
                            let n = done.add(1, ordering: .relaxed).newValue
                            if n % 1000 == 0 { bar.report(WorkProgress(task: "exporting", done: UInt64(n), total: UInt64(all))) }
                        }
                    }
                    let n = UInt64(done.load(ordering: .relaxed))
                    bar.report(WorkProgress(task: "exporting", done: n, total: n))
                }
                return done.load(ordering: .relaxed)
            }
            try writer.finish()
        } catch {
            writer.abandon()
            throw error
        }
        if let out {
            let summary = "exported \(count) object\(count == 1 ? "" : "s") to \(out)"
            // Written in place (`--out /dev/stdout`, a pipe): the summary must not join the lines.
            if writer.writesInPlace { FileHandle.standardError.write(Data((summary + "\n").utf8)) } else { print(summary) }
        }
    }

    /// The FETCH of one concrete entity's objects, in ID order.
    static func request(_ entity: Entity) -> JSON {
        ["entity": .string(entity.name), "includeSubentities": false]
    }
}

/// Lines to standard output, or to a file: a regular file (or a new one) is written as
/// `PATH.partial` and renamed to PATH at `finish()`, so PATH never holds half an export — through a
/// symbolic link, beside the file it names, so the link stays a link; anything else that exists
/// at PATH (a device, a named pipe, anything under /dev or /proc) is written in place, since
/// renaming a file over it would replace it; `-` and `/dev/stdout` are standard output. Buffered; safe to call from any thread (the fetch's rows arrive on
/// the store's thread).
final class LineWriter: Sendable {
    /// Where the lines go: nil for standard output.
    private let path: String?
    /// Written as `path.partial`, renamed at `finish()`.
    private let replacesFile: Bool
    /// The lines go straight to an existing device or pipe given as the path.
    var writesInPlace: Bool { path != nil && !replacesFile }
    private let descriptor: Int32
    /// Guards the bytes not yet written.
    private let buffer = Mutex<[UInt8]>([])

    init(path given: String?) throws(Failure) {
        guard let given, !["-", "/dev/stdout"].contains(given) else {
            // Standard output itself, not a new open of it: opened again, a file it is
            // redirected to (`>> all.jsonl`) would be written from its start, or renamed over.
            path = given == nil ? nil : "standard output"
            replacesFile = false
            descriptor = STDOUT_FILENO
            return
        }
        // An existing path is judged by what it names (a link's target); a dangling link or a
        // new name is a new regular file. Under /dev and /proc the path is the thing itself
        // (`/dev/fd/N`, `/proc/self/fd/N` name open descriptors): written in place, never
        // resolved to the file behind it and renamed over.
        var target = given
        let special = given.hasPrefix("/dev/") || given.hasPrefix("/proc/")
        if special {
            // kept as given
        } else if let resolved = realpath(given, nil) {
            target = String(cString: resolved)
            free(resolved)
        } else if let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: given) {
            // A link to a file not made yet: the export makes it where the link points.
            let folder = (given as NSString).deletingLastPathComponent
            target = destination.hasPrefix("/") || folder.isEmpty ? destination : folder + "/" + destination
        }
        var info = stat()
        let exists = stat(target, &info) == 0
        if exists, info.st_mode & S_IFMT == S_IFDIR {
            throw Failure("cannot write \(given): it is a folder; give a file to write the export to")
        }
        let regular = !special && (!exists || info.st_mode & S_IFMT == S_IFREG)
        let fd = regular
            ? open(target + ".partial", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            : open(target, O_WRONLY | O_APPEND | O_CLOEXEC)  // `/dev/fd/1` of a `>> file`: after what it holds
        guard fd >= 0 else { throw Failure("cannot write \(regular ? target + ".partial" : target): \(FileSystemSupport.errnoText())") }
        path = target
        replacesFile = regular
        descriptor = fd
    }

    func write(_ line: String) throws(KeelError) {
        let full = buffer.withLock { bytes -> [UInt8]? in
            bytes.append(contentsOf: line.utf8)
            bytes.append(0x0A)
            guard bytes.count >= 1 << 20 else { return nil }
            defer { bytes.removeAll(keepingCapacity: true) }
            return bytes
        }
        if let full { try flush(full) }
    }

    private func flush(_ bytes: [UInt8]) throws(KeelError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw KeelError(.io, "cannot write \(path ?? "standard output"): \(FileSystemSupport.errnoText())") }
            done += n
        }
    }

    /// Writes what is buffered; for a file, syncs it and renames it into place.
    func finish() throws(Failure) {
        let rest = buffer.withLock { bytes in defer { bytes = [] }; return bytes }
        do throws(KeelError) {
            try flush(rest)
        } catch {
            throw Failure(error)
        }
        guard let path, descriptor != STDOUT_FILENO else { return }
        guard replacesFile else {
            // A device or a pipe: written through; fsync means nothing there (a pipe refuses it).
            guard close(descriptor) == 0 else { throw Failure("cannot complete \(path): \(FileSystemSupport.errnoText())") }
            return
        }
        guard fsync(descriptor) == 0, close(descriptor) == 0, rename(path + ".partial", path) == 0 else {
            throw Failure("cannot complete \(path): \(FileSystemSupport.errnoText())")
        }
    }

    /// Drops a file being written (what went to a device or a pipe is gone already).
    func abandon() {
        guard let path, descriptor != STDOUT_FILENO else { return }
        close(descriptor)
        if replacesFile { unlink(path + ".partial") }
    }
}
