import Testing

@testable import KeelStorage

/// The range delete (BTree+RangeDelete.swift) against deleting the same keys one by one: random
/// trees with small, large (overflow) and empty values, random ranges (empty ones, ones inside a
/// leaf, across many leaves, to the end, covering everything), each checked against a sorted model
/// and the verifier (N-invariants, no leaked pages: overflow chains are freed).
@Suite("B+tree range delete")
struct BTreeRangeDeleteTests {
    /// Builds a tree of `count` random keys (two bytes of prefix, then a number) in `sink`.
    static func build(_ sink: MemoryPageSink, count: Int, rng: inout SeededRandom) throws -> (BTree, SortedModel) {
        let tree = BTree(root: try BTree.create(in: sink))
        var model = SortedModel()
        for _ in 0..<count {
            let key = [UInt8(rng.next() % 6), UInt8(rng.next() % 4)] + numericKey(Int(rng.next() % 100_000))
            let roll = rng.next() % 20
            // Mostly small values, some empty, some far beyond a quarter page (overflow chains).
            let size = roll == 0 ? sink.pageSize * 2 + Int(rng.next() % 500) : roll < 3 ? 0 : Int(rng.next() % 60)
            let value = testValue(Int(rng.next() % 10_000), count: size)
            try tree.put(key: key, value: value, in: sink)
            model.put(key, value)
        }
        sink.commit()
        return (tree, model)
    }

    /// Seeded rounds over random trees (`build`) for differential tests: each round a fresh sink
    /// holding a tree of `count` keys, its model, and a clone of the sink for the reference path.
    static func randomTrees(
        _ what: String, pageSize: Int, rounds: Int, count: (inout SeededRandom) -> Int,
        _ body: (_ round: Int, _ tree: BTree, _ model: inout SortedModel, _ sink: MemoryPageSink, _ clone: MemoryPageSink,
                 _ rng: inout SeededRandom) throws -> Void
    ) throws {
        let seed = SeededRandom.seedFromEnvironment()
        print("\(what), page size \(pageSize): seed \(seed) (replay with KEEL_SEED=\(seed))")
        var rng = SeededRandom(seed: seed)
        for round in 0..<rounds {
            let sink = MemoryPageSink(pageSize: pageSize)
            let n = count(&rng)
            let built = try build(sink, count: n, rng: &rng)
            var model = built.1
            try body(round, built.0, &model, sink, sink.clone(), &rng)
        }
    }

    /// Commits each sink and expects the tree in it sound and holding exactly the model's keys.
    static func expectMatches(_ tree: BTree, in sinks: [MemoryPageSink], _ model: SortedModel) throws {
        for sink in sinks {
            sink.commit()
            expectSound([tree], in: sink)
            #expect(try contents(tree, sink) == model.keys)
        }
    }

    static func contents(_ tree: BTree, _ sink: MemoryPageSink) throws -> [[UInt8]] {
        var seen: [[UInt8]] = []
        try tree.forEach(in: sink.snapshot()) { key, _ in
            seen.append([UInt8](key))
            return true
        }
        return seen
    }

    @Test("random ranges remove exactly what key-by-key deletes remove, and leave a sound tree", arguments: [512, 4096])
    func matchesKeyByKey(pageSize: Int) throws {
        try Self.randomTrees("B+tree range delete test", pageSize: pageSize, rounds: 12, count: { 300 + Int($0.next() % 3_000) }) {
            round, tree, model, ranged, single, rng in
            for _ in 0..<6 {
                // Bounds: random keys, existing keys, prefixes (a whole owner), or none.
                func bound() -> [UInt8] {
                    switch rng.next() % 4 {
                    case 0 where model.count > 0: return model.keys[Int(rng.next() % UInt64(model.count))]
                    case 1: return [UInt8(rng.next() % 7)]
                    case 2: return [UInt8(rng.next() % 6), UInt8(rng.next() % 5)]
                    default: return [UInt8(rng.next() % 6), UInt8(rng.next() % 4)] + numericKey(Int(rng.next() % 100_000))
                    }
                }
                let lower = rng.next() % 10 == 0 ? [] : bound()
                let upper: [UInt8]? = rng.next() % 8 == 0 ? nil : bound()
                let doomed = model.keys.filter { key in
                    !key.lexicographicallyPrecedes(lower) && (upper.map { key.lexicographicallyPrecedes($0) } ?? true)
                }
                let removed = try tree.deleteRange(from: lower, below: upper, in: ranged)
                #expect(removed == doomed.count, "round \(round): [\(lower), \(String(describing: upper)))")
                for key in doomed {
                    #expect(try tree.delete(key: key, in: single))
                    model.delete(key)
                }
                try Self.expectMatches(tree, in: [ranged, single], model)
                for key in model.keys.prefix(20) { #expect(try tree.get(key, in: ranged) == model[key]) }
            }
            // Everything at last: an empty tree, every page but the root given back.
            let all = model.count
            #expect(try tree.deleteRange(from: [], below: nil, in: ranged) == all)
            ranged.commit()
            expectSound([tree], in: ranged)
            #expect(try tree.count(in: ranged) == 0)
        }
    }

    @Test("an empty or inverted range removes nothing and writes no page")
    func emptyRanges() throws {
        let sink = MemoryPageSink(pageSize: 512)
        var rng = SeededRandom(seed: 7)
        let (tree, model) = try Self.build(sink, count: 500, rng: &rng)
        let key = model.keys[100]
        #expect(try tree.deleteRange(from: key, below: key, in: sink) == 0)
        #expect(try tree.deleteRange(from: model.keys[200], below: model.keys[100], in: sink) == 0)
        // Between two neighbouring keys: nothing there.
        #expect(try tree.deleteRange(from: key + [0], below: model.keys[101], in: sink) == 0)
        #expect(sink.dirty.isEmpty)
        sink.commit()
        #expect(try Self.contents(tree, sink) == model.keys)
    }
}
