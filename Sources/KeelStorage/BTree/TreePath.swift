/// The branch pages passed on the way down from the root to a leaf, and the child position taken
/// in each (level 0 is the root). Fixed capacity (`BTreeLimits.maxDepth`) stored inline, so a
/// descent never allocates; a path deeper than that means a corrupt tree (or a cycle).
struct TreePath {
    private typealias Frames = (
        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
    )
    // Each frame: page number in the low 32 bits, child position in the high 32 bits.
    private var frames: Frames = (
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
    )
    /// How many branch frames are on the path; the leaf is at level `depth`.
    private(set) var depth = 0
    /// How many leading frames took the rightmost child (resp. the first child): a node at level
    /// L is on the tree's right (left) edge when L ≤ rightEdge (leftEdge).
    private(set) var rightEdge = 0
    private(set) var leftEdge = 0

    mutating func push(_ page: PageNumber, position: Int, count: Int) throws(StorageError) {
        guard depth < BTreeLimits.maxDepth else {
            throw .corrupt("tree is deeper than \(BTreeLimits.maxDepth) levels (a cycle?)", page: page)
        }
        let frame = UInt64(page.rawValue) | UInt64(UInt32(position)) << 32
        withUnsafeMutableBytes(of: &frames) { $0.storeBytes(of: frame, toByteOffset: depth * 8, as: UInt64.self) }
        if rightEdge == depth && position == count { rightEdge += 1 }
        if leftEdge == depth && position == 0 { leftEdge += 1 }
        depth += 1
    }

    /// Keeps the first `depth` frames (the path down to the branch at level `depth`).
    mutating func truncate(to depth: Int) {
        precondition(depth >= 0 && depth <= self.depth)
        self.depth = depth
        rightEdge = min(rightEdge, depth)
        leftEdge = min(leftEdge, depth)
    }

    private func frame(_ level: Int) -> UInt64 {
        precondition(level >= 0 && level < depth)
        return withUnsafeBytes(of: frames) { $0.load(fromByteOffset: level * 8, as: UInt64.self) }
    }

    /// The branch page at `level`.
    func page(_ level: Int) -> PageNumber { PageNumber(UInt32(truncatingIfNeeded: frame(level))) }
    /// The child position taken at `level`.
    func position(_ level: Int) -> Int { Int(UInt32(truncatingIfNeeded: frame(level) >> 32)) }
}
