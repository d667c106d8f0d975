// The `[c]` and `[d]` options: both sides of a string comparison are folded, then compared as
// UTF-8 bytes (so the answers agree with index keys, which order strings by bytes).
//
// - `[c]`: Unicode full case folding — Foundation's `String.folding(options: .caseInsensitive,
//   locale: nil)`, which folds `ß` to `ss`, `ﬁ` to `fi`, the Kelvin sign to `k`, and is not
//   locale-sensitive (no Turkish dotless i rules).
// - `[d]`: diacritics removed — `folding(options: .diacriticInsensitive, locale: nil)`
//   (canonical decomposition, combining marks dropped): `é`, `e\u{301}` and `e` are equal.
// - `[cd]`: both.
// Text that is all ASCII folds by lowering `A`–`Z` only (that is exactly what the Unicode
// folding does to ASCII), without calling Foundation and without allocating; only non-ASCII
// text takes Foundation's path (about 1.5 µs per short string).

import Foundation

public enum TextFolding {
    /// `text` folded by `options` (unchanged for no options).
    public static func fold(_ text: String, _ options: StringOptions) -> String {
        if options.isEmpty { return text }
        if isASCII(text) {
            guard options.contains(.caseInsensitive), text.utf8.contains(where: { $0 &- 0x41 < 26 }) else { return text }
            return String(decoding: text.utf8.map(lowerASCII), as: UTF8.self)
        }
        var compare: String.CompareOptions = []
        if options.contains(.caseInsensitive) { compare.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { compare.insert(.diacriticInsensitive) }
        return text.folding(options: compare, locale: nil)
    }

    /// True when every byte of the text is ASCII.
    @inlinable
    public static func isASCII(_ text: String) -> Bool {
        if let answer = text.utf8.withContiguousStorageIfAvailable({ isASCII($0) }) { return answer }
        return text.utf8.allSatisfy { $0 < 0x80 }
    }

    @inlinable
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var combined: UInt8 = 0
        for byte in bytes { combined |= byte }
        return combined < 0x80
    }

    @inlinable
    static func lowerASCII(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }
}
