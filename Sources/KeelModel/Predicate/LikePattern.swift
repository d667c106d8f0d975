// LIKE patterns: `*` matches any run of characters (also none), `?` exactly one character
// (one Unicode scalar), `\*`, `\?`, `\\` match those characters literally; the whole text must
// match. Matching never backtracks beyond one level: the pattern is cut at its stars into
// segments, the first is anchored at the start, the last at the end, and each middle segment is
// taken at its leftmost occurrence after the previous one (leftmost is always safe for segments
// separated by `*`). A segment matched from a given start consumes a fixed length, so the whole
// match costs at most O(text × pattern) — no input makes it exponential.

struct LikePattern: Sendable, Hashable {
    enum Element: Sendable, Hashable {
        case byte(UInt8)
        /// `?`: one Unicode scalar (1–4 UTF-8 bytes).
        case scalar
    }

    /// Segments between stars; `segments.count == stars + 1`.
    let segments: [[Element]]

    /// Compiles a pattern from its (already folded) text.
    init(_ pattern: String) {
        var segments: [[Element]] = [[]]
        var escaped = false
        for byte in pattern.utf8 {
            if escaped {
                segments[segments.count - 1].append(.byte(byte))
                escaped = false
                continue
            }
            switch byte {
            case UInt8(ascii: "\\"): escaped = true
            case UInt8(ascii: "*"): segments.append([])
            case UInt8(ascii: "?"): segments[segments.count - 1].append(.scalar)
            default: segments[segments.count - 1].append(.byte(byte))
            }
        }
        if escaped { segments[segments.count - 1].append(.byte(UInt8(ascii: "\\"))) }
        self.segments = segments
    }

    /// Whether the whole of `text` matches; `lower` lowers ASCII letters of the text on the fly
    /// (the `[c]` fast path for ASCII text).
    func matches(_ text: UnsafeBufferPointer<UInt8>, lower: Bool) -> Bool {
        let n = text.count
        if segments.count == 1 { return match(segments[0], text, at: 0, lower: lower) == n }
        guard var position = match(segments[0], text, at: 0, lower: lower) else { return false }
        for segment in segments[1..<(segments.count - 1)] where !segment.isEmpty {
            var found: Int? = nil
            var start = position
            while start <= n {
                if let end = match(segment, text, at: start, lower: lower) {
                    found = end
                    break
                }
                start += 1
            }
            guard let end = found else { return false }
            position = end
        }
        let last = segments[segments.count - 1]
        if last.isEmpty { return true }
        var start = position
        while start <= n {
            if match(last, text, at: start, lower: lower) == n { return true }
            start += 1
        }
        return false
    }

    /// Where a segment matched at `start` ends, or nil.
    private func match(_ segment: [Element], _ text: UnsafeBufferPointer<UInt8>, at start: Int, lower: Bool) -> Int? {
        var i = start
        for element in segment {
            guard i < text.count else { return nil }
            switch element {
            case .byte(let b):
                let t = lower ? TextFolding.lowerASCII(text[i]) : text[i]
                guard t == b else { return nil }
                i += 1
            case .scalar:
                // Only a scalar's first byte can start it: continuation bytes (10xxxxxx) never do.
                guard text[i] & 0xC0 != 0x80 else { return nil }
                i += 1
                while i < text.count, text[i] & 0xC0 == 0x80 { i += 1 }
            }
        }
        return i
    }
}
