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

    @Test("a search key orders as Node.compare: keys of 0–40 bytes sharing prefixes, at the 8- and 16-byte edges")
    func searchKeyOrder() {
        var rng = SeededRandom(seed: 0x5EA7C4)
        // Few byte values (0 among them: a zero after a shorter key's end), long shared prefixes.
        let alphabet: [UInt8] = [0, 1, 0x7F, 0x80, 0xFF]
        var keys: [[UInt8]] = [[], [0], [0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0], [UInt8](repeating: 0xFF, count: 16),
            [UInt8](repeating: 0xFF, count: 17), [UInt8](repeating: 0, count: 16), [UInt8](repeating: 0, count: 17)]
        for _ in 0..<400 {
            var key: [UInt8] = []
            if let base = keys.randomElement(using: &rng), Bool.random(using: &rng) {
                key = Array(base.prefix(Int.random(in: 0...base.count, using: &rng)))
            }
            for _ in 0..<Int.random(in: 0...(key.count < 20 ? 20 : 4), using: &rng) { key.append(alphabet.randomElement(using: &rng)!) }
            keys.append(key)
        }
        for a in keys {
            a.withUnsafeBytes { pa in
                let probe = SearchKey(pa)
                for b in keys {
                    b.withUnsafeBytes { pb in
                        let expected = Node.compare(pa, pb).signum()
                        let got = pb.baseAddress.map { probe.compare($0, pb.count).signum() }
                        #expect(got == nil && pb.count == 0 || got == expected, "\(a) against \(b)")
                    }
                }
            }
        }
    }

    @Test("leaf and branch searches give a scan's answers for cells of every header size (1- and 2-byte lengths and tags, overflow values)")
    func searchesAgainstScan() throws {
        var rng = SeededRandom(seed: 0x5CA7)
        for round in 0..<40 {
            // Keys of 0–200 bytes (a length of 128 or more takes a 2-byte varint), sorted and distinct.
            var keys = Set<[UInt8]>()
            let shared = (0..<Int.random(in: 0...12, using: &rng)).map { _ in UInt8.random(in: 0...2, using: &rng) }
            while keys.count < 24 {
                let long = round % 3 == 0 && Bool.random(using: &rng)
                let length = long ? Int.random(in: 120...200, using: &rng) : Int.random(in: 0...20, using: &rng)
                var key = Array(shared.prefix(length))
                while key.count < length { key.append(UInt8.random(in: 0...3, using: &rng)) }
                keys.insert(key)
            }
            let sorted = keys.sorted { keyOrder($0, $1) < 0 }
            let leaf = Node(unchecked: PageBuffer.zeroed(size: 16384), PageNumber(3))
            leaf.format(leaf: true)
            let branch = Node(unchecked: PageBuffer.zeroed(size: 16384), PageNumber(4))
            branch.format(leaf: false, rightmost: PageNumber(99))
            for (i, key) in sorted.enumerated() {
                // Values of 0–40 bytes (a 1-byte tag), 64–200 (a 2-byte tag), or an overflow reference.
                let value = testValue(i, count: Bool.random(using: &rng) ? Int.random(in: 64...200, using: &rng) : Int.random(in: 0...40, using: &rng))
                let inserted = try key.withBytes { (k) throws(StorageError) -> Bool in
                    if i % 7 == 3 {
                        let reference = OverflowReference(valueLength: 5000, storedLength: 5000, firstPage: PageNumber(9), isCompressed: false)
                        return try leaf.insert(.leafOverflow(key: k, reference: reference), at: i)
                    }
                    return try value.withBytes { (v) throws(StorageError) -> Bool in try leaf.insert(.leaf(key: k, value: v), at: i) }
                }
                let separated = try key.withBytes { (k) throws(StorageError) -> Bool in
                    try branch.insert(.branch(child: PageNumber(UInt32(100 + i)), key: k), at: i)
                }
                #expect(inserted && separated)
            }
            // Probes: every key, every key one byte longer or shorter, and random ones.
            var probes = sorted
            for key in sorted {
                probes.append(key + [0])
                probes.append(key + [UInt8.random(in: 0...255, using: &rng)])
                if !key.isEmpty { probes.append(Array(key.dropLast())) }
            }
            for _ in 0..<50 { probes.append((0..<Int.random(in: 0...24, using: &rng)).map { _ in UInt8.random(in: 0...3, using: &rng) }) }
            for probe in probes {
                let below = sorted.filter { keyOrder($0, probe) < 0 }.count
                let atOrBelow = sorted.filter { keyOrder($0, probe) <= 0 }.count
                let from = Int.random(in: 0...below, using: &rng)
                let (index, found, position) = try probe.withBytes { (p) throws(StorageError) in
                    let (index, found) = try leaf.leafSearch(p, from: from)
                    return (index, found, try branch.childPosition(for: p, from: min(from, atOrBelow)))
                }
                #expect(index == below && found == (atOrBelow > below), "leaf, \(probe)")
                #expect(position == atOrBelow, "branch, \(probe)")
            }
        }
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

/// `Node.compare` of two arrays.
private func keyOrder(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in Node.compare(pa, pb) } }
}
