/// One end of a key range for `BTree.forEach(from:to:reverse:in:_:)`.
public struct KeyBound: Sendable, Hashable {
    public var key: [UInt8]
    /// Whether an entry whose key equals `key` is inside the range.
    public var isInclusive: Bool

    public init(_ key: [UInt8], inclusive: Bool) {
        self.key = key
        self.isInclusive = inclusive
    }

    public static func inclusive(_ key: [UInt8]) -> KeyBound { KeyBound(key, inclusive: true) }
    public static func exclusive(_ key: [UInt8]) -> KeyBound { KeyBound(key, inclusive: false) }

    /// Whether `key` is on the inside of this bound taken as a lower bound.
    func admitsAsLower(_ other: UnsafeRawBufferPointer) -> Bool {
        let c = key.withUnsafeBytes { Node.compare(other, $0) }
        return c > 0 || (c == 0 && isInclusive)
    }

    /// Whether `key` is on the inside of this bound taken as an upper bound.
    func admitsAsUpper(_ other: UnsafeRawBufferPointer) -> Bool {
        let c = key.withUnsafeBytes { Node.compare(other, $0) }
        return c < 0 || (c == 0 && isInclusive)
    }
}
