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
        writeLine(to: &out)
    }

    /// Appends the line, with its LF, to `out` as UTF-8 (keeld's output).
    public func write(to out: inout [UInt8]) {
        writeLine(to: &out)
    }

    private func writeLine<Output: JSONTextOutput>(to out: inout Output) {
        switch self {
        case .ok(let tag, let json):
            out.appendText(tag)
            out.appendText(" OK")
            if let json {
                out.appendText(" ")
                out.append(json: json)
            }
        case .error(let tag, let code, let message, let details):
            out.appendText(tag)
            out.appendText(" ERR ")
            out.appendText(code.rawValue)
            out.appendText(" ")
            var body: OrderedDictionary<String, JSON> = ["message": .string(message)]
            if let details { body["details"] = details }
            out.append(json: .object(body))
        case .row(let tag, let json):
            out.appendText(tag)
            out.appendText(" ROW ")
            out.append(json: json)
        case .event(let json):
            out.appendText("* EVENT ")
            out.append(json: json)
        }
        out.appendText("\n")
    }

    /// Parses a reply line (without its LF), as a client reads them.
    public static func parse(_ line: [UInt8]) throws(ParseFailure) -> Reply {
        try ReplyHead.parse(line).reply(line)
    }
}

/// The start of a reply line — its tag and kind, and where its JSON begins — read without
/// parsing the JSON: what a client needs to route a line to its call. `reply(_:)` parses the
/// rest, on whichever thread wants the value.
public struct ReplyHead: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case ok, row, event
        case error(KeelError.Code)
    }

    /// The tag as a number when it is one written the way `String(number)` writes it (decimal
    /// digits, no leading zero: KeelClient's tags), read straight from the line's bytes so that
    /// a client routes a reply without making a `String` of its tag; nil for any other tag.
    public let number: UInt64?
    /// The tag's text when it is not such a number (`*`, or a tag another client chose).
    private let text: String?
    public let kind: Kind
    /// Where the JSON starts in the line (the line's length when there is none).
    public let payloadStart: Int

    /// The tag, as the line has it.
    public var tag: String { number.map { String($0) } ?? text ?? "" }

    private init(tag bytes: UnsafeBufferPointer<UInt8>, kind: Kind, payloadStart: Int) {
        number = Self.decimal(bytes)
        text = number == nil ? String(decoding: bytes, as: UTF8.self) : nil
        self.kind = kind
        self.payloadStart = payloadStart
    }

    /// `bytes` as a number when they are its canonical decimal form (what `String(n)` gives).
    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard let first = bytes.first, first != UInt8(ascii: "0") || bytes.count == 1, bytes.count <= 20 else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(digit))
            if o1 || o2 { return nil }
            value = sum
        }
        return value
    }

    /// Whether the line ends a request's reply.
    public var isFinal: Bool {
        switch kind {
        case .ok, .error: true
        case .row, .event: false
        }
    }

    /// Reads the tag and kind of a reply line (without its LF).
    public static func parse(_ line: [UInt8]) throws(ParseFailure) -> ReplyHead {
        try line.withUnsafeBufferPointer { bytes in Result { () throws(ParseFailure) in try parse(bytes) } }.get()
    }

    /// Reads the tag and kind of a reply line (without its LF) in memory — a client's read
    /// buffer — comparing bytes in place: nothing is allocated but a tag's text when the tag is
    /// not a number, and an ERR's code.
    public static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(ParseFailure) -> ReplyHead {
        let count = line.count
        var space = 0
        while space < count, line[space] != UInt8(ascii: " ") { space += 1 }
        guard space < count else {
            throw ParseFailure(tag: nil, message: "a reply line is TAG KIND [...]")
        }
        let tag = UnsafeBufferPointer(rebasing: line[..<space])
        let kindStart = space + 1
        var kindEnd = kindStart
        while kindEnd < count, line[kindEnd] != UInt8(ascii: " ") { kindEnd += 1 }
        let tailStart = min(kindEnd + 1, count)
        let kind = UnsafeBufferPointer(rebasing: line[kindStart..<kindEnd])
        if Self.equals(kind, "OK") {
            return ReplyHead(tag: tag, kind: .ok, payloadStart: tailStart)
        } else if Self.equals(kind, "ROW") {
            return ReplyHead(tag: tag, kind: .row, payloadStart: tailStart)
        } else if Self.equals(kind, "EVENT") && Self.equals(tag, "*") {
            return ReplyHead(tag: tag, kind: .event, payloadStart: tailStart)
        } else if Self.equals(kind, "ERR") {
            var codeEnd = tailStart
            while codeEnd < count, line[codeEnd] != UInt8(ascii: " ") { codeEnd += 1 }
            guard codeEnd < count else {
                throw ParseFailure(tag: String(decoding: tag, as: UTF8.self), message: "ERR must be followed by a code and a JSON object")
            }
            let code = KeelError.Code(rawValue: String(decoding: UnsafeBufferPointer(rebasing: line[tailStart..<codeEnd]), as: UTF8.self))
            return ReplyHead(tag: tag, kind: .error(code), payloadStart: codeEnd + 1)
        }
        throw ParseFailure(tag: String(decoding: tag, as: UTF8.self), message: "unknown reply kind \(String(decoding: kind, as: UTF8.self))")
    }

    /// Whether `bytes` are exactly the ASCII `word`.
    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        word.withUTF8Buffer { word in
            guard bytes.count == word.count else { return false }
            for i in 0..<word.count where bytes[i] != word[i] { return false }
            return true
        }
    }

    /// The JSON after the head (nil when the line has none), parsed.
    public func payload(_ line: [UInt8]) throws(ParseFailure) -> JSON? {
        try line.withUnsafeBufferPointer { bytes in Result { () throws(ParseFailure) in try payload(bytes) } }.get()
    }

    /// The JSON after the head of a line in memory (nil when the line has none), parsed.
    public func payload(_ line: UnsafeBufferPointer<UInt8>) throws(ParseFailure) -> JSON? {
        guard payloadStart < line.count else { return nil }
        do { return try JSON.parse(UnsafeBufferPointer(rebasing: line[payloadStart...])) } catch { throw ParseFailure(tag: tag, message: error.message) }
    }

    /// The whole reply of `line`, whose head this is.
    public func reply(_ line: [UInt8]) throws(ParseFailure) -> Reply {
        try line.withUnsafeBufferPointer { bytes in Result { () throws(ParseFailure) in try reply(bytes) } }.get()
    }

    /// The whole reply of a line in memory, whose head this is.
    public func reply(_ line: UnsafeBufferPointer<UInt8>) throws(ParseFailure) -> Reply {
        if case .ok = kind { return .ok(tag: tag, try payload(line)) }
        guard let body = try payload(line) else {
            throw ParseFailure(tag: tag, message: "a ROW, EVENT or ERR line carries a JSON value")
        }
        switch kind {
        case .ok: return .ok(tag: tag, body)
        case .row: return .row(tag: tag, body)
        case .event: return .event(body)
        case .error(let code): return .error(tag: tag, code: code, message: body["message"]?.stringValue ?? "", details: body["details"])
        }
    }
}
