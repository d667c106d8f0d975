// A log copied from another store file of the folder (QA: `cp Default.keel-wal Sites.keel-wal`
// after a crash left saves in both logs) is refused when the folder opens — CORRUPT naming the
// log and the page file, the copied log left as it was — instead of being replayed onto the wrong
// page file (I17, Docs/Decisions/0013-log-store-identity.md). Putting the right log back opens the
// folder with every save.

import KeelStorage
import Testing

@testable import KeelModel

@Suite("A log of another store file is refused, never replayed")
struct ForeignLogTests {
    @Test("Default.keel-wal copied over Sites.keel-wal after a crash: CORRUPT naming both files; the right log back, every save is there")
    func copiedLogRefused() throws {
        let f = try StoreFixture(model: TestModels.company(twoStores: true))
        let kim = try f.insert("Employee", ["name": .string("Kim")])
        let north = try f.insert("Building", ["name": .string("North")])
        let memory = try #require(f.fs as? InMemoryFileSystem)
        // What a crash (kill -9) leaves: each save still in its store file's log.
        var files: [String: [UInt8]] = [:]
        for path in memory.paths { files[path] = memory.contents(of: path) }
        try f.store.close()
        let sitesLog = try #require(files["/data/Sites.keel-wal"])
        let defaultLog = try #require(files["/data/Default.keel-wal"])

        var copied = files
        copied["/data/Sites.keel-wal"] = defaultLog
        let fs = InMemoryFileSystem(files: copied)
        var options = f.options
        options.storage.fileSystem = fs
        let error = keelError { _ = try ObjectStore.open(directory: f.directory, model: f.model, options: options) }
        #expect(error?.code == .corrupt, "\(String(describing: error))")
        #expect(error?.message.contains("/data/Sites.keel-wal belongs to another store file") == true, "\(String(describing: error))")
        #expect(error?.message.contains("the page file /data/Sites.keel ") == true, "\(String(describing: error))")
        #expect(fs.contents(of: "/data/Sites.keel-wal") == defaultLog, "the copied log is left as it was")
        #expect(fs.contents(of: "/data/Sites.keel") == files["/data/Sites.keel"], "nothing was replayed onto the page file")

        // The matching pair back: both saves are there.
        fs.setContents(sitesLog, of: "/data/Sites.keel-wal")
        let store = try ObjectStore.open(directory: f.directory, model: f.model, options: options)
        defer { try? store.close() }
        let snapshot = try store.snapshot()
        defer { snapshot.close() }
        #expect(try snapshot.object(kim) != nil && snapshot.object(north) != nil)
        #expect(try store.verify().isEmpty)
    }
}
