import KeelStorage

/// The key/value pairs of a run, generated once from a seed and shared read-only by both engines
/// so that both do the same work in the same order.
///
/// Keys are 16 random bytes. Values are 100 bytes: 50 random bytes followed by one random byte
/// repeated 50 times, so a value is about 50% compressible (LZ4 or otherwise) and no more.
final class KeyValueSet: @unchecked Sendable {
    // @unchecked Sendable: both buffers are written only in init and never again; after init the
    // object is immutable, so sharing it between threads is safe.
    static let keySize = 16
    static let valueSize = 100
    static let randomValuePrefix = 50

    let count: Int
    private let keys: UnsafeMutableRawPointer
    private let values: UnsafeMutableRawPointer

    init(count: Int, seed: UInt64) {
        precondition(count >= 0)
        self.count = count
        keys = .allocate(byteCount: max(1, count * Self.keySize), alignment: 16)
        values = .allocate(byteCount: max(1, count * Self.valueSize), alignment: 16)
        var rng = SeededRandom(seed: seed)
        for i in 0..<count {
            Self.fillRandom(keys + i * Self.keySize, count: Self.keySize, &rng)
            let value = values + i * Self.valueSize
            Self.fillRandom(value, count: Self.randomValuePrefix, &rng)
            let filler = UInt8(truncatingIfNeeded: rng.next())
            (value + Self.randomValuePrefix).initializeMemory(
                as: UInt8.self, repeating: filler, count: Self.valueSize - Self.randomValuePrefix)
        }
    }

    deinit {
        keys.deallocate()
        values.deallocate()
    }

    @inline(__always)
    func key(_ i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: keys + i * Self.keySize, count: Self.keySize)
    }

    @inline(__always)
    func value(_ i: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: values + i * Self.valueSize, count: Self.valueSize)
    }

    /// Key plus value bytes of `n` pairs: the "live data" a store holding them must keep.
    static func payloadBytes(pairs n: Int) -> Int { n * (keySize + valueSize) }

    private static func fillRandom(_ p: UnsafeMutableRawPointer, count: Int, _ rng: inout SeededRandom) {
        var offset = 0
        while offset < count {
            var word = rng.next()
            let n = min(8, count - offset)
            withUnsafeBytes(of: &word) { (p + offset).copyMemory(from: $0.baseAddress!, byteCount: n) }
            offset += n
        }
    }
}

/// `n` indices drawn uniformly (with replacement) from `0..<upperBound`.
func randomIndices(_ n: Int, below upperBound: Int, seed: UInt64) -> [Int32] {
    precondition(upperBound > 0 && upperBound <= Int(Int32.max))
    var rng = SeededRandom(seed: seed)
    return (0..<n).map { _ in Int32(truncatingIfNeeded: Int.random(in: 0..<upperBound, using: &rng)) }
}
