import Testing

@testable import KeelStorage

@Suite("B+tree cursors and range scans")
struct BTreeCursorTests {
    /// A tree with keys 0, 2, 4, … (numeric keys) over several levels.
    func evenTree(_ n: Int, pageSize: Int = 4096) throws -> (BTree, MemoryPageSink) {
        let sink = MemoryPageSink(pageSize: pageSize)
        let tree = BTree(root: try BTree.create(in: sink))
        for i in 0..<n { try tree.put(key: numericKey(2 * i), value: testValue(i, count: 40), in: sink) }
        sink.commit()
        return (tree, sink)
    }

    @Test("walks forward and backward over every entry, across leaves")
    func fullWalks() throws {
        let (tree, sink) = try evenTree(3000)
        #expect(try treeDepth(tree, sink) >= 1)
        var cursor = tree.cursor(in: sink.snapshot())
        var i = 0
        var valid = try cursor.seekFirst()
        while valid {
            #expect(try cursor.key == numericKey(2 * i))
            #expect(try cursor.value() == testValue(i, count: 40))
            i += 1
            valid = try cursor.next()
        }
        #expect(i == 3000)
        #expect(try cursor.next() == false)
        valid = try cursor.seekLast()
        while valid {
            i -= 1
            #expect(try cursor.key == numericKey(2 * i))
            valid = try cursor.previous()
        }
        #expect(i == 0)
    }

    @Test("seek lands on the first key ≥ the target, or nowhere past the end")
    func seekSemantics() throws {
        let (tree, sink) = try evenTree(1000)
        var cursor = tree.cursor(in: sink)
        #expect(try cursor.seek(to: numericKey(500)))
        #expect(try cursor.key == numericKey(500))
        #expect(try cursor.seek(to: numericKey(501)))
        #expect(try cursor.key == numericKey(502))
        #expect(try cursor.seek(to: []))
        #expect(try cursor.key == numericKey(0))
        #expect(try cursor.seek(to: numericKey(1998)))
        #expect(try cursor.seek(to: numericKey(1999)) == false)
        #expect(cursor.isValid == false)
        #expect(try cursor.previous() == false)
        // From the last entry back one, and forward one past a leaf boundary in a zero-copy read.
        try cursor.seek(to: numericKey(1998))
        #expect(try cursor.previous())
        #expect(try cursor.withKey { [UInt8]($0) } == numericKey(1996))
    }

    @Test("range scans honour inclusive and exclusive bounds in both directions")
    func rangeBounds() throws {
        let (tree, sink) = try evenTree(200)
        func scan(_ lower: KeyBound?, _ upper: KeyBound?, reverse: Bool) throws -> [Int] {
            var out: [Int] = []
            try tree.forEach(from: lower, to: upper, reverse: reverse, in: sink) { key, _ in
                out.append(Int(key.loadUnaligned(as: UInt64.self).bigEndian))
                return true
            }
            return out
        }
        #expect(try scan(.inclusive(numericKey(10)), .inclusive(numericKey(20)), reverse: false) == [10, 12, 14, 16, 18, 20])
        #expect(try scan(.exclusive(numericKey(10)), .exclusive(numericKey(20)), reverse: false) == [12, 14, 16, 18])
        #expect(try scan(.inclusive(numericKey(10)), .inclusive(numericKey(20)), reverse: true) == [20, 18, 16, 14, 12, 10])
        #expect(try scan(.exclusive(numericKey(10)), .exclusive(numericKey(20)), reverse: true) == [18, 16, 14, 12])
        #expect(try scan(.inclusive(numericKey(11)), .inclusive(numericKey(15)), reverse: true) == [14, 12])
        #expect(try scan(nil, .exclusive(numericKey(4)), reverse: false) == [0, 2])
        #expect(try scan(.inclusive(numericKey(394)), nil, reverse: false) == [394, 396, 398])
        #expect(try scan(.inclusive(numericKey(395)), nil, reverse: true) == Array(stride(from: 398, through: 396, by: -2)))
        #expect(try scan(nil, .inclusive(numericKey(5000)), reverse: true).count == 200)
        #expect(try scan(.inclusive(numericKey(20)), .inclusive(numericKey(10)), reverse: false) == [])
    }

    @Test("a cursor stays usable while it deletes every entry it passes (scan and delete)",
          arguments: [false, true])
    func deleteDuringScan(reverse: Bool) throws {
        let (tree, sink) = try evenTree(2500)
        var cursor = tree.cursor(in: sink)
        var valid = reverse ? try cursor.seekLast() : try cursor.seekFirst()
        var visited = 0
        while valid {
            let key = try cursor.key
            #expect(key == numericKey(reverse ? 2 * (2499 - visited) : 2 * visited))
            if visited % 3 != 0 { try tree.delete(key: key, in: sink) }
            visited += 1
            valid = reverse ? try cursor.previous() : try cursor.next()
        }
        #expect(visited == 2500)
        sink.commit()
        expectSound([tree], in: sink)
        #expect(try tree.count(in: sink) == (2500 + 2) / 3)
    }

    @Test("forEach on a write transaction may delete the entry it is given")
    func forEachDeleting() throws {
        let (tree, sink) = try evenTree(2000)
        var seen = 0
        try tree.forEach(from: .inclusive(numericKey(1000)), in: sink) { key, _ throws(StorageError) in
            seen += 1
            try tree.delete(key: key, in: sink)
            return true
        }
        #expect(seen == 1500)
        #expect(try tree.count(in: sink) == 500)
        sink.commit()
        expectSound([tree], in: sink)
    }

    @Test("entries inserted ahead of a cursor during a scan are visited, those behind are not")
    func insertDuringScan() throws {
        let (tree, sink) = try evenTree(500)
        var cursor = tree.cursor(in: sink)
        var valid = try cursor.seekFirst()
        var keys: [[UInt8]] = []
        while valid {
            let key = try cursor.key
            keys.append(key)
            let n = Int(key.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self).bigEndian })
            if n % 2 == 0 && n < 998 {
                try tree.put(key: numericKey(n + 1), value: [1], in: sink)  // ahead: odd keys
                if n > 0 { try tree.put(key: numericKey(n - 1) + [0], value: [2], in: sink) }  // behind
            }
            valid = try cursor.next()
        }
        #expect(keys == (0..<999).map { numericKey($0) })
        sink.commit()
        expectSound([tree], in: sink)
    }

    @Test("when every entry from the cursor on is deleted, next stops and previous goes to the last entry")
    func everythingAheadDeleted() throws {
        let (tree, sink) = try evenTree(300)
        var cursor = tree.cursor(in: sink)
        try cursor.seek(to: numericKey(400))
        for i in 200..<300 { try tree.delete(key: numericKey(2 * i), in: sink) }
        var copy = cursor
        #expect(try copy.next() == false)
        #expect(try cursor.previous())
        #expect(try cursor.key == numericKey(398))
        var reader = tree.cursor(in: sink)
        try reader.seek(to: numericKey(396))
        for i in 198..<200 { try tree.delete(key: numericKey(2 * i), in: sink) }
        #expect(throws: StorageError.self) { try reader.value() }
    }
}
