// A write transaction keeps the branch pages it has read (`WritePages`, a direct-mapped table),
// like a read transaction does: a kept slot must always name the page's current buffer for the
// transaction — its own copy once it wrote the page, a new buffer once it allocated it, nothing
// once it freed it. These tests pin that down directly, then run many puts and deletes (splits,
// merges, freed branch pages reused by later allocations) in one write transaction against a
// dictionary model, reading every key back through the same transaction as they go.

import Testing

@testable import KeelStorage

@Suite("Write transaction pages")
struct WritePagesTests {
    @Test("a kept branch page is the transaction's own copy once written, and gone once freed")
    func keptBranchFollowsWrites() throws {
        try withVerifiedStore { store in
            try store.write { txn in
                let tree = try txn.createTree("t")
                for i in 0..<3_000 { try tree.put(key: numberedKey(i), value: randomBytes(100, seed: UInt64(i))) }
            }
            try store.checkpoint()
            let root = try store.read { txn in try #require(try txn.tree("t")).btree.root }
            struct Rollback: Error {}
            #expect(throws: Rollback.self) {
                try store.write { txn in
                    let pages = txn.pages
                    let committed = try pages.page(root)
                    #expect(committed.pageType == .branch, "the tree has more than one level")
                    #expect(try pages.page(root) === committed, "a branch page read once is kept")
                    let copy = try pages.writablePage(root)
                    #expect(copy !== committed, "a write copies the committed page (I5)")
                    #expect(try pages.page(root) === copy, "after a write the kept slot is the transaction's copy")
                    copy.store(UInt16(0xBEEF), at: 200)
                    #expect(try pages.page(root).load(UInt16.self, at: 200) == 0xBEEF)
                    // Freeing the page empties its slot: a read sees the committed version again,
                    // never the freed copy (a later allocation of the number gets a new buffer).
                    try pages.freePage(root)
                    #expect(try pages.page(root) !== copy, "a freed page is no longer kept")
                    throw Rollback()
                }
            }
            // The rolled-back transaction changed nothing.
            try store.read { txn in
                let tree = try #require(try txn.tree("t"))
                #expect(try tree.count() == 3_000)
                #expect(try tree.get(numberedKey(1_234)) == randomBytes(100, seed: 1_234))
            }
        }
    }

    @Test("puts and deletes in one write transaction read back exactly, through splits, merges and reused pages",
          arguments: [UInt64(1), 2, 3])
    func manyChangesReadBack(seed: UInt64) throws {
        try withVerifiedStore { store in
            var model: [Bytes: Bytes] = [:]
            try store.write { txn in
                let tree = try txn.createTree("t")
                for i in 0..<4_000 {
                    let value = randomBytes(150, seed: UInt64(i))
                    try tree.put(key: numberedKey(i), value: value)
                    model[numberedKey(i)] = value
                }
            }
            try store.checkpoint()
            var random = SeededRandom(seed: seed)
            try store.write { txn in
                let tree = try txn.openTree("t")
                for round in 0..<6 {
                    // Delete most of a range (leaves merge, branch pages are freed), then put new
                    // keys elsewhere (splits allocate, taking freed pages back).
                    let start = Int(random.next() % 3_000)
                    for i in start..<(start + 1_200) where random.next() % 4 != 0 {
                        let key = numberedKey(i)
                        #expect(try tree.delete(key: key) == (model.removeValue(forKey: key) != nil), "round \(round): delete \(i)")
                    }
                    for _ in 0..<900 {
                        let i = Int(random.next() % 20_000)
                        let value = randomBytes(Int(random.next() % 300) + 1, using: &random)
                        try tree.put(key: numberedKey(i, prefix: "n"), value: value)
                        model[numberedKey(i, prefix: "n")] = value
                    }
                    for (key, value) in model { #expect(try tree.get(key) == value, "round \(round): key \(String(decoding: key, as: UTF8.self))") }
                    #expect(try tree.count() == model.count, "round \(round)")
                }
            }
            try store.read { txn in
                let tree = try #require(try txn.tree("t"))
                #expect(try tree.count() == model.count)
                for (key, value) in model { #expect(try tree.get(key) == value) }
            }
        }
    }
}
