/// The size limits of B+tree keys, values and cells, as functions of the page size.
///
/// - usable space U = pageSize − 32 (node header, see Node.swift);
/// - maxCellSize = U / 4 − 2: with its 2-byte slot a cell never takes more than a quarter of the
///   usable space, so any four cells fit one page and splitting an overfull page in two always works;
/// - maxKeySize = min(2048, maxCellSize − 20): room left for the largest cell overhead
///   (key-length varint ≤ 2, value tag 1, overflow reference 13; branch: child 4 + varint 2).
///
/// | page size | maxCellSize | maxKeySize |
/// |-----------|-------------|------------|
/// | 4096      | 1014        | 994        |
/// | 8192      | 2038        | 2018       |
/// | 16384     | 4086        | 2048       |
/// | 65536     | 16374       | 2048       |
///
/// A value is stored inline when its whole leaf cell fits `maxCellSize`, otherwise in an
/// overflow chain (LZ4-compressed when that saves at least an eighth).
public enum BTreeLimits {
    /// The largest value `BTree.put` accepts: 1 GiB.
    public static let maxValueSize = 1 << 30
    /// The longest path from a root to a leaf that a tree may have (page numbers are 32-bit and
    /// every branch has at least two children, so no valid tree is deeper). Deeper means corrupt.
    public static let maxDepth = 32
    public static let keySizeCap = 2048

    /// The largest encoded cell a node page of this size holds.
    public static func maxCellSize(pageSize: Int) -> Int { (pageSize - Node.headerSize) / 4 - Node.slotSize }

    /// The longest key a tree on pages of this size accepts; longer keys throw `.tooLarge`.
    public static func maxKeySize(pageSize: Int) -> Int { min(keySizeCap, maxCellSize(pageSize: pageSize) - 20) }
}
