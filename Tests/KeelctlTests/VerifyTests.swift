// keelctl verify on damaged stores: a flipped bit in a page, an index entry removed and an
// inverse broken (the last two injected through the engine, below the object layer — a test-only
// way in, by @testable import) are each found and named; exit 1. A clean store exits 0.

import Foundation
import Testing

@testable import KeelModel
@testable import KeelStorage

@Suite("keelctl verify")
struct VerifyTests {
    /// A closed store of 30 authors with 10 books each, with long notes (many pages).
    static func damaged(_ w: Workspace, _ damage: (ObjectStore) throws -> Void) throws {
        try w.withStore { store in try LibraryModel.fill(store, authors: 30, booksEach: 10, notes: String(repeating: "n", count: 200)) }
        let store = try ObjectStore.open(directory: w.file("data"), model: LibraryModel.model)
        try damage(store)
        try store.close()
    }

    @Test("a clean store: exit 0 and what was checked")
    func clean() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        try Self.damaged(w) { _ in }
        let run = try w.keelctl("verify", "--data", "data")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasPrefix("clean: 1 store file, "), "\(run)")
        #expect(run.stdout.hasSuffix(" pages, 330 objects\n"), "\(run)")
        #expect(run.stderr.isEmpty, "no progress when standard error is not a terminal")
    }

    @Test("a flipped bit in a page is found: the store file and the page are named, exit 1")
    func flippedBit() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        try Self.damaged(w) { _ in }
        let path = w.file("data/Default.keel")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let page = bytes.count / 4096 / 2
        bytes[page * 4096 + 1000] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let run = try w.keelctl("verify", "--data", "data")
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("page (Default.keel, page \(page)"), "\(run)")
        #expect(run.stdout.contains("checksum"), "\(run)")
        #expect(run.stderr.hasPrefix("keelctl: verification found "), "\(run)")
    }

    @Test("an index entry removed is found: the index and the object are named, exit 1")
    func indexEntryRemoved() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        let index = try #require(LibraryModel.book.indexes.first)
        var victim: ObjectID?
        try Self.damaged(w) { store in
            try store.stores[0].write { txn in
                let tree = try #require(try txn.tree(TreeLayout.index(index)))
                var cursor = try tree.cursor()
                #expect(try cursor.seekFirst())
                let key = try cursor.key
                victim = KeyEncoding.objectID(key, at: key.count - KeyEncoding.objectKeySize)
                #expect(try tree.delete(key: key))
            }
        }
        let name = try #require(victim).text(in: LibraryModel.model)
        let run = try w.keelctl("verify", "--data", "data")
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout == "index (Default.keel, tree \(TreeLayout.index(index)), object \(name)): \(name) has no entry in \(TreeLayout.index(index))\n", "\(run)")
        #expect(run.stderr == "keelctl: verification found 1 fault\n", "\(run)")
    }

    @Test("an inverse broken is found: both objects are named, exit 1")
    func inverseBroken() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        let books = LibraryModel.field(LibraryModel.author, "books")
        let links = try #require(TreeLayout(model: LibraryModel.model).links[LibraryModel.author.id.index][books])
        var owner: ObjectID?
        try Self.damaged(w) { store in
            // The author's list loses its first book; the book still names the author.
            try store.stores[0].write { txn in
                let tree = try #require(try txn.tree(links))
                var cursor = try tree.cursor()
                #expect(try cursor.seekFirst())
                let key = try cursor.key
                owner = KeyEncoding.objectID(key)
                #expect(try tree.delete(key: key))
            }
        }
        let author = try #require(owner).text(in: LibraryModel.model)
        let run = try w.keelctl("verify", "--data", "data")
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("inverse (Default.keel, object Book/"), "\(run)")
        #expect(run.stdout.contains(", but \(author).books does not hold Book/"), "\(run)")
    }
}
