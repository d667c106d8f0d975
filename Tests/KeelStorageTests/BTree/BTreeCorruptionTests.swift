import Testing

@testable import KeelStorage

/// Malformed pages (they pass their checksum but were written wrong) must give `.corrupt` errors
/// or verify faults, never a crash or an out-of-bounds access.
@Suite("B+tree on malformed pages")
struct BTreeCorruptionTests {
    /// A two-level-deep tree (long shared-prefix keys make narrow branches) with overflow values,
    /// some compressed, and what the damage cases need to know about it.
    // Built once and never changed afterwards (every case damages a clone), so sharing it
    // between concurrently running cases is safe.
    struct Base: @unchecked Sendable {
        let sink: MemoryPageSink
        let tree: BTree
        let keys: [[UInt8]]
        let leaves: [PageNumber]
        let branches: [PageNumber]
        let rawChainHead: PageNumber
        let packedChainHead: PageNumber
        let overflowLeaf: PageNumber

        static let shared: Base = {
            do { return try Base() } catch { fatalError("cannot build the base tree: \(error)") }
        }()

        init() throws {
            sink = MemoryPageSink()
            tree = BTree(root: try BTree.create(in: sink))
            keys = (0..<700).map { [UInt8](repeating: 0x41, count: 300) + numericKey($0) }
            for (i, key) in keys.enumerated() {
                let value = i % 31 == 5 ? testValue(i, count: 9000, compressible: i % 2 == 0) : testValue(i, count: 60)
                try tree.put(key: key, value: value, in: sink)
            }
            sink.commit()
            var leaves: [PageNumber] = []
            var branches: [PageNumber] = []
            _ = tree.verify(in: sink) { number, type in
                if type == .leaf { leaves.append(number) }
                if type == .branch { branches.append(number) }
            }
            self.leaves = leaves
            self.branches = branches
            // Find one uncompressed and one compressed chain (key 5 is raw: odd; key 5 + 31 is even).
            (rawChainHead, overflowLeaf) = try Base.head(keys[5], tree, sink)
            packedChainHead = try Base.head(keys[36], tree, sink).0
        }

        /// The first overflow page of `key`'s value, and its leaf.
        static func head(_ key: [UInt8], _ tree: BTree, _ sink: MemoryPageSink) throws -> (PageNumber, PageNumber) {
            try key.withBytes { k throws(StorageError) in
                var path = TreePath()
                let leaf = try tree.descend(to: k, in: sink, path: &path)
                let entry = try leaf.leafEntry(at: leaf.leafSearch(k).index)
                return (try OverflowReference.read(leaf.base + entry.valueStart, page: leaf.number).firstPage, leaf.number)
            }
        }
    }

    /// Runs everything a tree offers on a damaged copy; returns the verify faults and the codes
    /// of every error thrown.
    static func exercise(_ tree: BTree, _ sink: MemoryPageSink, keys: [[UInt8]], rounds: Int = 100)
        -> (faults: [VerifyFault], codes: [StorageError.Code])
    {
        var codes: [StorageError.Code] = []
        func attempt(_ body: () throws(StorageError) -> Void) {
            do { try body() } catch { codes.append(error.code) }
        }
        let faults = tree.verify(in: sink)
        attempt { () throws(StorageError) in _ = try tree.count(in: sink) }
        for forward in [true, false] {
            attempt { () throws(StorageError) in
                var cursor = tree.cursor(in: sink.snapshot())
                var valid = forward ? try cursor.seekFirst() : try cursor.seekLast()
                var steps = 0
                while valid && steps < 10_000 {
                    _ = try cursor.value()
                    valid = forward ? try cursor.next() : try cursor.previous()
                    steps += 1
                }
            }
        }
        // Keys spread over the whole tree, so every leaf and branch is searched.
        let spread = stride(from: 0, to: keys.count, by: max(1, keys.count / rounds)).map { keys[$0] }
        for key in spread { attempt { () throws(StorageError) in _ = try tree.get(key, in: sink) } }
        for (i, key) in spread.enumerated() {
            attempt { () throws(StorageError) in try tree.put(key: key + [1], value: testValue(i, count: 200), in: sink) }
        }
        for key in spread { attempt { () throws(StorageError) in try tree.delete(key: key, in: sink) } }
        attempt { () throws(StorageError) in try tree.drop(in: sink) }
        return (faults, codes)
    }

    struct Damage: CustomStringConvertible, Sendable {
        let description: String
        /// False for damage only the verifier can see (keys out of order, a page at the wrong
        /// depth): operations read such a tree without tripping over anything.
        var operationsNotice = true
        let apply: @Sendable (Base, MemoryPageSink) throws -> Void
    }

