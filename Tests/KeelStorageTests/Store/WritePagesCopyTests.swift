// A write transaction's first write to a page copies it into a buffer the transaction owns
// (I5): every copy must be a buffer of its own, never the shared one nor another page's, holding
// exactly the page's bytes; and a transaction of many first writes, deletes across leaf merges
// and shares included, must commit a tree that verifies and reads back as a model says, also
// after close and reopen. (Round cascade7 wrote these for a spare copy buffer allocated one copy
// ahead, since dropped: Docs/Performance.md; they guard any change to how copies are made.)

import Testing

@testable import KeelStorage

private struct Abandon: Error {}

@Suite("Write pages' copies")
struct WritePagesCopyTests {
    @Test("I5: every first write copies into a buffer of its own, holding exactly the page's bytes")
    func copiesAreDistinctAndExact() throws {
        let fs = InMemoryFileSystem()
        let store = try openTestStore(fs) { $0.cacheSizeBytes = 24 * 4096 }
        defer { try? store.close() }
        try store.write { txn in
            let tree = try txn.createTree("t")
            for i in 0..<3_000 { try tree.put(key: numberedKey(i), value: randomBytes(150, seed: UInt64(i))) }
        }
        try store.checkpoint()
        var copied = 0
        #expect(throws: Abandon.self) {
            try store.write { txn in
                let pages = txn.pages
                var originals: [UInt32: [UInt8]] = [:]
                var buffers: [UInt32: PageBuffer] = [:]
                for n in 1..<pages.meta.pageCount {
                    let number = PageNumber(n)
                    let shared = try pages.page(number)
                    guard shared.pageType == .leaf || shared.pageType == .branch else { continue }
                    let original = Array(shared.readOnlyBytes)
                    let copy = try pages.writablePage(number)
                    #expect(copy !== shared, "page \(n): the first write handed out the shared buffer")
                    #expect(Array(copy.readOnlyBytes) == original, "page \(n): the copy differs from the page")
                    // The transaction's own edit: a mark in the page's last byte, which a later
                    // copy into the same buffer would overwrite.
                    copy.store(UInt8(truncatingIfNeeded: n), at: copy.size - 1)
                    originals[n] = Array(original.dropLast()) + [UInt8(truncatingIfNeeded: n)]
                    buffers[n] = copy
                    #expect(try pages.writablePage(number) === copy, "page \(n): a second write copied again")
                    copied += 1
                }
                let distinct = Set(buffers.values.map { ObjectIdentifier($0.storage) })
                #expect(distinct.count == buffers.count, "\(buffers.count) pages copied into \(distinct.count) buffers")
                for (n, expected) in originals {
                    #expect(Array(buffers[n]!.readOnlyBytes) == expected, "page \(n) changed after its copy")  // safe: same keys
                    #expect(pages.dirty[n] === buffers[n], "page \(n): the dirty set holds another buffer")
                }
                throw Abandon()  // the marks are not a valid page: the transaction is dropped
            }
        }
        #expect(copied > 50, "only \(copied) pages copied")
        // Nothing of the abandoned transaction reached the store, and the shared pages are intact.
        try expectVerifies(store, "after the abandoned transaction")
        #expect(try store.read { txn in try txn.tree("t")?.get(numberedKey(2_999)) } == randomBytes(150, seed: 2_999))
    }

    @Test(
        "I5: one transaction of deletes in random order across leaf merges and shares, with puts and a small cache, verifies and reads as its model, also after reopen",
        arguments: [UInt64(7), 1_234])
    func batchedDeletesAcrossMerges(seed: UInt64) throws {
        let fs = InMemoryFileSystem()
        var model: [[UInt8]: [UInt8]] = [:]
        var random = SeededRandom(seed: seed)
        try withVerifiedStore(fs, configure: { $0.cacheSizeBytes = 16 * 4096 }) { store in
            try store.write { txn in
                let tree = try txn.createTree("t")
                let other = try txn.createTree("u")
                for i in 0..<6_000 {
                    let value = randomBytes(40 + Int(random.next() % 260), using: &random)
                    try tree.put(key: numberedKey(i), value: value)
                    try other.put(key: numberedKey(i, prefix: "u"), value: value)
                    model[numberedKey(i)] = value
                }
            }
            try store.checkpoint()
            // Delete 80% of the keys in random order (leaves empty, merge with and borrow from
            // their neighbours), interleaved with puts and with deletes in the second tree.
            var keys = (0..<6_000).map { numberedKey($0) }
            keys.shuffle(using: &random)
            try store.write { txn in
                let tree = try #require(try txn.tree("t"))
                let other = try #require(try txn.tree("u"))
                for (j, key) in keys.prefix(4_800).enumerated() {
                    #expect(try tree.delete(key: key), "key \(key) was not there")
                    model[key] = nil
                    if j % 3 == 0 { _ = try other.delete(key: [UInt8]("u".utf8) + key.dropFirst()) }
                    if j % 10 == 0 {
                        let put = numberedKey(10_000 + j)
                        let value = randomBytes(100, using: &random)
                        try tree.put(key: put, value: value)
                        model[put] = value
                    }
                }
                let faults = try #require(try txn.tree("t")).btree.verify(in: txn.pages)
                #expect(faults.isEmpty, "the tree before its commit: \(faults)")
            }
            try expectVerifies(store, "after the deletes")
            try checkTree(store, model)
        }
        let reopened = try openTestStore(fs) { $0.cacheSizeBytes = 16 * 4096 }
        defer { try? reopened.close() }
        try checkTree(reopened, model)
    }

    private func checkTree(_ store: Store, _ model: [[UInt8]: [UInt8]]) throws {
        try store.read { txn in
            let tree = try #require(try txn.tree("t"))
            #expect(try tree.count() == model.count)
            for (key, value) in model { #expect(try tree.get(key) == value, "key \(key)") }
            for i in stride(from: 0, to: 6_000, by: 7) where model[numberedKey(i)] == nil {
                #expect(try tree.get(numberedKey(i)) == nil, "deleted key \(i) still there")
            }
        }
    }
}
