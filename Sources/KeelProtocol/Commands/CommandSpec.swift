// The command table's row type: everything one command of the protocol is — its name, who may
// run it, the request keys it takes (and their kinds), what it answers. The one table
// (`CommandTable.swift`) drives the daemon's dispatch and argument checking, the client's
// requests, and the command reference in Docs/Protocol.md (a test keeps the doc and the table
// in step).

public import KeelModel

/// The JSON kind a request key takes.
public enum ArgumentKind: String, Sendable {
    case string, integer, boolean, object, array
    /// An array of strings.
    case strings
    /// Any JSON value.
    case any

    func accepts(_ value: JSON) -> Bool {
        switch (self, value) {
        case (.any, _): true
        case (.string, .string), (.boolean, .bool), (.object, .object), (.array, .array): true
        case (.integer, .int): true
        case (.integer, .double(let d)): d.rounded() == d && abs(d) < 9.0e15
        case (.strings, .array(let items)): items.allSatisfy { $0.stringValue != nil }
        default: false
        }
    }

    var phrase: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .boolean: "a boolean"
        case .object: "an object"
        case .array: "an array"
        case .strings: "an array of strings"
        case .any: "any JSON value"
        }
    }
}

/// One request key of a command.
public struct ArgumentSpec: Sendable {
    public let key: String
    public let kind: ArgumentKind
    public let isRequired: Bool
    public let summary: String

    public init(_ key: String, _ kind: ArgumentKind, required: Bool = false, _ summary: String) {
        self.key = key
        self.kind = kind
        self.isRequired = required
        self.summary = summary
    }
}

/// Which group a command belongs to (the sections of Docs/Protocol.md).
public enum CommandGroup: String, Sendable, CaseIterable {
    case connection = "Connection"
    case contexts = "Contexts"
    case objects = "Objects"
    case fetching = "Fetching"
    case batch = "Batch requests"
    case notifications = "Changes and history"
    case admin = "Administration"
}

/// One command of the protocol. A class: every request the event loop hands a session carries its
/// spec, and a struct of strings and an array was retained field by field at each copy.
public final class CommandSpec: Sendable {
    /// Upper-case name as on the wire (`BATCH.INSERT`).
    public let name: String
    public let group: CommandGroup
    /// Only admin peers may run it (`PERMISSION` otherwise).
    public let isAdmin: Bool
    /// It reads or changes a context, named by `"context"` (default `"main"`).
    public let takesContext: Bool
    public let arguments: [ArgumentSpec]
    /// The final line, and any ROW lines before it, in the doc's words.
    public let reply: String
    public let summary: String

    public init(
        _ name: String, group: CommandGroup, admin: Bool = false, context: Bool = false,
        arguments: [ArgumentSpec] = [], reply: String, _ summary: String
    ) {
        self.name = name
        self.group = group
        self.isAdmin = admin
        self.takesContext = context
        self.arguments = arguments
        self.reply = reply
        self.summary = summary
    }

    /// Every key this command accepts (its arguments, plus `context` when it takes one).
    public var acceptedKeys: [String] {
        arguments.map(\.key) + (takesContext && !arguments.contains { $0.key == "context" } ? ["context"] : [])
    }

    /// Checks a request's keys: each known, of its kind, every required one present. Throws
    /// `BAD_REQUEST` naming every problem (up to `ProblemReport.detailLimit` in
    /// `details.problems`, the total in `details.problemCount`). The keys the command takes are
    /// named once, with the first unknown key: a request of a million unknown keys costs a count,
    /// not a million copies of that list.
    public func validate(_ request: Request) throws(KeelError) {
        var problems = ProblemReport()
        var namedAccepted = false
        for (key, value) in request.arguments {
            if key == "context", takesContext, !arguments.contains(where: { $0.key == "context" }) {
                if value.stringValue == nil { problems.add("\"context\" must be a string, not \(value.kindName)") }
                continue
            }
            guard let spec = arguments.first(where: { $0.key == key }) else {
                let first = !namedAccepted
                namedAccepted = true
                problems.add("\(Self.quoted(key)) is not a key of \(name)" + (first ? acceptedPhrase : ""))
                continue
            }
            if !spec.kind.accepts(value) {
                problems.add("\"\(key)\" must be \(spec.kind.phrase), not \(value.kindName)")
            }
        }
        for spec in arguments where spec.isRequired && request.arguments[spec.key] == nil {
            problems.add("\"\(spec.key)\" is required")
        }
        guard problems.isEmpty else {
            throw KeelError(.badRequest, "\(name): " + problems.listing(), details: problems.details())
        }
    }

    /// " (it takes "a", "b")", or " (it takes none)".
    private var acceptedPhrase: String {
        let known = acceptedKeys.map { "\"\($0)\"" }.joined(separator: ", ")
        return known.isEmpty ? " (it takes none)" : " (it takes \(known))"
    }

    /// A request key in quotes, cut when long (a key can be megabytes).
    private static func quoted(_ key: String) -> String {
        "\"\(ProblemReport.cut(key, to: 100))\""
    }
}
