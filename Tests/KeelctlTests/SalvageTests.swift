// keelctl salvage, and what comes before it: a log damaged in the middle (a frame after the
// damage records that later saves had been made durable) makes keelctl refuse the folder, naming
// the log offset and salvage; salvage keeps the saves before the damage, says what it dropped,
// and leaves a folder that verifies clean and that a second salvage finds sound. A log copied from
// another store file is not damage: verify and salvage both refuse it (I17).

import Foundation
import Testing

@testable import KeelModel

@Suite("keelctl salvage")
struct SalvageTests {
    /// The frames of a log by the documented layout (Docs/FileFormat.md): start and end of each,
    /// while their salt is the first frame's.
    static func frames(_ log: [UInt8]) -> [(start: Int, end: Int)] {
        func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(log[at + $1]) << (8 * $1) } }
        var out: [(Int, Int)] = []
        var position = 64
        let salt = u32(position + 24)
        while position + 32 <= log.count, u32(position + 24) == salt, u32(position + 8) > 0 {
            let end = position + 32 + u32(position + 8)
            out.append((position, end))
            position = end
        }
        return out
    }

    @Test("a log damaged before durable saves: refused with its offset; salvage keeps the saves before it; then clean")
    func damagedLog() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        // Twenty saves, each made durable by its own fdatasync, all left in the log: the store is
        // dropped without closing it (as a crash leaves it), so nothing is checkpointed.
        do {
            var options = ObjectStoreOptions()
            options.storage.checkpointThresholdBytes = 1 << 30
            let store = try ObjectStore.open(directory: w.file("data"), model: LibraryModel.model, options: options)
            _ = try LibraryModel.fill(store, authors: 20, booksEach: 2)
        }
        let path = w.file("data/Default.keel-wal")
        var log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let frames = Self.frames(log)
        try #require(frames.count >= 20, "the saves' frames are in the log: \(frames.count)")
        let damaged = frames[frames.count / 2]
        log[(damaged.start + damaged.end) / 2] ^= 0x04
        try Data(log).write(to: URL(fileURLWithPath: path))

        let refused = try w.keelctl("verify", "--data", "data")
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("the log is damaged at offset \(damaged.start)"), "\(refused)")
        #expect(refused.stderr.contains("keelctl salvage"), "\(refused)")

        let salvage = try w.keelctl("salvage", "--data", "data")
        #expect(salvage.status == 0, "\(salvage)")
        #expect(salvage.stdout.hasPrefix("Default.keel: the log is damaged at offset \(damaged.start)"), "\(salvage)")
        #expect(salvage.stdout.contains("salvaged 1 store file"), "\(salvage)")

        let verify = try w.keelctl("verify", "--data", "data")
        #expect(verify.status == 0 && verify.stdout.hasPrefix("clean: 1 store file"), "\(verify)")
        // The saves before the damage are there, the later ones are not.
        let export = try w.keelctl("export", "--data", "data", "--entity", "Author")
        let authors = export.stdout.split(separator: "\n").count
        #expect(export.status == 0 && (1..<20).contains(authors), "\(authors) authors: \(export)")

        let again = try w.keelctl("salvage", "--data", "data")
        #expect(again.status == 0 && again.stdout.hasPrefix("sound: no damaged log"), "\(again)")
    }

    @Test("a log copied from another data folder's store file: verify and salvage refuse it, naming both files; the right log back, verify is clean")
    func logOfAnotherStore() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        // Two folders, each left with its saves in the log (dropped without closing, as a crash).
        for name in ["data", "other"] {
            var options = ObjectStoreOptions()
            options.storage.checkpointThresholdBytes = 1 << 30
            let store = try ObjectStore.open(directory: w.file(name), model: LibraryModel.model, options: options)
            _ = try LibraryModel.fill(store, authors: 5, booksEach: 2)
        }
        let own = try Data(contentsOf: URL(fileURLWithPath: w.file("data/Default.keel-wal")))
        try FileManager.default.removeItem(atPath: w.file("data/Default.keel-wal"))
        try FileManager.default.copyItem(atPath: w.file("other/Default.keel-wal"), toPath: w.file("data/Default.keel-wal"))

        for command in ["verify", "salvage"] {
            let refused = try w.keelctl(command, "--data", "data")
            let said = refused.stdout + refused.stderr
            #expect(refused.status == 1, "\(command): \(refused)")
            #expect(said.contains("data/Default.keel-wal belongs to another store file"), "\(command): \(refused)")
            #expect(said.contains("the page file data/Default.keel is store"), "\(command): \(refused)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: w.file("data/Default.keel-wal"))) == Data(contentsOf: URL(fileURLWithPath: w.file("other/Default.keel-wal"))),
                "the copied log is left as it was")

        try own.write(to: URL(fileURLWithPath: w.file("data/Default.keel-wal")))
        let verify = try w.keelctl("verify", "--data", "data")
        #expect(verify.status == 0 && verify.stdout.hasPrefix("clean: 1 store file"), "\(verify)")
        let export = try w.keelctl("export", "--data", "data", "--entity", "Author")
        #expect(export.stdout.split(separator: "\n").count == 5, "\(export)")
    }

    @Test("salvage is offline only: --socket is bad usage")
    func offlineOnly() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        let run = try w.keelctl("salvage", "--socket", "k.sock")
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("salvage works offline only"), "\(run)")
    }
}
