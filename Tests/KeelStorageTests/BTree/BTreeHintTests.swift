import Testing

@testable import KeelStorage

/// The put/delete hint (BTree+Hint.swift): several ascending key streams into one tree, each with
/// its own hint, interleaved with each other, with random unhinted writes, hinted lookups and
/// deletes, so that every hint is regularly made stale by splits, merges and refills it did not
/// cause.
@Suite("B+tree put and delete hints")
struct BTreeHintTests {
    /// Stream s's i-th key: a one-byte stream prefix, then i big-endian (ascending per stream).
    static func streamKey(_ s: Int, _ i: Int) -> [UInt8] { [UInt8(s)] + numericKey(i) }

    @Test("interleaved ascending streams, random writes and deletes match a sorted model", arguments: [512, 4096])
    func interleaved(pageSize: Int) throws {
        let seed = SeededRandom.seedFromEnvironment()
        print("B+tree hint test, page size \(pageSize): seed \(seed) (replay with KEEL_SEED=\(seed))")
        var rng = SeededRandom(seed: seed)
        let sink = MemoryPageSink(pageSize: pageSize)
        let tree = BTree(root: try BTree.create(in: sink))
        var model = SortedModel()
        let streams = 5
        var hints = [BTreeHint](repeating: BTreeHint(), count: streams)
        var next = [Int](repeating: 0, count: streams)
        for phase in 0..<8 {
            for _ in 0..<2_000 {
                let roll = rng.next() % 100
                let s = Int(rng.next() % UInt64(streams))
                if roll < 70 {
                    // The stream's next key, sometimes skipping ahead (gaps others may fill).
                    next[s] += 1 + Int(rng.next() % 3)
                    let key = Self.streamKey(s, next[s])
                    let value = testValue(Int(rng.next() % 1000), count: Int(rng.next() % 40))
                    try key.withUnsafeBytes { k in
                        try value.withUnsafeBytes { v in try tree.put(key: k, value: v, in: sink, hint: &hints[s]) }
                    }
                    model.put(key, value)
                } else if roll < 80 {
                    // An unhinted write into a random stream's past (fills gaps, splits leaves).
                    let key = Self.streamKey(s, Int(rng.next() % UInt64(next[s] + 1)))
                    let value = testValue(Int(rng.next() % 1000), count: Int(rng.next() % 200))
                    try tree.put(key: key, value: value, in: sink)
                    model.put(key, value)
                } else if roll < 85 {
                    // A hinted lookup (it moves the stream's hint to the leaf it read).
                    let key = rng.next() % 2 == 0 || model.count == 0
                        ? Self.streamKey(s, Int(rng.next() % UInt64(next[s] + 1)))
                        : model.keys[Int(rng.next() % UInt64(model.count))]
                    let found: [UInt8]? = try key.withUnsafeBytes { k in
                        switch try tree.locate(k, in: sink, hint: &hints[s], shape: sink.shapeCount) {
                        case .absent: return nil
                        case .inline(let bytes, _): return [UInt8](bytes)
                        case .overflow: return try tree.get(k, in: sink)
                        }
                    }
                    #expect(found == model[key], "lookup \(key)")
                } else if model.count > 0 {
                    // Deletes, hinted through some stream's hint or not, of existing keys mostly.
                    let key = rng.next() % 4 == 0
                        ? Self.streamKey(s, Int(rng.next() % UInt64(next[s] + 1)))
                        : model.keys[Int(rng.next() % UInt64(model.count))]
                    let deleted = rng.next() % 2 == 0
                        ? try key.withUnsafeBytes { k in try tree.delete(key: k, in: sink, hint: &hints[s]) }
                        : try tree.delete(key: key, in: sink)
                    #expect(deleted == model.delete(key), "delete \(key)")
                }
            }
            // Every other phase deletes a long ascending run through one hint (merges, refills).
            if phase % 2 == 1 {
                let s = Int(rng.next() % UInt64(streams))
                for i in 0...next[s] where rng.next() % 4 != 0 {
                    let key = Self.streamKey(s, i)
                    let deleted = try key.withUnsafeBytes { k in try tree.delete(key: k, in: sink, hint: &hints[s]) }
                    #expect(deleted == model.delete(key), "delete \(key)")
                }
            }
            for key in model.keys.prefix(50) { #expect(try tree.get(key, in: sink) == model[key]) }
            sink.commit()
            expectSound([tree], in: sink)
            var seen: [[UInt8]] = []
            try tree.forEach(in: sink.snapshot()) { key, value in
                seen.append([UInt8](key))
                #expect(model[[UInt8](key)] == [UInt8](value))
                return true
            }
            #expect(seen == model.keys)
        }
    }

    @Test("a hint skips the descent only while the tree keeps its shape")
    func shapeCount() throws {
        let sink = MemoryPageSink(pageSize: 512)
        let tree = BTree(root: try BTree.create(in: sink))
        var hint = BTreeHint()
        for i in 0..<200 {
            try numericKey(i).withUnsafeBytes { k in try tree.put(key: k, value: UnsafeRawBufferPointer(start: nil, count: 0), in: sink, hint: &hint) }
        }
        let shape = sink.shapeCount
        // A leaf-only write (a replace in place) keeps the count and the hint; an unhinted split
        // moves the count and the hint is not used.
        try numericKey(199).withUnsafeBytes { k in try tree.put(key: k, value: UnsafeRawBufferPointer(start: nil, count: 0), in: sink, hint: &hint) }
        #expect(sink.shapeCount == shape)
        #expect(hint.isValid)
        for i in 1_000..<1_100 { try tree.put(key: numericKey(i), value: [1, 2, 3], in: sink) }
        #expect(sink.shapeCount != shape)
        #expect(!numericKey(201).withUnsafeBytes { hint.covers($0, root: tree.root, shape: sink.shapeCount) })
        try numericKey(201).withUnsafeBytes { k in try tree.put(key: k, value: UnsafeRawBufferPointer(start: nil, count: 0), in: sink, hint: &hint) }
        sink.commit()
        expectSound([tree], in: sink)
        #expect(try tree.count(in: sink) == 301)
    }

    @Test("runs of appends into the middle of a tree through hints fill their pages")
    func appendRunsFillPages() throws {
        func build(hinted: Bool) throws -> (MemoryPageSink, BTree) {
            let sink = MemoryPageSink(pageSize: 4096)
            let tree = BTree(root: try BTree.create(in: sink))
            var hints = [BTreeHint](repeating: BTreeHint(), count: 8)
            let value = [UInt8](repeating: 7, count: 20)
            // Each stream's keys ascend, the streams take turns by runs of 100 (as a save puts each
            // department's new link entries together): eight append points inside the tree.
            for run in 0..<30 {
                for (s, j) in (0..<8).flatMap({ s in (0..<100).map { (s, $0) } }) {
                    let key = Self.streamKey(s, run * 100 + j)
                    if hinted {
                        try key.withUnsafeBytes { k in
                            try value.withUnsafeBytes { v in try tree.put(key: k, value: v, in: sink, hint: &hints[s]) }
                        }
                    } else {
                        try tree.put(key: key, value: value, in: sink)
                    }
                }
            }
            sink.commit()
            return (sink, tree)
        }
        let (hintedSink, hintedTree) = try build(hinted: true)
        let (plainSink, _) = try build(hinted: false)
        expectSound([hintedTree], in: hintedSink)
        #expect(try hintedTree.count(in: hintedSink) == 24_000)
        var seen = 0
        var previous: [UInt8]?
        try hintedTree.forEach(in: hintedSink.snapshot()) { key, _ in
            if let previous { #expect(previous.lexicographicallyPrecedes([UInt8](key))) }
            previous = [UInt8](key)
            seen += 1
            return true
        }
        #expect(seen == 24_000)
        // Cutting after the run's cell splits less often than balanced splits with sharing (each
        // of which moves half a page or more), and fills pages at least as well.
        #expect(hintedSink.shapeCount * 2 < plainSink.shapeCount, "shape changes \(hintedSink.shapeCount) against \(plainSink.shapeCount)")
        #expect(hintedSink.livePageCount <= plainSink.livePageCount,
                "hinted \(hintedSink.livePageCount) pages, plain \(plainSink.livePageCount)")
    }

    @Test("a missed hint resumes the descent at the deepest branch that holds the key: same results as from the root, fewer page reads",
          arguments: [512, 4096])
    func resumedDescents(pageSize: Int) throws {
        // Random keys with small, empty and overflow values (BTreeRangeDeleteTests.build); several
        // levels on small pages.
        try BTreeRangeDeleteTests.randomTrees(
            "B+tree resumed descent test", pageSize: pageSize, rounds: 6, count: { 3_000 + Int($0.next() % 20_000) }
        ) { round, tree, model, sink, plain, rng in
            var path = TreePath()
            _ = try model.keys[0].withUnsafeBytes { k in try tree.descend(to: k, in: sink, path: &path) }
            let depth = path.depth

            // Lookups in ascending order, present keys and absent ones, about one per leaf (a leaf
            // holds ~pageSize/64 of these entries): most probes leave the hinted leaf, so only a
            // resumed descent keeps the page reads under the bound below. The bound needs two
            // branch levels, which these trees reach on 512-byte pages (with resuming switched
            // off it fails there); on 4096-byte pages they have one, and the results are checked.
            var probes: [[UInt8]] = []
            let spacing = UInt64(pageSize / 64)
            for key in model.keys where rng.next() % spacing == 0 { probes.append(rng.next() % 5 == 0 ? key + [0] : key) }
            var hint = BTreeHint()
            let readsBefore = sink.pageReads
            for key in probes {
                let found: [UInt8]? = try key.withUnsafeBytes { k in
                    switch try tree.locate(k, in: sink, hint: &hint, shape: sink.shapeCount) {
                    case .absent: return nil
                    case .inline(let bytes, _): return [UInt8](bytes)
                    case .overflow: return try tree.get(k, in: sink)
                    }
                }
                #expect(found == model[key], "round \(round): lookup \(key)")
            }
            // From the root every probe would read depth + 1 pages; resumed, about one.
            if depth >= 2 {
                let reads = sink.pageReads - readsBefore
                #expect(reads * 2 < probes.count * (depth + 1), "round \(round): \(reads) page reads for \(probes.count) lookups, depth \(depth)")
            }

            // Deletes in ascending order through one hint (sparse ones, dense runs that empty
            // leaves and merge them, absent keys) against unhinted deletes of the same keys.
            var deleteHint = BTreeHint()
            var doomed: [[UInt8]] = []
            var i = 0
            while i < model.count {
                if rng.next() % 10 == 0 {
                    let run = 1 + Int(rng.next() % 80)
                    doomed.append(contentsOf: model.keys[i..<min(model.count, i + run)])
                    i += run
                } else {
                    if rng.next() % 6 == 0 { doomed.append(rng.next() % 3 == 0 ? model.keys[i] + [0] : model.keys[i]) }
                    i += 1 + Int(rng.next() % 4)
                }
            }
            for key in doomed {
                let hinted = try key.withUnsafeBytes { k in try tree.delete(key: k, in: sink, hint: &deleteHint) }
                let unhinted = try tree.delete(key: key, in: plain)
                #expect(hinted == unhinted, "round \(round): delete \(key)")
                #expect(hinted == model.delete(key), "round \(round): delete \(key)")
            }

            // Puts in ascending order through one hint: new keys between the survivors.
            var putHint = BTreeHint()
            for key in model.keys where rng.next() % 5 == 0 {
                let fresh = key + [UInt8(rng.next() % 256)]
                let value = testValue(Int(rng.next() % 1000), count: rng.next() % 30 == 0 ? pageSize + 100 : Int(rng.next() % 50))
                try fresh.withUnsafeBytes { k in try value.withUnsafeBytes { v in try tree.put(key: k, value: v, in: sink, hint: &putHint) } }
                try tree.put(key: fresh, value: value, in: plain)
                model.put(fresh, value)
            }
            try BTreeRangeDeleteTests.expectMatches(tree, in: [sink, plain], model)
            for key in model.keys where rng.next() % 50 == 0 { #expect(try tree.get(key, in: sink) == model[key]) }
        }
    }
}
