// keelctl backup and restore through the binary: a backup restores into an empty folder with the
// same objects, verified; a damaged or cut-short backup is refused and leaves nothing; a folder
// that is not empty is refused; restore is offline only.

import Foundation
import KeelModel
import Testing

@Suite("keelctl backup and restore")
struct BackupRestoreTests {
    @Test("backup, check, restore into an empty folder: the same objects, verified")
    func roundTrip() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        try w.withStore { store in try LibraryModel.fill(store, authors: 20, booksEach: 5, notes: String(repeating: "long notes ", count: 100)) }
        let backup = try w.keelctl("backup", "--data", "data", "nightly.keelbackup")
        #expect(backup.status == 0, "\(backup)")
        #expect(backup.stdout.hasPrefix("backup written to nightly.keelbackup\nbytes: "), "\(backup)")
        let size = try FileManager.default.attributesOfItem(atPath: w.file("nightly.keelbackup"))[.size] as? Int ?? 0
        let pageFile = try FileManager.default.attributesOfItem(atPath: w.file("data/Default.keel"))[.size] as? Int ?? 0
        #expect(size > 0 && size < pageFile / 4, "LZ4-compressed: \(size) bytes for a \(pageFile)-byte page file")
        let again = try w.keelctl("backup", "--data", "data", "nightly.keelbackup")
        #expect(again.status == 1 && again.stderr.contains("already exists"), "\(again)")

        let check = try w.keelctl("restore", "--check", "nightly.keelbackup")
        #expect(check.status == 0, "\(check)")
        #expect(check.stdout.hasPrefix("nightly.keelbackup: a complete backup, every block checked\nstores: Default (4096-byte pages); "), "\(check)")
        #expect(check.stdout.contains("made from model Library (hash \(LibraryModel.model.hash)) at save 20"), "\(check)")

        let restore = try w.keelctl("restore", "--data", "restored", "nightly.keelbackup")
        #expect(restore.status == 0, "\(restore)")
        #expect(restore.stdout.hasPrefix("restored nightly.keelbackup into restored: model Library version 1, verified clean\n"), "\(restore)")
        let original = try w.keelctl("export", "--data", "data")
        let copy = try w.keelctl("export", "--data", "restored")
        #expect(original.status == 0 && copy.status == 0 && copy.stdout == original.stdout, "the same objects under the same IDs")
        try w.withStore("restored") { _ in }

        let twice = try w.keelctl("restore", "--data", "restored", "nightly.keelbackup")
        #expect(twice.status == 1, "\(twice)")
        #expect(twice.stderr.hasPrefix("keelctl: restored is not empty (Default.keel"), "\(twice)")
    }

    @Test("a damaged or cut-short backup is refused, naming the block, and leaves nothing behind")
    func damagedBackup() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        try w.withStore { store in try LibraryModel.fill(store, authors: 50, booksEach: 10) }
        #expect(try w.keelctl("backup", "--data", "data", "b").status == 0)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: w.file("b"))))
        var flipped = bytes
        flipped[bytes.count / 2] ^= 0x01
        try Data(flipped).write(to: URL(fileURLWithPath: w.file("flipped")))
        let check = try w.keelctl("restore", "--check", "flipped")
        #expect(check.status == 1, "\(check)")
        #expect(check.stderr.contains(": checksum mismatch"), "\(check)")
        #expect(check.stderr.hasPrefix("keelctl: flipped: block "), "\(check)")
        let restore = try w.keelctl("restore", "--data", "r1", "flipped")
        #expect(restore.status == 1, "\(restore)")
        let left = try FileManager.default.contentsOfDirectory(atPath: w.file("r1")).filter { $0 != "keeld.lock" }
        #expect(left.isEmpty, "a failed restore leaves nothing: \(left)")

        bytes.removeLast(100)
        try Data(bytes).write(to: URL(fileURLWithPath: w.file("short")))
        let short = try w.keelctl("restore", "--data", "r2", "short")
        #expect(short.status == 1, "\(short)")
        #expect(short.stderr.contains("the file ends inside the block") || short.stderr.contains("without its end block"), "\(short)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.file("r2")).filter { $0 != "keeld.lock" }.isEmpty)

        try w.write("text", "not a backup at all, but long enough to have a header")
        let text = try w.keelctl("restore", "--check", "text")
        #expect(text.status == 1 && text.stderr == "keelctl: text: not a Keel backup (no KEELBACK magic)\n", "\(text)")
    }

    @Test("restore is offline only: --socket is bad usage (exit 2)")
    func restoreOffline() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        let run = try w.keelctl("restore", "--socket", "x.sock", "b")
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("restore works offline only"), "\(run)")
    }
}
