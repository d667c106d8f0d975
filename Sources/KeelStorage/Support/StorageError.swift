// The one public error type of KeelStorage (the three tiers: see Docs/Architecture.md, "Errors").
// Anything from the environment or from bytes read throws a StorageError; API misuse is a
// precondition; internal invariants are asserts citing Docs/Invariants.md.

/// An error from the storage engine: a stable `code` to match on, a message for people, where it
/// happened (page, log position, file) and the underlying cause.
public struct StorageError: Error, Sendable, CustomStringConvertible {
    /// Extensible error codes. Match with `catch let e as StorageError where e.code == .corrupt`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// An I/O call failed (EIO and friends). `errno` is set.
        public static let io = Code(rawValue: "IO")
        /// The disk (or quota) is full: ENOSPC / EDQUOT. Nothing partial was made visible.
        public static let diskFull = Code(rawValue: "DISK_FULL")
        /// Bytes on disk fail a checksum or a structural rule. `page` or `logPosition` says where.
        public static let corrupt = Code(rawValue: "CORRUPT")
        /// The file is not a Keel store (wrong magic) or not the expected kind of Keel file.
        public static let notAStore = Code(rawValue: "NOT_A_STORE")
        /// The file was written by a newer (or unknown) format version.
        public static let unsupportedVersion = Code(rawValue: "UNSUPPORTED_VERSION")
        /// The store is read-only: opened so, or fail-stopped after an fsync error.
        public static let readOnly = Code(rawValue: "READ_ONLY")
        /// A reader held its snapshot so long that the log had to move past it.
        public static let snapshotTooOld = Code(rawValue: "SNAPSHOT_TOO_OLD")
        /// A key or value is larger than the engine accepts.
        public static let tooLarge = Code(rawValue: "TOO_LARGE")
        /// A named tree does not exist, or already exists.
        public static let noSuchTree = Code(rawValue: "NO_SUCH_TREE")
        public static let treeExists = Code(rawValue: "TREE_EXISTS")
        /// The store was closed.
        public static let closed = Code(rawValue: "CLOSED")
        /// An option or argument is out of range (page size, cache size…).
        public static let invalidArgument = Code(rawValue: "INVALID_ARGUMENT")
        public var description: String { rawValue }
    }

    public var code: Code
    public var message: String
    /// The page the fault concerns, when there is one.
    public var page: PageNumber?
    /// The log offset the fault concerns, when there is one.
    public var logPosition: LogPosition?
    /// The file the fault concerns, when there is one.
    public var path: String?
    /// The errno of a failed system call, when there is one.
    public var errno: Int32?
    /// The error that caused this one.
    public var cause: (any Error & Sendable)?

    public init(
        _ code: Code, _ message: String, page: PageNumber? = nil, logPosition: LogPosition? = nil,
        path: String? = nil, errno: Int32? = nil, cause: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.page = page
        self.logPosition = logPosition
        self.path = path
        self.errno = errno
        self.cause = cause
    }

    public var description: String {
        "\(code.rawValue): \(message)" + whereabouts(after: message)
    }

    /// What a description says after `text` (this error's message, or a wrapper's that begins
    /// with it): the page, log position and file the fault concerns — each unless `text` names
    /// it already — and the cause.
    public func whereabouts(after text: String) -> String {
        var s = ""
        if let page, !page.isNamed(in: text) { s += " (\(page))" }
        if let logPosition { s += " (\(logPosition))" }
        if let path, !text.contains(path) { s += " [\(path)]" }
        if let cause { s += " — caused by: \(cause)" }
        return s
    }

    /// Convenience for corruption found on a page.
    public static func corrupt(_ message: String, page: PageNumber) -> StorageError {
        StorageError(.corrupt, message, page: page)
    }
}
