// The object layer's public error: a code from the protocol's error table (spec/protocol.md,
// "Errors"), a sentence for a person, optional structured details, and the underlying cause.
// The daemon puts `code` and `message`/`details` on the wire as `ERR CODE JSON` unchanged, so
// every error the embedded API throws is already the one a socket client will read.

public import KeelStorage
import OrderedCollections

public struct KeelError: Error, Sendable, CustomStringConvertible {
    /// An extensible error code; the raw value is the protocol's spelling.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let parse = Code(rawValue: "PARSE")
        public static let unknownCommand = Code(rawValue: "UNKNOWN_COMMAND")
        public static let badRequest = Code(rawValue: "BAD_REQUEST")
        public static let tooLarge = Code(rawValue: "TOO_LARGE")
        public static let noSuchEntity = Code(rawValue: "NO_SUCH_ENTITY")
        public static let noSuchProperty = Code(rawValue: "NO_SUCH_PROPERTY")
        public static let noSuchContext = Code(rawValue: "NO_SUCH_CONTEXT")
        public static let notFound = Code(rawValue: "NOT_FOUND")
        public static let type = Code(rawValue: "TYPE")
        public static let validation = Code(rawValue: "VALIDATION")
        public static let deny = Code(rawValue: "DENY")
        public static let constraint = Code(rawValue: "CONSTRAINT")
        public static let conflict = Code(rawValue: "CONFLICT")
        public static let predicate = Code(rawValue: "PREDICATE")
        public static let permission = Code(rawValue: "PERMISSION")
        public static let limit = Code(rawValue: "LIMIT")
        public static let busy = Code(rawValue: "BUSY")
        public static let readOnly = Code(rawValue: "READ_ONLY")
        public static let io = Code(rawValue: "IO")
        public static let corrupt = Code(rawValue: "CORRUPT")
        public static let `internal` = Code(rawValue: "INTERNAL")
        /// The model file breaks a rule of spec/model.md (`details.problems` lists each, by JSON path).
        public static let invalidModel = Code(rawValue: "INVALID_MODEL")
        /// The store was created with another model and cannot be migrated to this one.
        public static let modelMismatch = Code(rawValue: "MODEL_MISMATCH")
        /// HISTORY after a transaction whose successors' records were pruned (Core Data's expired
        /// history token): `details.prunedThrough` is the newest pruned; read the objects again.
        public static let expired = Code(rawValue: "EXPIRED")
    }

    public var code: Code
    public var message: String
    /// Structured details for the wire (`"details"`), e.g. every validation failure.
    public var details: JSON?
    /// The error this one wraps, if any (a `StorageError` for I/O and corruption).
    public var cause: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, details: JSON? = nil, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.details = details
        self.cause = cause
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let details { text += " \(details.serialized())" }
        switch cause {
        case nil: break
        case let storage as StorageError where message.hasPrefix(storage.message):
            // An engine error read as this one (`init(_: StorageError)`): its message, with the
            // page and file, is ours; what is left to say is the log position and its cause.
            text += storage.whereabouts(after: message)
        case let cause?: text += " (cause: \(cause))"
        }
        return text
    }

    /// The object layer's reading of an engine error: disk full and fail-stop refusals are
    /// `READ_ONLY`, damage is `CORRUPT`, the rest `IO`. The message says the page and the store
    /// file when the engine's does not (a client and keelctl print only the message), and the
    /// details carry them (`page`, `file`).
    public init(_ error: StorageError) {
        let code: Code
        switch error.code {
        case .diskFull, .readOnly: code = .readOnly
        case .corrupt, .notAStore, .unsupportedVersion: code = .corrupt
        case .snapshotTooOld: code = .busy
        case .tooLarge: code = .tooLarge
        default: code = .io
        }
        var places: [String] = []
        var details: OrderedDictionary<String, JSON> = [:]
        if let page = error.page {
            details["page"] = .int(Int64(page.rawValue))
            if !page.isNamed(in: error.message) { places.append("\(page)") }
        }
        if let path = error.path {
            details["file"] = .string(path)
            if !error.message.contains(path) { places.append(path) }
        }
        let message = places.isEmpty ? error.message : "\(error.message) (\(places.joined(separator: " of ")))"
        self.init(code, message, details: details.isEmpty ? nil : .object(details), cause: error)
    }
}
