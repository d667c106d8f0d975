import Testing

@testable import KeelStorage

/// `seekForward(to:)` against `seek(to:)`: the same entry (or none) for every target, whether the
/// target is in the current leaf, a neighbouring one, far ahead, behind, or absent. `walk`
/// against `withEntry` + `next()`: the same entries, and the cursor left on the same entry.
@Suite("B+tree cursors: forward seeks and leaf walks")
struct BTreeCursorForwardTests {
    /// A tree with keys 0, 3, 6, … (numeric keys, values of `valueSize` bytes).
    func tree(_ n: Int, valueSize: Int, pageSize: Int = 4096) throws -> (BTree, MemoryPageSink) {
        let sink = MemoryPageSink(pageSize: pageSize)
        let tree = BTree(root: try BTree.create(in: sink))
        for i in 0..<n { try tree.put(key: numericKey(3 * i), value: testValue(i, count: valueSize), in: sink) }
        sink.commit()
        return (tree, sink)
    }

    /// Where a cursor stands: its key, or nil when invalid.
    func position<S: PageSource>(_ cursor: inout BTreeCursor<S>) throws -> [UInt8]? {
        cursor.isValid ? try cursor.key : nil
    }

    @Test(
        "random ascending targets land where a seek from the root lands (differential)",
        arguments: [(1, 40, 4096), (200, 40, 4096), (5000, 40, 1024), (5000, 400, 4096), (20000, 8, 1024)])
    func differential(count: Int, valueSize: Int, pageSize: Int) throws {
        let (tree, sink) = try tree(count, valueSize: valueSize, pageSize: pageSize)
        let snapshot = sink.snapshot()
        let seed = SeededRandom.seedFromEnvironment()
        print("seekForward differential, \(count) keys: seed \(seed) (replay with KEEL_SEED=\(seed))")
        var rng = SeededRandom(seed: seed)
        let depth = try treeDepth(tree, snapshot)
        // Small pages: the big trees have several branch levels for the cursor to climb.
        #expect(pageSize > 1024 || depth >= 2)
        for round in 0..<20 {
            // Steps from 0 (the same key again) to far jumps; absent keys in between; a few
            // targets behind the cursor, which must fall back to a seek.
            var forward = tree.cursor(in: snapshot)
            var target = Int.random(in: 0...(3 * count / 4 + 1), using: &rng)
            for _ in 0..<200 {
                let key = numericKey(target)
                var reference = tree.cursor(in: snapshot)
                try reference.seek(to: key)
                let moved = try forward.seekForward(to: key)
                #expect(moved == reference.isValid, "round \(round), target \(target)")
                #expect(try position(&forward) == position(&reference), "round \(round), target \(target)")
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: target += 0
                case 1...5: target += Int.random(in: 1...6, using: &rng)
                case 6, 7: target += Int.random(in: 1...600, using: &rng)
                case 8: target += Int.random(in: 1...(3 * count + 10), using: &rng)
                default: target = max(0, target - Int.random(in: 1...300, using: &rng))
                }
            }
        }
    }

    @Test("the cursor moves on normally after a forward seek, both ways")
    func movesAfterward() throws {
        let (tree, sink) = try tree(3000, valueSize: 40)
        var cursor = tree.cursor(in: sink.snapshot())
        #expect(try cursor.seekForward(to: numericKey(30)))
        #expect(try cursor.seekForward(to: numericKey(4000)))
        #expect(try cursor.key == numericKey(4002))
        #expect(try cursor.next())
        #expect(try cursor.key == numericKey(4005))
        #expect(try cursor.previous())
        #expect(try cursor.previous())
        #expect(try cursor.key == numericKey(3999))
        #expect(try cursor.value() == testValue(1333, count: 40))
        // Past the last key: invalid; the next forward seek starts from the root again.
        #expect(try cursor.seekForward(to: numericKey(9000)) == false)
        #expect(cursor.isValid == false)
        #expect(try cursor.seekForward(to: numericKey(8997)))
        #expect(try cursor.key == numericKey(8997))
    }

    @Test("in a write transaction a forward seek after a change sees the changed tree")
    func afterChanges() throws {
        let (tree, sink) = try tree(3000, valueSize: 40)
        var cursor = tree.cursor(in: sink)
        #expect(try cursor.seekForward(to: numericKey(300)))
        // Delete what lies ahead (a leaf or more) and add a key in the middle of the gap.
        for i in 101..<400 { try tree.delete(key: numericKey(3 * i), in: sink) }
        try tree.put(key: numericKey(700), value: [7], in: sink)
        #expect(try cursor.seekForward(to: numericKey(301)))
        #expect(try cursor.key == numericKey(700))
        #expect(try cursor.value() == [7])
        #expect(try cursor.seekForward(to: numericKey(701)))
        #expect(try cursor.key == numericKey(1200))
        sink.commit()
        expectSound([tree], in: sink)
    }

    @Test("through the store's Cursor, in a read and in a write transaction")
    func storeCursor() throws {
        let store = try openTestStore(InMemoryFileSystem())
        defer { try? store.close() }
        try store.write { txn in
            let tree = try txn.createTree("t")
            for i in 0..<2000 { try tree.put(key: numericKey(5 * i), value: numericKey(i)) }
        }
        try store.read { txn in
            var cursor = try #require(try txn.tree("t")).cursor()
            var found: [Int] = []
            for target in stride(from: 0, to: 10_100, by: 7) {  // the last key is 9,995
                guard try cursor.seekForward(to: numericKey(target)) else { break }
                found.append(Int(try cursor.withValue { $0.loadUnaligned(as: UInt64.self).bigEndian }))
            }
            #expect(found == stride(from: 0, to: 9_996, by: 7).map { ($0 + 4) / 5 })
        }
        try store.write { txn in
            let tree = try #require(try txn.tree("t"))
            var cursor = try tree.cursor()
            #expect(try cursor.seekForward(to: numericKey(50)))
            try tree.delete(key: numericKey(55))
            #expect(try cursor.seekForward(to: numericKey(51)))
            #expect(try cursor.key == numericKey(60))
        }
    }

    /// The entries a `withEntry` + `next()` loop gives from `start`, up to `limit`.
    func stepped<S: PageSource>(_ tree: BTree, _ source: S, from start: Int, limit: Int) throws -> [[UInt8]] {
        var cursor = tree.cursor(in: source)
        var out: [[UInt8]] = []
        var valid = try cursor.seek(to: numericKey(start))
        while valid, out.count < limit {
            out.append(try cursor.withEntry { k, v in [UInt8](k) + [UInt8](v) })
            valid = try cursor.next()
        }
        return out
    }

    @Test("a walk gives the entries next() gives and stops on the entry it refused", arguments: [(1, 40), (4000, 40), (600, 3000)])
    func walkDifferential(count: Int, valueSize: Int) throws {
        let (tree, sink) = try tree(count, valueSize: valueSize)
        let snapshot = sink.snapshot()
        for (start, limit) in [(0, Int.max), (0, 1), (7, 250), (3 * count / 2, 300), (3 * count - 3, 5), (3 * count + 1, 5)] {
            let expected = try stepped(tree, snapshot, from: start, limit: limit)
            var cursor = tree.cursor(in: snapshot)
            var got: [[UInt8]] = []
            try cursor.seek(to: numericKey(start))
            try cursor.walk { k, v in
                guard got.count < limit else { return false }
                got.append([UInt8](k) + [UInt8](v))
                return true
            }
            #expect(got == expected, "from \(start), limit \(limit)")
            // Stopped early: the cursor stands on the refused entry, and moves on from it.
            let rest = try stepped(tree, snapshot, from: start, limit: limit == Int.max ? 0 : limit + 2).dropFirst(got.count)
            #expect(cursor.isValid == !rest.isEmpty)
            if let refused = rest.first {
                #expect(try cursor.withEntry { k, v in [UInt8](k) + [UInt8](v) } == refused)
                if rest.count > 1 {
                    #expect(try cursor.next())
                    #expect(try cursor.withEntry { k, v in [UInt8](k) + [UInt8](v) } == rest[rest.startIndex + 1])
                }
            }
        }
    }

    @Test("a walk in a write transaction may delete the entries it is given")
    func walkDeleting() throws {
        let (tree, sink) = try tree(3000, valueSize: 40)
        var cursor = tree.cursor(in: sink)
        try cursor.seek(to: numericKey(300))
        var seen = 0
        try cursor.walk { k, _ throws(StorageError) in
            seen += 1
            if seen % 2 == 0 { try tree.delete(key: [UInt8](k), in: sink) }
            return seen < 2000
        }
        #expect(seen == 2000)
        #expect(try tree.count(in: sink) == 2000)
        sink.commit()
        expectSound([tree], in: sink)
    }

    /// A tree as `tree` makes it, a snapshot of it and a seeded generator (the seed printed).
    func seededTree(_ name: String, _ count: Int, valueSize: Int, pageSize: Int) throws -> (BTree, MemoryPageSink, MemorySnapshot, SeededRandom) {
        let (tree, sink) = try tree(count, valueSize: valueSize, pageSize: pageSize)
        let seed = SeededRandom.seedFromEnvironment()
        print("\(name) differential, \(count) keys: seed \(seed) (replay with KEEL_SEED=\(seed))")
        return (tree, sink, sink.snapshot(), SeededRandom(seed: seed))
    }

    /// The keys that start a leaf (where `next()` lands on index 0), in order.
    func leafStarts<S: PageSource>(_ tree: BTree, _ source: S) throws -> [Int] {
        var cursor = tree.cursor(in: source)
        var starts: [Int] = []
        var valid = try cursor.seekFirst()
        while valid {
            if cursor.index == 0 { starts.append(Int(try cursor.withKey { $0.loadUnaligned(as: UInt64.self).bigEndian })) }
            valid = try cursor.next()
        }
        return starts
    }

    /// What `countEntries` must give: entries from `start` below `upper`, at most `limit`, counted
    /// one `next()` at a time, and the key of the first entry not counted (nil: none).
    func steppedCount<S: PageSource>(_ tree: BTree, _ source: S, from start: Int, below upper: Int?, limit: Int) throws -> (Int, [UInt8]?) {
        var cursor = tree.cursor(in: source)
        var n = 0
        var valid = try cursor.seek(to: numericKey(start))
        while valid, n < limit {
            if let upper, try cursor.key.lexicographicallyPrecedes(numericKey(upper)) == false { break }
            n += 1
            valid = try cursor.next()
        }
        return (n, valid ? try cursor.key : nil)
    }

    /// `countEntries` from `start`, and where the cursor stands afterwards.
    func counted<S: PageSource>(_ cursor: BTreeCursor<S>, from start: Int, below upper: Int?, limit: Int) throws -> (Int, [UInt8]?) {
        var cursor = cursor
        try cursor.seek(to: numericKey(start))
        let n: Int
        if let upper {
            n = try numericKey(upper).withUnsafeBytes { u in try cursor.countEntries(below: u, limit: limit) }
        } else {
            n = try cursor.countEntries(below: nil, limit: limit)
        }
        return (n, try position(&cursor))
    }

    @Test(
        "counting below a bound leaf by leaf gives what counting entry by entry gives (random trees and bounds)",
        arguments: [(0, 40, 4096), (1, 40, 4096), (300, 40, 4096), (5000, 40, 1024), (3000, 8, 1024), (700, 3000, 4096)])
    func countDifferential(count: Int, valueSize: Int, pageSize: Int) throws {
        var (tree, sink, snapshot, rng) = try seededTree("countEntries", count, valueSize: valueSize, pageSize: pageSize)
        let edges = try leafStarts(tree, snapshot)
        #expect(count < 300 || edges.count > 2)
        let top = 3 * count + 10
        // Keys at a leaf's edges (its first key, one below it, the key before it), random keys,
        // keys before the first and beyond the last.
        func pick() -> Int {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0 where !edges.isEmpty: return max(0, edges.randomElement(using: &rng)! + Int.random(in: -3...1, using: &rng))
            case 1: return [0, top, 3 * count, max(0, 3 * count - 3)].randomElement(using: &rng)!
            default: return Int.random(in: 0...top, using: &rng)
            }
        }
        for round in 0..<400 {
            let start = pick()
            // Upper bounds below, at and above the start (empty ranges included), or none.
            let upper: Int? = Int.random(in: 0..<8, using: &rng) == 0 ? nil : (Bool.random(using: &rng) ? pick() : max(0, start + Int.random(in: -2...700, using: &rng)))
            let limit = Int.random(in: 0..<4, using: &rng) == 0 ? Int.random(in: 0...400, using: &rng) : Int.max
            let (expected, next) = try steppedCount(tree, snapshot, from: start, below: upper, limit: limit)
            for source in [0, 1] {
                let context = "round \(round): from \(start) below \(upper.map(String.init) ?? "the end"), limit \(limit), \(source == 0 ? "read" : "write")"
                let (n, after) = source == 0
                    ? try counted(tree.cursor(in: snapshot), from: start, below: upper, limit: limit)
                    : try counted(tree.cursor(in: sink), from: start, below: upper, limit: limit)
                #expect(n == expected, "\(context)")
                #expect(after == next, "\(context)")
            }
        }
    }

    /// An in-memory store with a tree "t" of `count` keys 0, 2, 4, … and their values.
    func storeWithTree(_ count: Int, value: (Int) -> [UInt8]) throws -> Store {
        let store = try openTestStore(InMemoryFileSystem())
        try store.write { txn in
            let tree = try txn.createTree("t")
            for i in 0..<count { try tree.put(key: numericKey(2 * i), value: value(i)) }
        }
        return store
    }

    @Test("through the store's Cursor: counts in a read and in a write transaction, and moves on afterwards")
    func storeCount() throws {
        let store = try storeWithTree(3000) { testValue($0, count: 30) }
        defer { try? store.close() }
        try store.write { txn in
            let tree = try #require(try txn.tree("t"))
            var cursor = try tree.cursor()
            #expect(try cursor.seek(to: numericKey(1000)))
            #expect(try cursor.countEntries(below: numericKey(2001)) == 501)
            #expect(try cursor.key == numericKey(2002))
        }
        try store.read { txn in
            var cursor = try #require(try txn.tree("t")).cursor()
            #expect(try cursor.seek(to: numericKey(1)))
            #expect(try cursor.countEntries(below: numericKey(5001)) == 2500)
            #expect(try cursor.key == numericKey(5002))
            #expect(try cursor.countEntries(below: numericKey(5002)) == 0)
            #expect(try cursor.countEntries(below: nil, limit: 10) == 10)
            #expect(try cursor.key == numericKey(5022))
            #expect(try cursor.next())
            #expect(try cursor.key == numericKey(5024))
            #expect(try cursor.countEntries(below: nil) == 488)
            #expect(cursor.isValid == false)
            #expect(try cursor.countEntries(below: nil) == 0)
        }
    }

    /// `lookUpEach` over `targets` (ascending): the index and value of each key found.
    func lookedUp<S: PageSource>(_ cursor: BTreeCursor<S>, _ targets: [Int]) throws -> [(Int, [UInt8])] {
        var cursor = cursor
        let keys = targets.flatMap(numericKey)  // 8 bytes each
        var out: [(Int, [UInt8])] = []
        try keys.withUnsafeBytes { all in
            try cursor.lookUpEach(targets.count, key: { UnsafeRawBufferPointer(rebasing: all[(8 * $0)..<(8 * $0 + 8)]) }) { i, value in
                out.append((i, [UInt8](value)))
            }
        }
        #expect(cursor.isValid == false)
        return out
    }

    @Test(
        "looking up ascending keys a window at a time finds what a seek from the root finds (differential)",
        arguments: [(0, 40, 4096), (1, 40, 4096), (300, 40, 4096), (5000, 40, 1024), (20000, 8, 1024), (600, 3000, 4096)])
    func lookUpEachDifferential(count: Int, valueSize: Int, pageSize: Int) throws {
        var (tree, sink, snapshot, rng) = try seededTree("lookUpEach", count, valueSize: valueSize, pageSize: pageSize)
        for round in 0..<30 {
            // Present keys (multiples of 3) and absent ones, repeats, runs inside one leaf, far
            // jumps, keys beyond the last; from none to a few hundred (several windows).
            var targets: [Int] = []
            var at = Int.random(in: 0...max(0, 3 * count / 2), using: &rng)
            for _ in 0..<Int.random(in: 0...(round < 3 ? round : 300), using: &rng) {
                targets.append(at)
                switch Int.random(in: 0..<8, using: &rng) {
                case 0: at += 0
                case 1...4: at += Int.random(in: 1...9, using: &rng)
                case 5, 6: at += Int.random(in: 1...900, using: &rng)
                default: at += Int.random(in: 1...(3 * count + 10), using: &rng)
                }
            }
            // Some rounds out of order: slower, the same answers.
            if round % 5 == 4 { targets.shuffle(using: &rng) }
            var expected: [(Int, [UInt8])] = []
            for (i, target) in targets.enumerated() {
                var reference = tree.cursor(in: snapshot)
                guard try reference.seek(to: numericKey(target)), try reference.key == numericKey(target) else { continue }
                expected.append((i, try reference.value()))
            }
            for (name, got) in [("read", try lookedUp(tree.cursor(in: snapshot), targets)), ("write", try lookedUp(tree.cursor(in: sink), targets))] {
                #expect(got.map(\.0) == expected.map(\.0), "round \(round), \(name): \(targets.count) targets")
                #expect(got.map(\.1) == expected.map(\.1), "round \(round), \(name)")
            }
            if count > 0 {
                #expect(expected.count == targets.filter { $0 % 3 == 0 && $0 < 3 * count }.count, "round \(round)")
            }
        }
    }

    /// `lookUpEach` over keys of any length, concatenated in `bytes` at `starts` (one more start
    /// than keys): the index and value of each key found.
    func lookedUp<S: PageSource>(_ cursor: BTreeCursor<S>, _ bytes: [UInt8], _ starts: [Int]) throws -> [(Int, [UInt8])] {
        var cursor = cursor
        var out: [(Int, [UInt8])] = []
        try bytes.withUnsafeBytes { all in
            try cursor.lookUpEach(starts.count - 1, key: { UnsafeRawBufferPointer(rebasing: all[starts[$0]..<starts[$0 + 1]]) }) { i, value in
                out.append((i, [UInt8](value)))
            }
        }
        #expect(cursor.isValid == false)
        return out
    }

    @Test("a window's keys over many leaves and branches, several to a leaf, absent ones, before the first and after the last: as one-by-one seeks, at window sizes around the batch's")
    func lookUpEachWindows() throws {
        var (tree, sink, snapshot, rng) = try seededTree("lookUpEachWindows", 20000, valueSize: 8, pageSize: 1024)
        var probe = tree.cursor(in: snapshot)
        try probe.seekFirst()
        #expect(probe.frames.count >= 2, "a root, branches under it, leaves")
        let starts = try leafStarts(tree, snapshot)
        let window = BTreeCursor<MemorySnapshot>.batchWindow
        for size in [1, 2, 3, window - 1, window, window + 1, 2 * window - 1, 2 * window, 2 * window + 1, 3 * window + 5] {
            for round in 0..<12 {
                // From a random leaf on: 1–4 keys of each leaf (its first key, present and absent
                // keys inside it, repeats), every few leaves a jump (another branch); the first
                // rounds start before the tree's first key, the last ones run past its last.
                var keys: [[UInt8]] = []
                if round < 3 { keys += [[], [0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0]].prefix(round + 1).map { $0 } }
                var leaf = Int.random(in: 0..<starts.count, using: &rng)
                if round >= 9 { leaf = max(0, starts.count - 2) }
                while keys.count < size, leaf < starts.count {
                    let low = starts[leaf]
                    let high = leaf + 1 < starts.count ? starts[leaf + 1] : 3 * 20000
                    var at = low
                    for _ in 0..<Int.random(in: 1...4, using: &rng) where keys.count < size {
                        keys.append(numericKey(at))
                        at += Int.random(in: 0...max(1, (high - low) / 3), using: &rng)
                        if at >= high { break }
                    }
                    leaf += Int.random(in: 0..<8, using: &rng) == 0 ? Int.random(in: 2...200, using: &rng) : 1
                }
                while keys.count < size { keys.append(numericKey(3 * 20000 + keys.count)) }
                if round >= 9 { keys.append([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) }
                keys.sort { $0.lexicographicallyPrecedes($1) }  // the tree's order: unsigned bytes, a prefix first
                if round == 11 { keys.shuffle(using: &rng) }  // out of order: slower, the same answers
                var expected: [(Int, [UInt8])] = []
                for (i, key) in keys.enumerated() {
                    var reference = tree.cursor(in: snapshot)
                    guard try reference.seek(to: key), try reference.key == key else { continue }
                    expected.append((i, try reference.value()))
                }
                var bytes: [UInt8] = []
                var offsets = [0]
                for key in keys {
                    bytes += key
                    offsets.append(bytes.count)
                }
                for (name, got) in [("read", try lookedUp(tree.cursor(in: snapshot), bytes, offsets)), ("write", try lookedUp(tree.cursor(in: sink), bytes, offsets))] {
                    #expect(got.map(\.0) == expected.map(\.0), "size \(size), round \(round), \(name)")
                    #expect(got.map(\.1) == expected.map(\.1), "size \(size), round \(round), \(name)")
                }
                // The tree holds 0, 3, 6, … below 60,000 (8-byte keys): the reference found those.
                let held = keys.filter { key in
                    guard key.count == 8 else { return false }
                    let n = key.reduce(0) { $0 << 8 | Int($1) }
                    return n % 3 == 0 && n < 3 * 20000
                }
                #expect(expected.count == held.count, "size \(size), round \(round)")
                #expect(!expected.isEmpty || size < 4, "every leaf visited gives its first key")
            }
        }
    }

    @Test("through the store's Cursor: look-ups in a read and in a write transaction")
    func storeLookUpEach() throws {
        let store = try storeWithTree(3000, value: numericKey)
        defer { try? store.close() }
        let targets = Array(stride(from: 1, to: 6_100, by: 3))  // every other one is even, the last ones beyond the tree
        let keys = targets.flatMap(numericKey)
        let expected = targets.enumerated().filter { $0.element % 2 == 0 && $0.element < 6000 }.map { ($0.offset, $0.element / 2) }
        func run(_ cursor: inout Cursor) throws -> [(Int, Int)] {
            var out: [(Int, Int)] = []
            try keys.withUnsafeBytes { all in
                try cursor.lookUpEach(targets.count, key: { UnsafeRawBufferPointer(rebasing: all[(8 * $0)..<(8 * $0 + 8)]) }) { i, value in
                    out.append((i, Int(value.loadUnaligned(as: UInt64.self).bigEndian)))
                }
            }
            return out
        }
        try store.read { txn in
            var cursor = try #require(try txn.tree("t")).cursor()
            let got = try run(&cursor)
            #expect(got.map(\.0) == expected.map(\.0) && got.map(\.1) == expected.map(\.1))
        }
        try store.write { txn in
            let tree = try #require(try txn.tree("t"))
            try tree.delete(key: numericKey(4))
            var cursor = try tree.cursor()
            let got = try run(&cursor)
            let without4 = expected.filter { $0.1 != 2 }
            #expect(got.map(\.0) == without4.map(\.0) && got.map(\.1) == without4.map(\.1))
        }
    }
}
