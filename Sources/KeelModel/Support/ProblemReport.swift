// The problems one error reports, bounded (Docs/Protocol.md, "Errors": every failure at once, up
// to 100 in details with the total count). A request can hold a million problems — a FETCH with
// a million unknown keys, a BATCH.INSERT of a million invalid objects — and its error must stay
// small and cheap to build whatever the count: the report keeps the first `detailLimit` entries
// for `details`, counts the rest without building them (`add` takes closures), and its message
// names only the problems that fit in `messageBudget` bytes, then "… and N more".
//
// Every error that lists problems builds them here: BAD_REQUEST of the command table
// (CommandSpec) and of a fetch request, VALIDATION/DENY/CONSTRAINT of a save (SaveValidator,
// `failures`), INVALID_MODEL of the model loader and of codegen, an import plan's refusal, a
// configuration file's.

public struct ProblemReport: Sendable {
    /// At most this many entries are kept for `details`.
    public static let detailLimit = 100
    /// The problems named in a message take at most about this many bytes (UTF-8); one longer
    /// problem is cut to it.
    public static let messageBudget = 400
    /// And at most this many of them.
    public static let messageItemLimit = 10

    /// Every entry added (a unique clash adds one for each of its objects).
    public private(set) var count = 0
    /// Every problem added: entries not added as `sameProblem`.
    public private(set) var problemCount = 0
    /// The first `detailLimit` entries.
    public private(set) var entries: [JSON] = []
    /// The texts of the first problems, while they fit in the message.
    private var shown: [String] = []
    private var shownBytes = 0
    private var listingClosed = false

    public init() {}

    public var isEmpty: Bool { count == 0 }

    /// Adds a problem whose entry is its text.
    public mutating func add(_ text: @autoclosure () -> String) {
        add {
            let t = text()
            return (.string(t), t)
        }
    }

    /// Adds an entry; `make` (its JSON for details and its text for the message) runs only when
    /// either is still kept. `sameProblem`: the entry belongs to the problem added last (it is
    /// counted in `count`, not again in the message).
    public mutating func add(sameProblem: Bool = false, _ make: () -> (entry: JSON, text: String)) {
        count += 1
        if !sameProblem { problemCount += 1 }
        let wantsText = !sameProblem && !listingClosed
        let keepsEntry = entries.count < Self.detailLimit
        guard keepsEntry || wantsText else { return }
        let (entry, text) = make()
        if keepsEntry { entries.append(entry) }
        if wantsText { show(text) }
    }

    private mutating func show(_ text: String) {
        guard shown.count < Self.messageItemLimit else {
            listingClosed = true
            return
        }
        let bytes = text.utf8.count
        if shown.isEmpty {
            shown.append(bytes > Self.messageBudget ? Self.cut(text, to: Self.messageBudget) : text)
            shownBytes = min(bytes, Self.messageBudget)
        } else if shownBytes + 2 + bytes <= Self.messageBudget {
            shown.append(text)
            shownBytes += 2 + bytes
        } else {
            listingClosed = true
        }
    }

    /// The problems for a message: the first ones that fit (at most `limit`), joined by
    /// `separator`, then "… and N more" for the rest.
    public func listing(separator: String = "; ", limit: Int = messageItemLimit) -> String {
        let named = shown.prefix(max(limit, 1))
        var text = named.joined(separator: separator)
        let more = problemCount - named.count
        if more > 0 { text += (named.isEmpty ? "" : separator) + "… and \(more) more" }
        return text
    }

    /// `{key: [the kept entries], countKey: count}`.
    public func details(_ key: String = "problems", countKey: String = "problemCount") -> JSON {
        [key: .array(entries), countKey: .int(Int64(count))]
    }

    /// `text` cut to at most `bytes` UTF-8 bytes (on a character boundary), with "…" when cut.
    public static func cut(_ text: String, to bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var out = ""
        var used = 0
        for c in text {
            let n = c.utf8.count
            if used + n > bytes - 3 { break }
            out.append(c)
            used += n
        }
        return out + "…"
    }
}
