// Reply lines (spec/protocol.md, "Framing"): `TAG OK [JSON]`, `TAG ERR CODE JSON`,
// `TAG ROW JSON`, `* EVENT JSON`, each ending in LF. Every request gets exactly one final line
// (OK or ERR); ROW lines come before it; EVENT lines only between replies.

import Collections
public import KeelModel

public enum Reply: Sendable, Equatable {
    case ok(tag: String, JSON?)
    case error(tag: String, code: KeelError.Code, message: String, details: JSON?)
    case row(tag: String, JSON)
    case event(JSON)

    /// `ERR` from an error: its code, message and details.
    public static func error(tag: String, _ error: KeelError) -> Reply {
        .error(tag: tag, code: error.code, message: error.message, details: error.details)
    }

    /// Whether this line ends a request's reply.
    public var isFinal: Bool {
        switch self {
        case .ok, .error: true
        case .row, .event: false
        }
    }

    /// The line, with its LF.
    public func line() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    /// Appends the line, with its LF, to `out`.
    public func write(to out: inout String) {
        switch self {
        case .ok(let tag, let json):
            out += tag
            out += " OK"
            if let json {
                out += " "
                json.write(to: &out)
            }
        case .error(let tag, let code, let message, let details):
            out += tag
            out += " ERR "
            out += code.rawValue
            out += " "
            var body: OrderedDictionary<String, JSON> = ["message": .string(message)]
            if let details { body["details"] = details }
            JSON.object(body).write(to: &out)
        case .row(let tag, let json):
            out += tag
            out += " ROW "
            json.write(to: &out)
        case .event(let json):
            out += "* EVENT "
            json.write(to: &out)
        }
        out += "\n"
    }

    /// Parses a reply line (without its LF), as a client reads them.
    public static func parse(_ line: [UInt8]) throws(ParseFailure) -> Reply {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else {
            throw ParseFailure(tag: nil, message: "a reply line is TAG KIND [...]")
        }
        let tag = String(decoding: line[..<space], as: UTF8.self)
        let rest = line[(space + 1)...]
        let kindEnd = rest.firstIndex(of: UInt8(ascii: " ")) ?? rest.endIndex
        let kind = String(decoding: rest[..<kindEnd], as: UTF8.self)
        let tail = kindEnd < rest.endIndex ? rest[(kindEnd + 1)...] : rest[rest.endIndex...]
        func json(_ bytes: ArraySlice<UInt8>) throws(ParseFailure) -> JSON {
            do { return try JSON.parse(bytes) } catch { throw ParseFailure(tag: tag, message: error.message) }
        }
        switch kind {
        case "OK":
            return .ok(tag: tag, tail.isEmpty ? JSON?.none : try json(tail))
        case "ROW":
            return .row(tag: tag, try json(tail))
        case "EVENT" where tag == "*":
            return .event(try json(tail))
        case "ERR":
            guard let codeEnd = tail.firstIndex(of: UInt8(ascii: " ")) else {
                throw ParseFailure(tag: tag, message: "ERR must be followed by a code and a JSON object")
            }
            let code = KeelError.Code(rawValue: String(decoding: tail[..<codeEnd], as: UTF8.self))
            let body = try json(tail[(codeEnd + 1)...])
            return .error(tag: tag, code: code, message: body["message"]?.stringValue ?? "", details: body["details"])
        default:
            throw ParseFailure(tag: tag, message: "unknown reply kind \(kind)")
        }
    }
}
