import Testing

@testable import KeelStorage

/// An 8-byte big-endian key, so byte order is numeric order.
func numericKey(_ i: Int) -> [UInt8] {
    withUnsafeBytes(of: UInt64(i).bigEndian) { [UInt8]($0) }
}

/// A value of `count` bytes derived from `seed` (incompressible-looking unless `pattern`).
func testValue(_ seed: Int, count: Int, compressible: Bool = false) -> [UInt8] {
    if compressible { return (0..<count).map { UInt8(truncatingIfNeeded: ($0 / 64) &+ seed) } }
    var rng = SeededRandom(seed: UInt64(bitPattern: Int64(seed)) &+ 0x5EED)
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
}

/// Checks a tree completely: the verifier finds nothing, no committed page was written in place,
/// and every allocated page is either reachable from `roots` exactly once or free (no leaks).
func expectSound(
    _ roots: [BTree], in sink: MemoryPageSink, sourceLocation: SourceLocation = #_sourceLocation
) {
    var visited = Set<PageNumber>()
    var seen: [PageNumber: Int] = [:]
    for tree in roots {
        let faults = tree.verify(in: sink, treeName: nil, visited: &visited) { number, _ in seen[number, default: 0] += 1 }
        #expect(faults.isEmpty, "verify faults: \(faults.prefix(5))", sourceLocation: sourceLocation)
    }
    #expect(sink.mutatedCommittedPages().isEmpty, "committed pages written in place", sourceLocation: sourceLocation)
    var leaked: [PageNumber] = []
    for raw in 1...UInt32(max(1, sink.allocatedPageCount)) where sink.allocatedPageCount > 0 {
        let number = PageNumber(raw)
        let reached = seen[number] ?? 0
        if sink.isFree(number) {
            #expect(reached == 0, "free \(number) is reachable", sourceLocation: sourceLocation)
        } else if reached != 1 {
            leaked.append(number)
        }
    }
    #expect(leaked.isEmpty, "pages neither free nor reachable exactly once: \(leaked.prefix(10))",
            sourceLocation: sourceLocation)
}

/// A sorted in-memory model of a tree's contents.
struct SortedModel {
    private(set) var keys: [[UInt8]] = []
    private(set) var values: [[UInt8]: [UInt8]] = [:]

    var count: Int { keys.count }

    /// The first index whose key is ≥ `key`.
    func lowerBound(_ key: [UInt8]) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if keys[mid].lexicographicallyPrecedes(key) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    mutating func put(_ key: [UInt8], _ value: [UInt8]) {
        if values.updateValue(value, forKey: key) == nil { keys.insert(key, at: lowerBound(key)) }
    }

    @discardableResult
    mutating func delete(_ key: [UInt8]) -> Bool {
        guard values.removeValue(forKey: key) != nil else { return false }
        keys.remove(at: lowerBound(key))
        return true
    }

    subscript(key: [UInt8]) -> [UInt8]? { values[key] }

    /// Entries between the bounds, ascending or descending.
    func range(from lower: KeyBound?, to upper: KeyBound?, reverse: Bool) -> [[UInt8]] {
        var result = keys.filter { key in
            if let lower {
                if key.lexicographicallyPrecedes(lower.key) || (key == lower.key && !lower.isInclusive) { return false }
            }
            if let upper {
                if upper.key.lexicographicallyPrecedes(key) || (key == upper.key && !upper.isInclusive) { return false }
            }
            return true
        }
        if reverse { result.reverse() }
        return result
    }
}

/// The number of branch levels above the leaves.
func treeDepth(_ tree: BTree, _ source: some PageSource) throws -> Int {
    var depth = 0
    var number = tree.root
    while case let node = try Node(source.page(number), number), !node.isLeaf {
        depth += 1
        number = try node.child(at: 0)
    }
    return depth
}
