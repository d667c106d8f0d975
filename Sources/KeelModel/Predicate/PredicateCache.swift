// Parsed predicates (and sort keys) by their text: the protocol repeats the same predicate text with other `%@`
// arguments (as an application reuses an NSPredicate template), so the parse — the lexer over
// the text's scalars and the recursive descent — is done once per text and the tree reused.
// What is cached is the parse alone, which depends on nothing but the text and the limits: the
// model, the entity, the arguments and `$VARS` are bound per request (binding is a walk of the
// tree), so a different model, new indexes or other arguments can never meet a stale entry.
// SQLite's prepared statements are the analogue; binding is the part that stays per request.
//
// Refused texts are not cached (the error is recomputed, with its position, each time). The
// cache is bounded: when full it is emptied and refilled (the working set of a server is a few
// hundred texts; a client sending endless distinct texts gets a parse per request, as before).

import Synchronization

enum PredicateCache {
    static let capacity = 512

    private struct Key: Hashable {
        let text: String
        let limits: PredicateLimits
    }

    private static let entries = Mutex<[Key: KeelPredicate]>([:])

    /// `KeelPredicate.parse(text, limits:)`, from the cache when this text was parsed before.
    static func parse(_ text: String, limits: PredicateLimits = .standard) throws(KeelError) -> KeelPredicate {
        let key = Key(text: text, limits: limits)
        if let hit = entries.withLock({ $0[key] }) { return hit }
        let parsed = try KeelPredicate.parse(text, limits: limits)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = parsed
        }
        return parsed
    }

    private static let keyPaths = Mutex<[String: KeelExpression]>([:])

    /// `KeelPredicate.parseKeyPath(text)` (a sort descriptor's key), from the cache when parsed before.
    static func keyPath(_ text: String) throws(KeelError) -> KeelExpression {
        if let hit = keyPaths.withLock({ $0[text] }) { return hit }
        let parsed = try KeelPredicate.parseKeyPath(text)
        keyPaths.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[text] = parsed
        }
        return parsed
    }

    /// Entries held (tests).
    static var count: Int { entries.withLock { $0.count } }
}
