import Testing

@testable import KeelStorage

/// Random workloads compared against `SortedModel`, with a printed seed (replay: KEEL_SEED=…).
/// KEEL_SLOW_TESTS=1 runs many more operations.
@Suite("B+tree against a sorted model")
struct BTreeModelTests {
    static let slow = getEnvironment("KEEL_SLOW_TESTS") == "1"

    enum KeyStyle: Sendable, CustomStringConvertible {
        /// Short keys over a tiny alphabet (many updates), random 16-byte keys, a few huge ones.
        case mixed
        /// Long keys sharing long prefixes: long separators, so narrow branches and deep trees.
        case longPrefixes
        var description: String { self == .mixed ? "mixed keys" : "long shared-prefix keys" }
    }

    struct Workload {
        var rng: SeededRandom
        let pageSize: Int
        let maxKey: Int
        let style: KeyStyle

        mutating func bytes(_ count: Int) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: count)
            out.withUnsafeMutableBytes { buffer in
                var i = 0
                while i < count {
                    let word = rng.next()
                    withUnsafeBytes(of: word) { w in
                        for j in 0..<min(8, count - i) { buffer[i + j] = w[j] }
                    }
                    i += 8
                }
            }
            return out
        }

        /// Keys of varied length, many sharing prefixes (a small alphabet), some very long.
        mutating func key() -> [UInt8] {
            if style == .longPrefixes {
                let prefix = [UInt8](repeating: UInt8(rng.next() % 3), count: 150)
                return prefix + bytes(8 + Int(rng.next() % 100))
            }
            switch rng.next() % 20 {
            case 0: return bytes(Int(rng.next() % UInt64(maxKey + 1)))
            case 1...7: return (0..<Int(rng.next() % 6)).map { _ in UInt8(rng.next() % 4) }
            case 8...12: return [UInt8(rng.next() % 3)] + bytes(Int(rng.next() % 24))
            default: return bytes(16)
            }
        }

        /// Mostly small values, some near the inline limit, some overflow (a few compressible).
        mutating func value() -> [UInt8] {
            let inlineLimit = BTreeLimits.maxCellSize(pageSize: pageSize)
            switch rng.next() % 50 {
            case 0...34: return bytes(Int(rng.next() % 121))
            case 35...42: return bytes(120 + Int(rng.next() % UInt64(inlineLimit)))
            case 43...47: return bytes(inlineLimit + Int(rng.next() % UInt64(2 * pageSize)))
            default:
                let count = inlineLimit + Int(rng.next() % UInt64(3 * pageSize))
                let fill = UInt8(rng.next() % 256)
                return (0..<count).map { fill &+ UInt8(truncatingIfNeeded: $0 / 100) }
            }
        }

        mutating func bound() -> KeyBound? {
            rng.next() % 5 == 0 ? nil : KeyBound(key(), inclusive: rng.next() % 2 == 0)
        }
    }

    @Test("random puts, replaces, deletes, gets, scans and cursor walks match a sorted model",
          arguments: [(4096, KeyStyle.mixed), (4096, .longPrefixes), (16384, .mixed), (65536, .mixed)])
    func randomised(pageSize: Int, style: KeyStyle) throws {
        let seed = SeededRandom.seedFromEnvironment()
        print("B+tree model test, page size \(pageSize), \(style): seed \(seed) (replay with KEEL_SEED=\(seed))")
        var w = Workload(rng: SeededRandom(seed: seed), pageSize: pageSize,
                         maxKey: BTreeLimits.maxKeySize(pageSize: pageSize), style: style)
        let sink = MemoryPageSink(pageSize: pageSize)
        let tree = BTree(root: try BTree.create(in: sink))
        var model = SortedModel()
        // Half the writes go through a put/delete hint (BTree+Hint.swift), interleaved with
        // unhinted ones that change the tree behind the hint's back.
        var hint = BTreeHint()
        let phases = Self.slow ? 40 : 6
        let opsPerPhase = Self.slow ? 3000 : 900
        for phase in 0..<phases {
            // Two growing phases, then a shrinking one, so merges get exercised too.
            let putShare: UInt64 = phase % 3 == 2 ? 15 : 60
            let deleteShare: UInt64 = phase % 3 == 2 ? 40 : 8
            for _ in 0..<opsPerPhase {
                let roll = w.rng.next() % 100
                if roll < putShare {
                    let key = model.count > 0 && w.rng.next() % 4 == 0
                        ? model.keys[Int(w.rng.next() % UInt64(model.count))] : w.key()
                    let value = w.value()
                    if w.rng.next() % 2 == 0 {
                        try key.withUnsafeBytes { k in
                            try value.withUnsafeBytes { v in try tree.put(key: k, value: v, in: sink, hint: &hint) }
                        }
                    } else {
                        try tree.put(key: key, value: value, in: sink)
                    }
                    model.put(key, value)
                } else if roll < putShare + deleteShare {
                    let key = model.count > 0 && w.rng.next() % 5 != 0
                        ? model.keys[Int(w.rng.next() % UInt64(model.count))] : w.key()
                    let deleted = w.rng.next() % 2 == 0
                        ? try key.withUnsafeBytes { k in try tree.delete(key: k, in: sink, hint: &hint) }
                        : try tree.delete(key: key, in: sink)
                    #expect(deleted == model.delete(key), "delete \(key)")
                } else if roll < 92 {
                    let key = model.count > 0 && w.rng.next() % 2 == 0
                        ? model.keys[Int(w.rng.next() % UInt64(model.count))] : w.key()
                    #expect(try tree.get(key, in: sink) == model[key], "get \(key)")
                } else if roll < 96 {
                    try checkScan(tree, sink, model, &w)
                } else {
                    try checkCursorWalk(tree, sink, model, &w)
                }
            }
            sink.commit()
            expectSound([tree], in: sink)
            try checkEverything(tree, sink.snapshot(), model)
        }
        print("  page size \(pageSize), \(style): \(model.count) keys, \(sink.livePageCount) pages, depth \(try treeDepth(tree, sink))")
        // Finally delete everything that is left: the tree is one empty root leaf again.
        for key in model.keys.shuffled(using: &w.rng) { #expect(try tree.delete(key: key, in: sink)) }
        sink.commit()
        expectSound([tree], in: sink)
        #expect(sink.livePageCount == 1)
    }

    private func checkScan(_ tree: BTree, _ sink: MemoryPageSink, _ model: SortedModel, _ w: inout Workload) throws {
        let lower = w.bound()
        let upper = w.bound()
        let reverse = w.rng.next() % 2 == 0
        let limit = Int(w.rng.next() % 60) + 1
        var seen: [[UInt8]] = []
        try tree.forEach(from: lower, to: upper, reverse: reverse, in: sink) { key, value in
            seen.append([UInt8](key))
            #expect(model[[UInt8](key)] == [UInt8](value))
            return seen.count < limit
        }
        let expected = Array(model.range(from: lower, to: upper, reverse: reverse).prefix(limit))
        #expect(seen == expected, "scan \(String(describing: lower)) … \(String(describing: upper)) reverse \(reverse)")
    }

    private func checkCursorWalk(
        _ tree: BTree, _ sink: MemoryPageSink, _ model: SortedModel, _ w: inout Workload
    ) throws {
        var cursor = tree.cursor(in: sink)
        var position: Int
        switch w.rng.next() % 3 {
        case 0:
            let key = w.key()
            try cursor.seek(to: key)
            position = model.lowerBound(key)
        case 1:
            try cursor.seekFirst()
            position = 0
        default:
            try cursor.seekLast()
            position = model.count - 1
        }
        for _ in 0..<40 {
            let inModel = position >= 0 && position < model.count
            #expect(cursor.isValid == inModel)
            guard inModel, cursor.isValid else { return }
            #expect(try cursor.key == model.keys[position])
            #expect(try cursor.value() == model[model.keys[position]])
            if w.rng.next() % 3 == 0 {
                try cursor.previous()
                position -= 1
            } else {
                try cursor.next()
                position += 1
            }
        }
    }

    /// The whole tree, both directions, equals the model.
    private func checkEverything(_ tree: BTree, _ snapshot: MemorySnapshot, _ model: SortedModel) throws {
        #expect(try tree.count(in: snapshot) == model.count)
        var forward: [[UInt8]] = []
        try tree.forEach(in: snapshot) { key, _ in
            forward.append([UInt8](key))
            return true
        }
        #expect(forward == model.keys)
        var backward: [[UInt8]] = []
        var cursor = tree.cursor(in: snapshot)
        var valid = try cursor.seekLast()
        while valid {
            backward.append(try cursor.key)
            valid = try cursor.previous()
        }
        #expect(backward == model.keys.reversed())
    }
}
