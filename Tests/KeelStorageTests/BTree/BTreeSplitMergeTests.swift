import Testing

@testable import KeelStorage

@Suite("B+tree splits and merges")
struct BTreeSplitMergeTests {
    @Test("an empty tree is one empty leaf that finds nothing")
    func emptyTree() throws {
        let sink = MemoryPageSink()
        let tree = BTree(root: try BTree.create(in: sink))
        #expect(try tree.get([1, 2, 3], in: sink) == nil)
        #expect(try tree.count(in: sink) == 0)
        #expect(try tree.delete(key: [1], in: sink) == false)
        var cursor = tree.cursor(in: sink)
        #expect(try cursor.seekFirst() == false)
        #expect(try cursor.seekLast() == false)
        #expect(try cursor.seek(to: [0]) == false)
        sink.commit()
        expectSound([tree], in: sink)
        #expect(sink.livePageCount == 1)
    }

    @Test("put, get, replace with smaller, equal and larger values, and the empty key and value")
    func putGetReplace() throws {
        let sink = MemoryPageSink()
        let tree = BTree(root: try BTree.create(in: sink))
        try tree.put(key: [], value: [9], in: sink)
        try tree.put(key: [1], value: [], in: sink)
        try tree.put(key: [1, 0], value: [1, 2, 3, 4], in: sink)
        #expect(try tree.get([], in: sink) == [9])
        #expect(try tree.get([1], in: sink) == [])
        #expect(try tree.get([1, 0], in: sink) == [1, 2, 3, 4])
        try tree.put(key: [1, 0], value: [5], in: sink)
        #expect(try tree.get([1, 0], in: sink) == [5])
        try tree.put(key: [1, 0], value: [6], in: sink)
        #expect(try tree.get([1, 0], in: sink) == [6])
        try tree.put(key: [1, 0], value: Array(repeating: 7, count: 300), in: sink)
        #expect(try tree.get([1, 0], in: sink) == Array(repeating: 7, count: 300))
        #expect(try tree.count(in: sink) == 3)
        sink.commit()
        expectSound([tree], in: sink)
    }

    @Test("random inserts share cells with a sibling before splitting: leaves end up at least 78% full")
    func randomInsertsFillLeaves() throws {
        let sink = MemoryPageSink()
        let tree = BTree(root: try BTree.create(in: sink))
        var random = SeededRandom(seed: 42)
        var keys: Set<[UInt8]> = []
        while keys.count < 30_000 {
            let key = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            guard keys.insert(key).inserted else { continue }
            try tree.put(key: key, value: testValue(keys.count, count: 100), in: sink)
        }
        sink.commit()
        expectSound([tree], in: sink)
        // Each entry takes 16 + 100 bytes, 2 length bytes and a 2-byte slot; a leaf has
        // 4096 - 32 bytes for them. Splitting alone leaves random-order leaves about 69% full.
        let entryBytes = 16 + 100 + 2 + Node.slotSize
        let perFullLeaf = (4096 - Node.headerSize) / entryBytes
        let fill = Double(keys.count) / Double(sink.livePageCount * perFullLeaf)
        #expect(fill >= 0.78, "leaves are \(Int(fill * 100))% full on average (\(sink.livePageCount) pages)")
        var cursor = tree.cursor(in: sink)
        var seen = 0
        var ok = try cursor.seekFirst()
        while ok {
            seen += 1
            ok = try cursor.next()
        }
        #expect(seen == keys.count)
    }