    static func poke(_ sink: MemoryPageSink, _ page: PageNumber, _ offset: Int, _ bytes: [UInt8]) {
        guard let buffer = sink.rawPage(page) else { return }
        for (i, b) in bytes.enumerated() { buffer.pointer.storeBytes(of: b, toByteOffset: offset + i, as: UInt8.self) }
    }
    static func slot(_ sink: MemoryPageSink, _ page: PageNumber, _ i: Int) -> Int {
        Int(sink.rawPage(page)?.load(UInt16.self, at: 32 + 2 * i) ?? 0)
    }
    static func u32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { [UInt8]($0) } }

    static let damages: [Damage] = [
        Damage(description: "slot offset past the page end") { b, s in poke(s, b.leaves[1], 32, [0xFF, 0xFF]) },
        Damage(description: "slot offset inside the slot array") { b, s in poke(s, b.leaves[1], 34, [10, 0]) },
        Damage(description: "cell count too large for the page") { b, s in poke(s, b.leaves[1], 6, [0xFF, 0xFF]) },
        Damage(description: "content start past the page end") { b, s in poke(s, b.leaves[2], 20, u32(70000)) },
        Damage(description: "fragmented bytes larger than the cell area") { b, s in poke(s, b.leaves[2], 24, u32(0xFFFFFF)) },
        Damage(description: "key length running past the page end") { b, s in
            poke(s, b.leaves[3], slot(s, b.leaves[3], 0), [0xFF, 0xFF, 0x03])
        },
        Damage(description: "over-long varint") { b, s in
            poke(s, b.leaves[3], slot(s, b.leaves[3], 1), [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        },
        Damage(description: "unknown page type") { b, s in poke(s, b.leaves[4], 4, [0x77]) },
        Damage(description: "value tag with reserved bits") { b, s in poke(s, b.leaves[4], slot(s, b.leaves[4], 2) + 2, [3]) },
        Damage(description: "slots out of key order", operationsNotice: false) { b, s in
            let (x, y) = (slot(s, b.leaves[5], 0), slot(s, b.leaves[5], 1))
            poke(s, b.leaves[5], 32, [UInt8(y & 0xFF), UInt8(y >> 8), UInt8(x & 0xFF), UInt8(x >> 8)])
        },
        Damage(description: "two slots pointing at one cell", operationsNotice: false) { b, s in
            let x = slot(s, b.leaves[6], 3)
            poke(s, b.leaves[6], 32 + 8, [UInt8(x & 0xFF), UInt8(x >> 8)])
        },
        Damage(description: "overflow page of the wrong type") { b, s in poke(s, b.rawChainHead, 4, [PageType.leaf.rawValue]) },
        Damage(description: "overflow page with wrong used bytes") { b, s in poke(s, b.rawChainHead, 20, u32(5)) },
        Damage(description: "overflow chain looping to itself") { b, s in poke(s, b.rawChainHead, 16, u32(b.rawChainHead.rawValue)) },
        Damage(description: "overflow chain pointing at a leaf") { b, s in poke(s, b.rawChainHead, 16, u32(b.leaves[0].rawValue)) },
        Damage(description: "damaged LZ4 block") { b, s in
            poke(s, b.packedChainHead, 24, [UInt8](repeating: 0xFF, count: 64))
        },
        Damage(description: "child pointer to the root (a cycle)") { b, s in
            poke(s, b.tree.root, slot(s, b.tree.root, 0), u32(b.tree.root.rawValue))
        },
        Damage(description: "child pointer 0") { b, s in poke(s, b.branches[1], slot(s, b.branches[1], 0), u32(0)) },
        Damage(description: "rightmost child 0") { b, s in poke(s, b.branches[1], 16, u32(0)) },
        Damage(description: "child pointer past the end of the file") { b, s in
            poke(s, b.branches[1], slot(s, b.branches[1], 1), u32(999_999))
        },
        Damage(description: "child pointer to an overflow page") { b, s in
            poke(s, b.branches[1], slot(s, b.branches[1], 1), u32(b.rawChainHead.rawValue))
        },
        Damage(description: "leaf hung at the wrong depth", operationsNotice: false) { b, s in
            poke(s, b.tree.root, slot(s, b.tree.root, 0), u32(b.leaves[7].rawValue))
        },
        Damage(description: "empty non-root leaf") { b, s in poke(s, b.leaves[8], 6, [0, 0]) },
        Damage(description: "branch separator key too long") { b, s in
            poke(s, b.branches[2], slot(s, b.branches[2], 0) + 4, [0xF0, 0x1F])
        },
    ]

    @Test("each kind of malformed page is reported by verify and gives only .corrupt errors", arguments: damages)
    func handPicked(_ damage: Damage) throws {
        let base = Base.shared
        #expect(try treeDepth(base.tree, base.sink) >= 2)
        #expect(base.tree.verify(in: base.sink).isEmpty)
        let sink = base.sink.clone()
        try damage.apply(base, sink)
        let (faults, codes) = Self.exercise(base.tree, sink, keys: base.keys)
        #expect(!faults.isEmpty, "verify found nothing")
        #expect(codes.allSatisfy { $0 == .corrupt }, "codes: \(Set(codes.map(\.rawValue)))")
        if damage.operationsNotice { #expect(!codes.isEmpty, "no operation noticed the damage") }
    }

    @Test("random bytes written over random pages never crash anything")
    func randomDamage() throws {
        let base = Base.shared
        let seed = SeededRandom.seedFromEnvironment()
        print("B+tree random damage: seed \(seed) (replay with KEEL_SEED=\(seed))")
        var rng = SeededRandom(seed: seed)
        let iterations = getEnvironment("KEEL_SLOW_TESTS") == "1" ? 3000 : 60
        var detected = 0
        let pages = base.sink.committed.keys.sorted()
        for _ in 0..<iterations {
            let sink = base.sink.clone()
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                let page = pages[Int(rng.next() % UInt64(pages.count))]
                let count = 1 + Int(rng.next() % 12)
                // Half the time aim at headers and slot arrays, where damage matters most.
                let limit = rng.next() % 2 == 0 ? 96 : sink.pageSize - count
                let offset = 4 + Int(rng.next() % UInt64(limit - 4))
                Self.poke(sink, page, offset, (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            }
            let (faults, _) = Self.exercise(base.tree, sink, keys: base.keys, rounds: 30)
            if !faults.isEmpty { detected += 1 }
        }
        #expect(detected > iterations / 4, "only \(detected) of \(iterations) damaged trees had verify faults")
    }
}
