// A request line: `TAG SP COMMAND [SP JSON] LF` (spec/protocol.md, "Framing").
//
// - TAG: 1–32 characters of `A-Z a-z 0-9 . _ : -`, echoed on every line of the reply.
// - COMMAND: letters and dots, case-insensitive (`FETCH`, `batch.insert`); kept upper-cased.
// - JSON: one JSON object, the rest of the line; omitted for commands without arguments.
// A line that breaks this is `PARSE`, answered with the tag when one could be read, else `*`.

public import OrderedCollections
public import KeelModel

public struct Request: Sendable, Equatable {
    public var tag: String
    /// The command name, upper-cased.
    public var command: String
    /// The JSON object's members (empty when the line had none).
    public var arguments: OrderedDictionary<String, JSON>

    public init(tag: String, command: String, arguments: OrderedDictionary<String, JSON> = [:]) {
        self.tag = tag
        self.command = command.uppercased()
        self.arguments = arguments
    }

    /// For a command already upper-cased (the parser's).
    init(tag: String, upperCommand: String, arguments: OrderedDictionary<String, JSON>) {
        self.tag = tag
        self.command = upperCommand
        self.arguments = arguments
    }

    public static let maximumTagLength = 32

    /// Whether `byte` may appear in a tag.
    @inline(__always)
    static func isTagByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// The tag at the start of `line` — its bytes up to the first space, when they form a valid
    /// tag — for answering a line that is otherwise malformed or too long; else nil.
    public static func leadingTag(of line: some Collection<UInt8>) -> String? {
        var tag: [UInt8] = []
        for byte in line {
            if byte == UInt8(ascii: " ") { break }
            guard isTagByte(byte), tag.count < maximumTagLength else { return nil }
            tag.append(byte)
        }
        return tag.isEmpty ? nil : String(decoding: tag, as: UTF8.self)
    }

    /// Parses one line (without its LF). Throws `PARSE`, with the tag in `ParseFailure.tag` when
    /// one could be read.
    public static func parse(_ line: [UInt8]) throws(ParseFailure) -> Request {
        var i = 0
        let n = line.count
        while i < n, line[i] != UInt8(ascii: " ") { i += 1 }
        let tagBytes = line[0..<i]
        guard !tagBytes.isEmpty else {
            throw ParseFailure(tag: nil, message: n == 0 ? "empty line: expected TAG COMMAND [JSON]" : "the line starts with a space: expected a tag")
        }
        guard tagBytes.count <= maximumTagLength, tagBytes.allSatisfy(isTagByte) else {
            throw ParseFailure(tag: nil, message: "a tag is 1–32 characters of A-Z a-z 0-9 . _ : -")
        }
        let tag = String(decoding: tagBytes, as: UTF8.self)
        guard i < n else { throw ParseFailure(tag: tag, message: "a command must follow the tag") }
        i += 1
        let commandStart = i
        while i < n, line[i] != UInt8(ascii: " ") { i += 1 }
        let commandBytes = line[commandStart..<i]
        guard !commandBytes.isEmpty else { throw ParseFailure(tag: tag, message: "a command must follow the tag after one space") }
        guard commandBytes.allSatisfy({ $0 == UInt8(ascii: ".") || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0 & 0xDF) && ($0 & 0x80) == 0 })
        else {
            throw ParseFailure(tag: tag, message: "a command is letters and dots")
        }
        // ASCII letters and dots only (checked above): upper-case by clearing bit 5 of letters.
        let command = String(decoding: commandBytes.map { $0 == UInt8(ascii: ".") ? $0 : $0 & 0xDF }, as: UTF8.self)
        guard i < n else { return Request(tag: tag, upperCommand: command, arguments: [:]) }
        let json: JSON
        do {
            json = try JSON.parse(line[(i + 1)...])
        } catch {
            throw ParseFailure(tag: tag, message: error.message, details: error.details)
        }
        guard case .object(let members) = json else {
            throw ParseFailure(tag: tag, message: "the arguments must be one JSON object, not \(json.kindName)")
        }
        return Request(tag: tag, upperCommand: command, arguments: members)
    }
}

/// A line that is not `TAG COMMAND [JSON-object]`.
public struct ParseFailure: Error, Sendable, Equatable {
    /// The tag, when the line had a well-formed one.
    public var tag: String?
    public var message: String
    public var details: JSON?

    public init(tag: String?, message: String, details: JSON? = nil) {
        self.tag = tag
        self.message = message
        self.details = details
    }

    /// The reply: `TAG ERR PARSE {...}`, or `* ERR PARSE {...}` without a tag.
    public var reply: Reply {
        .error(tag: tag ?? "*", KeelError(.parse, message, details: details))
    }
}