    @Test("a root split keeps the root's page number and makes it a branch (T1)")
    func rootSplitKeepsRoot() throws {
        let sink = MemoryPageSink()
        let root = try BTree.create(in: sink)
        let tree = BTree(root: root)
        var i = 0
        while try Node(sink.page(root), root).isLeaf {
            try tree.put(key: numericKey(i * 7919 % 1000), value: testValue(i, count: 100), in: sink)
            i += 1
        }
        #expect(tree.root == root)
        #expect(try Node(sink.page(root), root).count == 1)
        #expect(sink.livePageCount == 3)
        sink.commit()
        expectSound([tree], in: sink)
        for j in 0..<i { #expect(try tree.get(numericKey(j * 7919 % 1000), in: sink) == testValue(j, count: 100)) }
    }

    @Test("ascending inserts fill pages nearly full; descending ones too", arguments: [false, true])
    func sequentialInsertsFillPages(descending: Bool) throws {
        let sink = MemoryPageSink()
        let tree = BTree(root: try BTree.create(in: sink))
        let n = 5000
        for i in 0..<n {
            try tree.put(key: numericKey(descending ? n - i : i), value: testValue(i, count: 100), in: sink)
        }
        sink.commit()
        expectSound([tree], in: sink)
        // Each cell: 2 varint bytes + 8 key + 100 value + 2 slot = 112 bytes; 4064 usable bytes.
        let minimumLeaves = (n * 112 + 4063) / 4064
        #expect(sink.livePageCount <= minimumLeaves * 105 / 100 + 3, "\(sink.livePageCount) pages for \(minimumLeaves) leaves' worth")
        #expect(try tree.count(in: sink) == n)
    }

    @Test("deleting every key merges everything back into one empty root leaf")
    func deleteAllFreesEverything() throws {
        let sink = MemoryPageSink()
        let tree = BTree(root: try BTree.create(in: sink))
        let n = 3000
        for i in 0..<n { try tree.put(key: numericKey(i * 7919 % n), value: testValue(i, count: 60), in: sink) }
        sink.commit()
        #expect(sink.livePageCount > 40)
        for i in 0..<n { #expect(try tree.delete(key: numericKey(i * 104_729 % n), in: sink)) }
        sink.commit()
        expectSound([tree], in: sink)
        #expect(sink.livePageCount == 1)
        #expect(try Node(sink.page(tree.root), tree.root).isLeaf)
        #expect(try tree.count(in: sink) == 0)
    }

    @Test("deleting 90% of the keys frees pages down to near the live data", arguments: [4096, 16384])
    func deleteMostFreesPages(pageSize: Int) throws {
        let sink = MemoryPageSink(pageSize: pageSize)
        let tree = BTree(root: try BTree.create(in: sink))
        var rng = SeededRandom(seed: 90)
        let keys = (0..<6000).map { _ in (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        for (i, key) in keys.enumerated() { try tree.put(key: key, value: testValue(i, count: 100), in: sink) }
        sink.commit()
        let before = sink.livePageCount
        for key in keys[600...] { try tree.delete(key: key, in: sink) }
        sink.commit()
        expectSound([tree], in: sink)
        // 600 cells of 16 + 100 + 2 + 2 = 120 bytes need this many full pages:
        let minimum = (600 * 120 + pageSize - 33) / (pageSize - 32)
        let after = sink.livePageCount
        // Pages under a quarter full are merged, so at worst about 4× the minimum (plus branches).
        #expect(after <= minimum * 3 + 2, "\(before) pages before, \(after) after, \(minimum) at best")
        #expect(after * 4 <= before, "\(before) pages before, \(after) after, \(minimum) at best")
        print("delete 90% (page size \(pageSize)): \(before) pages before, \(after) after, \(minimum) at best")
        for key in keys[..<600] { #expect(try tree.get(key, in: sink) != nil) }
    }

    @Test("a branch merge and a root collapse happen when a deep tree shrinks")
    func deepTreeShrinks() throws {
        let sink = MemoryPageSink()
        let tree = BTree(root: try BTree.create(in: sink))
        // Long keys make branches fill quickly, so the tree gets several levels.
        let keys = (0..<4000).map { i in numericKey(i) + [UInt8](repeating: UInt8(i % 251), count: 300) }
        for key in keys { try tree.put(key: key, value: [1], in: sink) }
        sink.commit()
        var depth = 0
        var number = tree.root
        while case let node = try Node(sink.page(number), number), !node.isLeaf {
            depth += 1
            number = try node.child(at: 0)
        }
        #expect(depth >= 2)
        for (i, key) in keys.enumerated() where i % 50 != 0 { try tree.delete(key: key, in: sink) }
        sink.commit()
        expectSound([tree], in: sink)
        #expect(try tree.count(in: sink) == 80)
        #expect(sink.livePageCount < 40)
    }

    @Test("too large keys and values are refused with .tooLarge", arguments: [4096, 16384, 65536])
    func tooLarge(pageSize: Int) throws {
        let sink = MemoryPageSink(pageSize: pageSize)
        let tree = BTree(root: try BTree.create(in: sink))
        let limit = BTreeLimits.maxKeySize(pageSize: pageSize)
        try tree.put(key: [UInt8](repeating: 1, count: limit), value: [UInt8](repeating: 2, count: 5000), in: sink)
        #expect(throws: StorageError.self) {
            try tree.put(key: [UInt8](repeating: 1, count: limit + 1), value: [], in: sink)
        }
        do {
            try tree.put(key: [UInt8](repeating: 1, count: limit + 1), value: [], in: sink)
        } catch {
            #expect(error.code == .tooLarge)
        }
        // Every page size fits at least four maximal cells.
        #expect(4 * (BTreeLimits.maxCellSize(pageSize: pageSize) + 2) <= pageSize - 32)
        sink.commit()
        expectSound([tree], in: sink)
    }
}
