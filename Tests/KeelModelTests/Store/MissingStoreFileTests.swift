// A data folder whose store file was removed or lost is refused, not remade empty: one of the
// model's store files missing beside the others (its objects would silently be gone), the
// primary missing beside the others, a log without its page file. A first open cut short before
// every file was made (the primary records no model yet) still completes.

import KeelStorage
import Testing

@testable import KeelModel

@Suite("Missing store files are refused, not made anew")
struct MissingStoreFileTests {
    /// A closed two-store folder with an employee and a building (one object in each store file).
    static func folder() throws -> StoreFixture {
        let f = try StoreFixture(model: TestModels.company(twoStores: true))
        _ = try f.insert("Employee", ["name": .string("Kim")])
        _ = try f.insert("Building", ["name": .string("North")])
        try f.store.close()
        return f
    }

    @Test("a secondary store file removed: CORRUPT naming it, and nothing is made")
    func secondaryMissing() throws {
        let f = try Self.folder()
        try f.fs.remove("/data/Sites.keel")
        try f.fs.remove("/data/Sites.keel-wal")
        let error = keelError { _ = try ObjectStore.open(directory: f.directory, model: f.model, options: f.options) }
        #expect(error?.code == .corrupt, "\(String(describing: error))")
        #expect(error?.message.contains("lacks Sites.keel") == true, "\(String(describing: error))")
        #expect(!f.fs.fileExists("/data/Sites.keel"), "the refused open made no store file")
    }

    @Test("the primary store file removed: CORRUPT naming it")
    func primaryMissing() throws {
        let f = try Self.folder()
        try f.fs.remove("/data/Default.keel")
        try f.fs.remove("/data/Default.keel-wal")
        let error = keelError { _ = try ObjectStore.open(directory: f.directory, model: f.model, options: f.options) }
        #expect(error?.code == .corrupt, "\(String(describing: error))")
        #expect(error?.message.contains("but not Default.keel") == true, "\(String(describing: error))")
        #expect(!f.fs.fileExists("/data/Default.keel"))
    }

    @Test("a page file removed under a log that holds transactions: CORRUPT (the engine), not a new store standing in")
    func logWithoutPageFile() throws {
        let f = try Self.folder()
        try f.fs.remove("/data/Sites.keel")
        let error = keelError { _ = try ObjectStore.open(directory: f.directory, model: f.model, options: f.options) }
        #expect(error?.code == .corrupt && error?.message.contains("lacks Sites.keel") == true, "\(String(describing: error))")
        #expect(!f.fs.fileExists("/data/Sites.keel"))
        // The engine alone: a store left with a commit in its log (dropped, not closed), its page
        // file removed, is refused; a log of just a header (a crash inside `create`) is made anew.
        let fs = InMemoryFileSystem()
        var options = StoreOptions()
        options.fileSystem = fs
        options.checkpointThresholdBytes = 1 << 30
        do {
            let store = try Store.open(at: "/x/s.keel", options: options)
            try store.write { txn in try txn.openTree("t").put(key: [1], value: [1]) }
        }
        try fs.remove("/x/s.keel")
        do {
            _ = try Store.open(at: "/x/s.keel", options: options)
            Issue.record("the engine made a page file under a log that holds transactions")
        } catch {
            #expect(error.code == .corrupt && error.message.contains("page file is missing"), "\(error)")
        }
        #expect(!fs.fileExists("/x/s.keel"))
        try Store.open(at: "/y/s.keel", options: options).close()
        try fs.remove("/y/s.keel")  // the log keeps only its header after the close's checkpoint
        try Store.open(at: "/y/s.keel", options: options).close()
    }

    @Test("a first open cut short (only the primary, no model recorded yet) completes")
    func firstOpenCutShort() throws {
        let fs = InMemoryFileSystem()
        var options = ObjectStoreOptions()
        options.storage.fileSystem = fs
        try fs.createDirectory("/data")
        try Store.open(at: "/data/Default.keel", options: options.storage).close()
        let store = try ObjectStore.open(directory: "/data", model: TestModels.company(twoStores: true), options: options)
        try store.close()
        #expect(fs.fileExists("/data/Sites.keel"))
    }

    @Test("another model is said before a missing file")
    func otherModelFirst() throws {
        let f = try Self.folder()
        try f.fs.remove("/data/Sites.keel")
        try f.fs.remove("/data/Sites.keel-wal")
        let error = keelError {
            _ = try ObjectStore.open(directory: f.directory, model: TestModels.company(twoStores: true, extraEmployeeAttribute: true), options: f.options)
        }
        #expect(error?.code == .modelMismatch, "\(String(describing: error))")
    }
}

@Suite("verify reports damage that stops a walk, and goes on")
struct VerifyStopsTests {
    @Test("a row that cannot be read is a 'read' fault, not an error; the other entities and the trees are still checked")
    func unreadableRow() throws {
        let f = try StoreFixture()
        _ = try f.insert("Employee", ["name": .string("Kim")])
        _ = try f.insert("Department", ["name": .string("Sales")])
        let employee = f.model.id("Employee")
        let tree = TreeLayout(model: f.model).objects[employee.index]
        // A row whose bytes are no row (as a forged or damaged page would hold), among the others.
        try f.store.stores[0].write { txn in
            try txn.openTree(tree).put(key: KeyEncoding.objectKey(ObjectID(entity: employee, number: 999)), value: [0xFF, 0xFF, 0xFF])
        }
        let faults = try f.store.verify()
        #expect(faults.contains { $0.kind == "read" && $0.message.hasPrefix("reading the Person objects stopped:") }, "\(faults)")
        #expect(faults.count == 1, "the Department and the trees were still checked, and are sound: \(faults)")
    }
}
