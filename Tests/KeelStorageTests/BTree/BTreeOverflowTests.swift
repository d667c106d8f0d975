import Testing

@testable import KeelStorage

@Suite("B+tree overflow values")
struct BTreeOverflowTests {
    @Test("values of every awkward size round-trip, inline or in overflow chains",
          arguments: [4096, 16384, 65536])
    func roundTrip(pageSize: Int) throws {
        let sink = MemoryPageSink(pageSize: pageSize)
        let tree = BTree(root: try BTree.create(in: sink))
        let inlineMax = BTreeLimits.maxCellSize(pageSize: pageSize) - 2 - 8 - 1  // 8-byte key, 1-byte key varint
        let capacity = pageSize - 24
        let sizes = [0, 1, 127, 128, inlineMax - 1, inlineMax, inlineMax + 1, capacity - 1, capacity, capacity + 1,
                     2 * capacity, 2 * capacity + 7, 5 * capacity - 3]
        for (i, size) in sizes.enumerated() {
            try tree.put(key: numericKey(i), value: testValue(i, count: size), in: sink)
        }
        sink.commit()
        expectSound([tree], in: sink)
        for (i, size) in sizes.enumerated() {
            #expect(try tree.get(numericKey(i), in: sink) == testValue(i, count: size), "size \(size)")
            let viaClosure = try tree.withValue(forKey: numericKey(i), in: sink.snapshot()) { $0.count }
            #expect(viaClosure == size)
        }
        // Cursor reads of overflow values.
        var cursor = tree.cursor(in: sink.snapshot())
        var valid = try cursor.seekFirst()
        var i = 0
        while valid {
            #expect(try cursor.value() == testValue(i, count: sizes[i]))
            i += 1
            valid = try cursor.next()
        }
        #expect(i == sizes.count)
    }

    @Test("compressible overflow values take fewer pages; incompressible ones are stored raw")
    func compression() throws {
        let plain = MemoryPageSink()
        let packed = MemoryPageSink()
        let a = BTree(root: try BTree.create(in: plain))
        let b = BTree(root: try BTree.create(in: packed))
        let random = testValue(1, count: 100_000)
        let repetitive = testValue(1, count: 100_000, compressible: true)
        try a.put(key: [1], value: random, in: plain)
        try b.put(key: [1], value: repetitive, in: packed)
        plain.commit()
        packed.commit()
        #expect(plain.livePageCount == 1 + (100_000 + 4071) / 4072)
        #expect(packed.livePageCount < 6, "\(packed.livePageCount) pages")
        #expect(try b.get([1], in: packed) == repetitive)
        #expect(try a.get([1], in: plain) == random)
        expectSound([a], in: plain)
        expectSound([b], in: packed)
    }

    @Test("replacing and deleting overflow values frees their chains")
    func chainsFreed() throws {
        let sink = MemoryPageSink()
        let tree = BTree(root: try BTree.create(in: sink))
        try tree.put(key: [1], value: testValue(1, count: 50_000), in: sink)
        try tree.put(key: [2], value: [7], in: sink)
        sink.commit()
        let withChain = sink.livePageCount
        #expect(withChain > 10)
        try tree.put(key: [1], value: [1, 2, 3], in: sink)  // overflow → inline
        #expect(sink.livePageCount == 1)
        try tree.put(key: [2], value: testValue(2, count: 9000), in: sink)  // inline → overflow
        try tree.put(key: [2], value: testValue(3, count: 20_000), in: sink)  // overflow → overflow
        #expect(sink.livePageCount == 1 + 5)
        #expect(try tree.get([2], in: sink) == testValue(3, count: 20_000))
        sink.commit()
        expectSound([tree], in: sink)
        #expect(try tree.delete(key: [2], in: sink))
        sink.commit()
        #expect(sink.livePageCount == 1)
        expectSound([tree], in: sink)
    }

    @Test("a 16 MiB value round-trips", .enabled(if: getEnvironment("KEEL_SLOW_TESTS") == "1"))
    func hugeValue() throws {
        let sink = MemoryPageSink(pageSize: 65536)
        let tree = BTree(root: try BTree.create(in: sink))
        let value = testValue(9, count: 16 << 20, compressible: true)
        try tree.put(key: [1], value: value, in: sink)
        #expect(try tree.get([1], in: sink) == value)
        try tree.drop(in: sink)
        #expect(sink.livePageCount == 0)
    }
}
