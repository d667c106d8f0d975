// What keelctl writes: results on standard output, errors and progress on standard error, and
// the failure that makes it exit 1.

import Foundation
import KeelModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An operation that failed: keelctl prints `keelctl: MESSAGE` on standard error and exits 1.
struct Failure: Error, CustomStringConvertible {
    let message: String

    init(_ message: String) { self.message = message }

    init(_ error: KeelError) { self.message = error.message }

    var description: String { message }
}

enum Output {
    /// One line on standard error.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Whether standard error is a terminal (progress is drawn only then).
    static var errorIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }

    /// `1234567` → `1.2 MiB`.
    static func bytes(_ n: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n)
        var unit = 0
        while abs(value) >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(n) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// A table: columns padded to their widest cell (at most `maxWidth`, longer cells cut with …),
    /// numbers right-aligned.
    static func table(_ header: [String], _ rows: [[String]], maxWidth: Int = 40) -> String {
        func clip(_ s: String) -> String {
            let flat = s.replacingOccurrences(of: "\n", with: " ")
            return flat.count > maxWidth ? String(flat.prefix(maxWidth - 1)) + "…" : flat
        }
        let cells = ([header] + rows).map { $0.map(clip) }
        var widths = [Int](repeating: 0, count: header.count)
        for row in cells { for (i, c) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], c.count) } }
        var numeric = [Bool](repeating: true, count: header.count)
        for row in cells.dropFirst() {
            for (i, c) in row.enumerated() where i < numeric.count && !c.isEmpty && Double(c) == nil { numeric[i] = false }
        }
        return cells.map { row in
            row.enumerated().map { i, c in
                let pad = String(repeating: " ", count: max(0, widths[i] - c.count))
                return numeric[i] ? pad + c : c + pad
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}
