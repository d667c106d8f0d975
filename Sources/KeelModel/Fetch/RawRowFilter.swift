// A scan filter run on a row's stored bytes (RowCodec.swift's layout), for predicates made only
// of string patterns on the object's own text attributes — `name CONTAINS[c] 'kalo'`,
// `name BEGINSWITH 'A' AND address LIKE '*Road'` — combined with AND, OR and NOT. The fields it
// reads are found by one pass over the row (the others skipped by their tag), and each pattern
// runs on the UTF-8 bytes in place: no `String`, no `Value`, no array of fields per row. Text
// that is not ASCII under a folding option is made a `String` and folded, as
// `StringPattern.matches` does, so the answers are the evaluator's (BoundPredicate+Evaluate.swift,
// `test`): a pattern on nil or on a value that is not text is false, `!=` with options true.
// Anything else (numbers, key paths, lists, SUBQUERY) is not compiled: the scan then decodes the
// fields the filter reads and evaluates the bound predicate on them.

final class RawRowFilter {
    indirect enum Node {
        case constant(Bool)
        case not(Node)
        case and([Node])
        case or([Node])
        /// The text of the field in `slot` against a prepared pattern; `negated` for `!=` (true on nil).
        case text(slot: Int, pattern: StringPattern, negated: Bool)
    }

    let root: Node
    /// The fields read, one slot each.
    let fields: [Int]
    /// The common shape, one pattern on one field (`name CONTAINS[c] 'kalo'`), kept unwrapped so
    /// a row costs a walk to the field and a match: no tree walk, no scratch. `singleField` is -1
    /// for other shapes. Plain stored properties, not an optional tuple: reading them per row
    /// copies (and retains) nothing.
    private let singleField: Int
    private let singlePattern: StringPattern?
    private let singleNegated: Bool

    /// The raw form of `predicate`, nil when some part of it needs the evaluator.
    init?(_ predicate: BoundPredicate, model: Model) {
        var fields: [Int] = []
        let properties = model[predicate.entity].properties
        func compile(_ node: BoundNode) -> Node? {
            switch node {
            case .constant(let b): return .constant(b)
            case .not(let inner): return compile(inner).map { .not($0) }
            case .and(let terms):
                var out: [Node] = []
                for t in terms {
                    guard let n = compile(t) else { return nil }
                    out.append(n)
                }
                return .and(out)
            case .or(let terms):
                var out: [Node] = []
                for t in terms {
                    guard let n = compile(t) else { return nil }
                    out.append(n)
                }
                return .or(out)
            case .comparison(let c):
                guard c.modifier == .direct, case .field(let f) = c.left, let pattern = c.pattern,
                    f < properties.count, case .attribute(let a) = properties[f], a.type == .string
                else { return nil }
                let negated: Bool
                switch c.op {
                case .equal, .beginsWith, .endsWith, .contains, .like, .matches: negated = false
                case .notEqual: negated = true
                default: return nil
                }
                let slot = fields.firstIndex(of: f) ?? {
                    fields.append(f)
                    return fields.count - 1
                }()
                return .text(slot: slot, pattern: pattern, negated: negated)
            }
        }
        guard let root = compile(predicate.root) else { return nil }
        self.root = root
        self.fields = fields
        if case .text(_, let pattern, let negated) = root, fields.count == 1 {
            (singleField, singlePattern, singleNegated) = (fields[0], pattern, negated)
        } else {
            (singleField, singlePattern, singleNegated) = (-1, nil, false)
        }
    }

    /// The one-pattern form: find the field, match its text.
    private func matchesSingle(
        _ bytes: UnsafeRawBufferPointer, fieldCount: Int, field wanted: Int, negated: Bool
    ) throws(KeelError) -> Bool {
        var row = try RowFields(bytes, fieldCount: fieldCount)
        while let (field, tag) = try row.next() {
            if field < wanted {
                try RowCodec.skipValue(tag: tag, &row.reader)
                continue
            }
            guard field == wanted, tag == RowCodec.Tag.string || tag == RowCodec.Tag.uri else { return negated }
            let n = try row.reader.length()
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return negated }
            guard let hit = try singlePattern?.matches(utf8: UnsafeBufferPointer(start: base + row.reader.offset, count: n)) else {
                throw row.reader.damage("invalid UTF-8")
            }
            return hit != negated
        }
        return negated
    }

    /// Whether the row in `bytes` passes. `texts` is scratch (one entry per slot), reused per row.
    func matches(_ bytes: UnsafeRawBufferPointer, fieldCount: Int, texts: inout [Range<Int>?]) throws(KeelError) -> Bool {
        if singleField >= 0 { return try matchesSingle(bytes, fieldCount: fieldCount, field: singleField, negated: singleNegated) }
        for i in texts.indices { texts[i] = nil }
        var row = try RowFields(bytes, fieldCount: fieldCount)
        var found = 0
        while found < fields.count, let (field, tag) = try row.next() {
            guard let slot = fields.firstIndex(of: field) else {
                try RowCodec.skipValue(tag: tag, &row.reader)
                continue
            }
            found += 1
            if tag == RowCodec.Tag.string || tag == RowCodec.Tag.uri {
                let n = try row.reader.length()
                texts[slot] = row.reader.offset..<row.reader.offset + n
                row.reader.offset += n
            } else {
                try RowCodec.skipValue(tag: tag, &row.reader)
            }
        }
        let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        func evaluate(_ node: Node) throws(KeelError) -> Bool {
            switch node {
            case .constant(let b): return b
            case .not(let inner): return !(try evaluate(inner))
            case .and(let terms):
                for t in terms where !(try evaluate(t)) { return false }
                return true
            case .or(let terms):
                for t in terms where try evaluate(t) { return true }
                return false
            case .text(let slot, let pattern, let negated):
                guard let range = texts[slot], let base else { return negated }
                let text = UnsafeBufferPointer(start: base + range.lowerBound, count: range.count)
                guard let hit = try pattern.matches(utf8: text) else { throw row.reader.damage("invalid UTF-8") }
                return hit != negated
            }
        }
        return try evaluate(root)
    }
}
