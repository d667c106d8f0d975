import Testing

@testable import KeelStorage

@Suite("B+tree node layout")
struct NodeLayoutTests {
    @Test("varints round-trip at every length boundary and refuse truncated or over-long input")
    func varints() {
        let values: [UInt32] = [0, 1, 0x7F, 0x80, 0x3FFF, 0x4000, 0x1F_FFFF, 0x20_0000, 0x0FFF_FFFF, 0x1000_0000, .max]
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
        defer { buffer.deallocate() }
        for value in values {
            let n = Varint.write(value, to: buffer)
            #expect(n == Varint.size(value))
            var offset = 0
            #expect(Varint.read(buffer, &offset, limit: 8) == value)
            #expect(offset == n)
            var short = 0
            if n > 1 { #expect(Varint.read(buffer, &short, limit: n - 1) == nil) }
        }
        // Six continuation bytes, or a fifth byte above 0x0F, is over-long.
        for (i, byte) in [UInt8](arrayLiteral: 0xFF, 0xFF, 0xFF, 0xFF, 0x10).enumerated() {
            buffer.storeBytes(of: byte, toByteOffset: i, as: UInt8.self)
        }
        var offset = 0
        #expect(Varint.read(buffer, &offset, limit: 8) == nil)
    }

    @Test("the key size limit leaves room for four cells at every page size", arguments: [4096, 8192, 16384, 32768, 65536])
    func limits(pageSize: Int) {
        let maxKey = BTreeLimits.maxKeySize(pageSize: pageSize)
        let maxCell = BTreeLimits.maxCellSize(pageSize: pageSize)
        #expect(maxKey == min(2048, (pageSize - 32) / 4 - 2 - 20))
        #expect(PendingCell.overflowLeafSize(keyLength: maxKey) <= maxCell)
        #expect(PendingCell.branchSize(keyLength: maxKey) <= maxCell)
        #expect(4 * (maxCell + Node.slotSize) <= pageSize - Node.headerSize)
    }

    @Test("removing and replacing cells fragments a page; an insert that needs the space defragments it")
    func defragment() throws {
        let buffer = PageBuffer.zeroed(size: 4096)
        let node = Node(unchecked: buffer, PageNumber(7))
        node.format(leaf: true)
        var expected: [[UInt8]: [UInt8]] = [:]
        var i = 0
        while true {
            let key = numericKey(i)
            let value = testValue(i, count: 50)
            let inserted = try key.withUnsafeBytes { k in
                try value.withUnsafeBytes { v in try node.insert(.leaf(key: k, value: v), at: node.count) }
            }
            guard inserted else { break }
            expected[key] = value
            i += 1
        }
        // Every other cell removed: the space is there but scattered.
        for index in stride(from: node.count - 1, through: 0, by: -2) {
            expected[[UInt8](try node.key(at: index))] = nil
            try node.remove(at: index)
        }
        #expect(node.fragmented > 0)
        let gap = node.contentStart - node.slotEnd
        let big = testValue(999, count: gap + 40)
        let key: [UInt8] = [0]  // sorts before every 8-byte key
        let inserted = try key.withUnsafeBytes { k in
            try big.withUnsafeBytes { v in try node.insert(.leaf(key: k, value: v), at: 0) }
        }
        #expect(inserted)
        expected[key] = big
        #expect(node.fragmented == 0)
        // The page is sound, and every entry is intact.
        let sink = MemoryPageSink()
        let (number, page) = try sink.allocatePage()
        page.pointer.copyMemory(from: buffer.pointer, byteCount: 4096)
        sink.commit()
        #expect(BTree(root: number).verify(in: sink).isEmpty)
        for (key, value) in expected { #expect(try BTree(root: number).get(key, in: sink) == value) }
        #expect(try BTree(root: number).count(in: sink) == expected.count)
    }

    @Test("the tree never writes the pager's header bytes (checksum 0..4, transaction ID 8..16)")
    func pagerBytesUntouched() throws {
        let sink = MemoryPageSink()
        let tree = BTree(root: try BTree.create(in: sink))
        for round in 0..<4 {
            for i in 0..<800 {
                let size = i % 50 == 0 ? 6000 : 70
                try tree.put(key: numericKey(i * 13 % 2000 + round), value: testValue(i, count: size), in: sink)
            }
            for i in 0..<600 { try tree.delete(key: numericKey(i * 7 % 2000), in: sink) }
            sink.commit()
        }
        #expect(sink.pagerByteViolations.isEmpty)
        expectSound([tree], in: sink)
    }
}
