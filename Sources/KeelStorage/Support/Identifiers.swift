// Strong identifiers of the storage engine. Each is a distinct RawRepresentable struct so a page
// number can never be passed where a transaction ID or a log position is meant (bbolt's Pgid/Txid).

/// The number of a page in the page file: page N lives at byte offset N × pageSize.
/// Page 0 is the file header (meta page); 0 is never a valid child or overflow pointer.
public struct PageNumber: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }
    @inlinable public init(_ value: UInt32) { self.rawValue = value }
    /// The meta page (file header).
    public static let meta = PageNumber(0)
    @inlinable public static func < (a: PageNumber, b: PageNumber) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "page \(rawValue)" }

    /// Whether `text` names this page ("page 7", not followed by another digit: "page 73" is
    /// another page), so that a message that already says where is not told it twice.
    public func isNamed(in text: String) -> Bool {
        let name = Array(description.utf8)
        let bytes = Array(text.utf8)
        guard bytes.count >= name.count else { return false }
        for start in 0...(bytes.count - name.count) where bytes[start..<start + name.count].elementsEqual(name) {
            let end = start + name.count
            if end == bytes.count || !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { return true }
        }
        return false
    }
}

/// The identity of a committed write transaction. Strictly increasing over the life of a store
/// (across checkpoints and reopens); stamped into every page it writes and every log frame.
public struct TransactionID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }
    @inlinable public init(_ value: UInt64) { self.rawValue = value }
    @inlinable public static func < (a: TransactionID, b: TransactionID) -> Bool { a.rawValue < b.rawValue }
    @inlinable public var next: TransactionID { TransactionID(rawValue + 1) }
    public var description: String { "txn \(rawValue)" }
}

/// A byte offset in the write-ahead log file.
public struct LogPosition: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }
    @inlinable public init(_ value: UInt64) { self.rawValue = value }
    @inlinable public static func < (a: LogPosition, b: LogPosition) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "log@\(rawValue)" }
}

/// The global sequence number of a log frame. Never reset (not even when the log file is reset
/// at a checkpoint), so a reader's snapshot — "every frame up to sequence S" — stays meaningful
/// across checkpoints. Sequence 0 means "the page file's own copy".
public struct FrameSequence: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }
    @inlinable public init(_ value: UInt64) { self.rawValue = value }
    public static let pageFile = FrameSequence(0)
    @inlinable public static func < (a: FrameSequence, b: FrameSequence) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "frame \(rawValue)" }
}
