// Writing a request line, as a client sends it: `TAG SP COMMAND [SP JSON] LF` — the inverse of
// `Request.parse` (Request.swift), so that what a client writes is exactly what the daemon reads.
// The JSON writer escapes every control character, so no value can end the line early.

public import KeelModel
public import OrderedCollections

extension Request {
    /// Whether `tag` is a valid tag: 1–32 characters of `A-Z a-z 0-9 . _ : -`.
    public static func isValidTag(_ tag: String) -> Bool {
        let bytes = tag.utf8
        return !bytes.isEmpty && bytes.count <= maximumTagLength && bytes.allSatisfy(isTagByte)
    }

    /// Whether `command` is a valid command name: ASCII letters and dots, at least one.
    public static func isValidCommand(_ command: String) -> Bool {
        let bytes = command.utf8
        return !bytes.isEmpty
            && bytes.allSatisfy { $0 == UInt8(ascii: ".") || ($0 & 0x80) == 0 && (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0 & 0xDF) }
    }

    /// Appends the line, with its LF, to `out`; the JSON object only when there are arguments.
    /// The tag and command must be valid (`isValidTag`, `isValidCommand`).
    public func write(to out: inout String) {
        Self.writeLine(tag: tag, command: command, arguments: arguments, to: &out)
    }

    /// Appends the line of a request without making a `Request` first (a client's hot path:
    /// the command is sent as given, since the daemon reads it in any case).
    public static func writeLine(tag: String, command: String, arguments: OrderedDictionary<String, JSON>, to out: inout String) {
        writeLine(tag: tag, command: command, arguments: arguments, into: &out)
    }

    /// Appends the line as UTF-8 bytes (what a client sends), without making a `String` first.
    public static func writeLine(tag: String, command: String, arguments: OrderedDictionary<String, JSON>, to out: inout [UInt8]) {
        writeLine(tag: tag, command: command, arguments: arguments, into: &out)
    }

    /// Appends the line, as UTF-8 bytes, of a request whose tag is a number written in decimal
    /// (what `String(tag)` writes: KeelClient's tags), without making the tag's text.
    public static func writeLine(tag: UInt64, command: String, arguments: OrderedDictionary<String, JSON>, to out: inout [UInt8]) {
        assert(isValidCommand(command), "a request line needs a valid command")
        out.appendInteger(tag)
        writeRest(command: command, arguments: arguments, into: &out)
    }

    private static func writeLine<Output: JSONTextOutput>(
        tag: String, command: String, arguments: OrderedDictionary<String, JSON>, into out: inout Output
    ) {
        assert(isValidTag(tag) && isValidCommand(command), "a request line needs a valid tag and command")
        out.appendText(tag)
        writeRest(command: command, arguments: arguments, into: &out)
    }

    /// The line after its tag: ` COMMAND [JSON]` and the LF.
    private static func writeRest<Output: JSONTextOutput>(command: String, arguments: OrderedDictionary<String, JSON>, into out: inout Output) {
        out.appendASCII(UInt8(ascii: " "))
        out.appendText(command)
        if !arguments.isEmpty {
            out.appendASCII(UInt8(ascii: " "))
            out.append(json: .object(arguments))
        }
        out.appendASCII(UInt8(ascii: "\n"))
    }

    /// The line, with its LF.
    public func line() -> String {
        var out = ""
        write(to: &out)
        return out
    }
}
