// Reading an import file (Docs/Operations.md, "Import and export"): JSON lines — one object per
// line, blank lines skipped — or one JSON array of objects, told apart by the first character
// that is not white space (`[` for an array). Every object keeps the line it starts on, so that
// each later error can name it; a syntax error names its line and column.

/// One object of an import file.
public struct ImportItem: Sendable {
    /// The 1-based line the object starts on.
    public var line: Int
    public var json: JSON

    public init(line: Int, json: JSON) {
        self.line = line
        self.json = json
    }
}

public enum ImportSource {
    /// The objects of an import file, in order. Throws `PARSE` ("line 3, column 17: expected …")
    /// for a line or element that is not JSON, `BAD_REQUEST` for one that is not an object.
    public static func read(_ bytes: [UInt8]) throws(KeelError) -> [ImportItem] {
        let start = bytes.firstIndex { !(($0 == 0x20) || ($0 == 0x0A) || ($0 == 0x0D) || ($0 == 0x09)) }
        guard let start else { return [] }
        var items: [ImportItem] = []
        if bytes[start] == UInt8(ascii: "[") {
            let lines = LineIndex(bytes)
            do throws(KeelError) {
                try bytes.withUnsafeBufferPointer { (buffer) throws(KeelError) in
                    try JSON.parseArrayElements(buffer) { (json, offset) throws(KeelError) in
                        items.append(ImportItem(line: lines.line(of: offset), json: json))
                    }
                }
            } catch {
                throw located(error, lines: lines)
            }
        } else {
            var lineStart = 0
            var line = 1
            while lineStart < bytes.count {
                let end = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.count
                let text = bytes[lineStart..<end]
                if text.contains(where: { !($0 == 0x20 || $0 == 0x0D || $0 == 0x09) }) {
                    do throws(KeelError) {
                        items.append(ImportItem(line: line, json: try JSON.parse(text)))
                    } catch {
                        var e = error
                        let column = (error.details?["offset"]?.intValue).map { Int($0) + 1 }
                        e.message = "line \(line)\(column.map { ", column \($0)" } ?? ""): \(strip(error.message))"
                        throw e
                    }
                }
                lineStart = end + 1
                line += 1
            }
        }
        for item in items {
            guard case .object = item.json else {
                throw KeelError(.badRequest, "line \(item.line): an object is expected, not \(item.json.kindName)")
            }
        }
        return items
    }

    /// A parser error with its offset turned into a line and column.
    private static func located(_ error: KeelError, lines: LineIndex) -> KeelError {
        guard let offset = error.details?["offset"]?.intValue.map({ Int($0) }) else { return error }
        var e = error
        let (line, column) = lines.position(of: offset)
        e.message = "line \(line), column \(column): \(strip(error.message))"
        return e
    }

    /// "invalid JSON at offset N: expected …" → "invalid JSON: expected …".
    private static func strip(_ message: String) -> String {
        guard let range = message.range(of: " at offset ") else { return message }
        let rest = message[range.upperBound...].drop { $0.isNumber }
        return String(message[..<range.lowerBound]) + rest
    }
}

/// Byte offsets to 1-based lines and columns.
struct LineIndex {
    /// Offsets of the LF bytes.
    private var breaks: [Int] = []

    init(_ bytes: [UInt8]) {
        for (i, b) in bytes.enumerated() where b == 0x0A { breaks.append(i) }
    }

    /// How many LFs come before `offset`, plus one.
    func line(of offset: Int) -> Int {
        var low = 0
        var high = breaks.count
        while low < high {
            let mid = (low + high) / 2
            if breaks[mid] < offset { low = mid + 1 } else { high = mid }
        }
        return low + 1
    }

    func position(of offset: Int) -> (line: Int, column: Int) {
        let line = line(of: offset)
        let lineStart = line == 1 ? 0 : breaks[line - 2] + 1
        return (line, offset - lineStart + 1)
    }
}
