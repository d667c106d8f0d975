// Validation of a save's result, on every object the save touched, in the state it leaves:
// types, required values, bounds, regex, non-optional to-one, to-many min/max counts, deny
// rules met by deletes, and unique constraints. Every failure is counted; the save then fails
// with one error listing them (Docs/Contexts.md, "Saving": precedence of codes) — the first
// `ProblemReport.detailLimit` in details, the total in `failureCount`. A failure past those is
// counted, never written out: a batch of a million invalid objects builds a hundred texts.

import Foundation
import KeelStorage

/// The failed rules of a save: which codes they have, and the report of them (ProblemReport:
/// one entry per failure, `{object, property, rule, code, message}`; a unique clash is one
/// problem with an entry for each of its holders).
struct ValidationFailures {
    private(set) var report = ProblemReport()
    /// The code of the first failure, and whether another code followed.
    private(set) var firstCode: KeelError.Code?
    private(set) var mixed = false

    var isEmpty: Bool { report.isEmpty }
    var count: Int { report.count }

    /// Adds a failure; its texts are built only while the report keeps them.
    mutating func add(
        _ code: KeelError.Code, object: ObjectID, property: @autoclosure () -> String?, rule: String,
        sameProblem: Bool = false, model: Model, message: () -> String
    ) {
        if let first = firstCode { if first != code { mixed = true } } else { firstCode = code }
        report.add(sameProblem: sameProblem) {
            let text = message()
            let entry: JSON = [
                "object": .string(object.text(in: model)), "property": property().map(JSON.string) ?? .null,
                "rule": .string(rule), "code": .string(code.rawValue), "message": .string(text),
            ]
            return (entry, text)
        }
    }
}

/// A relationship of an object whose delete was denied (the to-ones it nullified are not failures).
struct DeniedLink: Hashable {
    var object: ObjectID
    var relationship: String
}

/// Objects that would share a unique key.
struct UniqueClash {
    var constraint: Index
    var holders: [ObjectID]
}

enum SaveValidator {
    /// Objects alive after the save that it inserted or changed (row or links), as positions in
    /// `s.entries`, in ID order.
    static func touched(_ s: SaveSession) -> [Int] {
        var out: [Int] = []
        out.reserveCapacity(s.entries.count)
        var sorted = true
        for i in s.entries.indices where s.entries[i].current != nil {
            if !s.entries[i].inserted, s.entries[i].linkFields.isEmpty, s.entries[i].current?.values == s.entries[i].original?.values {
                continue
            }
            if let last = out.last, !(s.entries[last].id < s.entries[i].id) { sorted = false }
            out.append(i)
        }
        if !sorted { out.sort { s.entries[$0].id < s.entries[$1].id } }
        return out
    }

    static func validate(_ s: SaveSession) throws(KeelError) -> ValidationFailures {
        let model = s.model
        var failures = ValidationFailures()
        // A deny is judged at the end of the save: targets that the save deleted after the denied
        // object (a cascade from another delete) no longer hold it.
        var denials: [DenyFailure] = []
        for d in s.denials {
            var left: [ObjectID] = []
            for target in d.targets where try s.exists(target) { left.append(target) }
            if !left.isEmpty { denials.append(DenyFailure(object: d.object, relationship: d.relationship, targets: left)) }
        }
        // A denied delete still nullified the inverses it reached (GraphRules reports, the save
        // fails); the resulting empty to-ones are a consequence of the deny, not failures of
        // their own.
        let denied = Set(denials.map { DeniedLink(object: $0.object, relationship: $0.relationship) })
        func nullifiedByDeny(_ id: ObjectID, _ field: Int, _ r: Relationship) -> Bool {
            guard !denied.isEmpty, let inverse = r.inverse, let i = s.rowIndex[id],
                let x = s.entries[i].original?.values[field].objectID
            else { return false }
            return denied.contains(DeniedLink(object: x, relationship: inverse))
        }
        let touchedIDs = touched(s)
        for i in touchedIDs {
            let id = s.entries[i].id
            guard let c = s.entries[i].current else { continue }
            let rules = s.layout.rules[id.entity.index]
            if rules.isEmpty { continue }
            func fail(_ p: @autoclosure () -> String, _ rule: String, _ message: @autoclosure () -> String) {
                failures.add(.validation, object: id, property: p(), rule: rule, model: model) { "\(id.text(in: model)).\(p()): \(message())" }
            }
            for rule in rules {
                let v = c.values[rule.field]
                let isNull: Bool
                if case .null = v { isNull = true } else { isNull = false }
                switch rule.kind {
                case .attribute:
                    if isNull {
                        if !rule.isOptional { fail(model[id.entity].properties[rule.field].name, "required", "a value is required") }
                        continue
                    }
                    guard fits(v, rule.type) else {
                        fail(model[id.entity].properties[rule.field].name, "type", "the value does not fit type \(rule.type.rawValue)")
                        continue
                    }
                    guard rule.hasMore, case .attribute(let a) = model[id.entity].properties[rule.field] else { continue }
                    if let min = a.minValue, let order = compare(bound: v, min, a.type), order < 0 {
                        fail(a.name, "minValue", "\(describe(v, a.type)) is below the minimum \(describe(min, nil))")
                    }
                    if let max = a.maxValue, let order = compare(bound: v, max, a.type), order > 0 {
                        fail(a.name, "maxValue", "\(describe(v, a.type)) is above the maximum \(describe(max, nil))")
                    }
                    if let pattern = a.regex, case .string(let text) = v {
                        if let regex = rule.regex {
                            // Under the save lock: a value that makes the pattern backtrack past
                            // its budget fails validation rather than stalling every saver.
                            do {
                                if !(try regex.wholeMatch(text)) { fail(a.name, "regex", "does not match /\(pattern)/") }
                            } catch {
                                fail(a.name, "regex", "makes /\(pattern)/ backtrack too much to check it (\(text.utf16.count) UTF-16 units)")
                            }
                        } else {
                            fail(a.name, "regex", "the model's pattern /\(pattern)/ does not compile")
                        }
                    }
                case .toOne:
                    guard isNull, case .relationship(let r) = model[id.entity].properties[rule.field] else { continue }
                    if !nullifiedByDeny(id, rule.field, r) { fail(r.name, "required", "a related object is required") }
                case .toMany:
                    guard case .relationship(let r) = model[id.entity].properties[rule.field] else { continue }
                    let n = try s.memberCount(of: id, field: rule.field)
                    if r.minCount > 0, n < r.minCount { fail(r.name, "minCount", "\(n) objects, at least \(r.minCount) required") }
                    if r.maxCount > 0, n > r.maxCount { fail(r.name, "maxCount", "\(n) objects, at most \(r.maxCount) allowed") }
                }
            }
        }
        for d in denials {
            failures.add(.deny, object: d.object, property: d.relationship, rule: "deny", model: model) {
                "\(d.object.text(in: model)) cannot be deleted: its \(d.relationship) still holds \(d.count) object\(d.count == 1 ? "" : "s")"
            }
        }
        for clash in try uniqueClashes(s, touched: touchedIDs) {
            // One problem, one entry for each holder; the text names the holders (at most
            // `clashNames` of them: a clash can have a million).
            var text: String?
            for (n, holder) in clash.holders.enumerated() {
                failures.add(
                    .constraint, object: holder, property: clash.constraint.propertyNames.joined(separator: ","), rule: "unique",
                    sameProblem: n > 0, model: model
                ) {
                    if let text { return text }
                    let shown = clash.holders.prefix(clashNames).map { $0.text(in: model) }.joined(separator: ", ")
                    let more = clash.holders.count > clashNames ? " and \(clash.holders.count - clashNames) more" : ""
                    let made = "\(shown)\(more) share the unique key (\(clash.constraint.propertyNames.joined(separator: ", "))) of \(model[clash.constraint.declaredIn].name)"
                    text = made
                    return made
                }
            }
        }
        return failures
    }

    /// Groups of objects that would share a unique key after the save: touched objects by
    /// their new keys, plus the stored holder of each key when it is untouched (it keeps it).
    static func uniqueClashes(_ s: SaveSession, touched: [Int]) throws(KeelError) -> [UniqueClash] {
        let model = s.model
        guard touched.contains(where: { s.layout.hasUnique[s.entries[$0].id.entity.index] }) else { return [] }
        let touchedIDs = touched.map { s.entries[$0].id }
        // Built at the first stored holder that is another object: a save that only links to
        // objects with unique keys (a department gaining employees) finds each one its own holder.
        var touchedSet: Set<ObjectID>?
        var groups: [[UInt8]: (Index, [ObjectID])] = [:]
        var order: [[UInt8]] = []
        for id in touchedIDs where s.layout.hasUnique[id.entity.index] {
            guard let i = s.rowIndex[id], let c = s.entries[i].current else { continue }
            for u in model[id.entity].uniqueConstraints {
                let values = u.fields.map { c.values[$0] }
                if values.contains(where: \.isNull) { continue }
                var key = Array(u.name.utf8)
                key.append(0)
                let valueKey = KeyEncoding.valuesKey(values)
                key.append(contentsOf: valueKey)
                if groups[key] == nil {
                    order.append(key)
                    var holders = [id]
                    let store = s.layout.storeOf[u.declaredIn.index]
                    let tree = try s.readTree(store, TreeLayout.index(u))
                    if let h = try TreeReading.holder(tree, key: valueKey), h != id {
                        if touchedSet == nil { touchedSet = Set(touchedIDs) }
                        if touchedSet?.contains(h) == false, try s.entry(h).current != nil { holders.append(h) }
                    }
                    groups[key] = (u, holders)
                } else {
                    groups[key]?.1.append(id)
                }
            }
        }
        return order.compactMap { k in
            guard let (u, holders) = groups[k], holders.count > 1 else { return nil }
            return UniqueClash(constraint: u, holders: holders.sorted())
        }
    }

    /// A unique clash's text names at most this many of its holders.
    static let clashNames = 10

    /// The error for a failed validation: one kind → its code (VALIDATION, DENY, CONSTRAINT);
    /// several kinds → VALIDATION. Details list the failures, one per object (the first
    /// `ProblemReport.detailLimit`; `failureCount` is the total); the message counts the distinct
    /// problems and names the first three (a unique clash is one problem with a failure for each
    /// of its holders).
    static func error(_ failures: ValidationFailures) -> KeelError {
        let code: KeelError.Code = failures.mixed ? .validation : failures.firstCode ?? .validation
        let report = failures.report
        let message = report.problemCount == 1
            ? "the save fails validation: \(report.listing())"
            : "the save fails validation (\(report.problemCount) problems): \(report.listing(limit: 3))"
        return KeelError(code, message, details: report.details("failures", countKey: "failureCount"))
    }

    // MARK: Types and bounds

    static func fits(_ v: Value, _ type: AttributeType) -> Bool {
        switch (type, v) {
        case (.int16, .int(let i)): Int64(Int16.min)...Int64(Int16.max) ~= i
        case (.int32, .int(let i)): Int64(Int32.min)...Int64(Int32.max) ~= i
        case (.int64, .int): true
        case (.double, .double): true
        case (.float, .double(let d)): !d.isFinite || d.magnitude <= Double(Float.greatestFiniteMagnitude)
        case (.decimal, .decimal), (.string, .string), (.bool, .bool), (.date, .date), (.binary, .binary),
            (.uuid, .uuid), (.uri, .uri), (.json, .json):
            true
        default: false
        }
    }

    /// Compares a value with a bound: numbers and dates by value, strings by length in
    /// characters, binary by length in bytes. Nil when they cannot be compared.
    static func compare(bound v: Value, _ bound: Value, _ type: AttributeType) -> Int? {
        switch v {
        case .string(let s): return compareNumbers(.int(Int64(s.count)), bound)
        case .binary(let b): return compareNumbers(.int(Int64(b.count)), bound)
        case .date(let ms):
            if case .date(let b) = bound { return ms < b ? -1 : ms > b ? 1 : 0 }
            return compareNumbers(.int(ms), bound)
        default: return compareNumbers(v, bound)
        }
    }

    static func compareNumbers(_ a: Value, _ b: Value) -> Int? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : x > y ? 1 : 0
        case (.decimal, _), (_, .decimal):
            guard let x = decimal(a), let y = decimal(b) else { return nil }
            return x < y ? -1 : x > y ? 1 : 0
        default:
            guard let x = double(a), let y = double(b), !x.isNaN, !y.isNaN else { return nil }
            return x < y ? -1 : x > y ? 1 : 0
        }
    }

    static func double(_ v: Value) -> Double? {
        switch v {
        case .int(let i): Double(i)
        case .double(let d): d
        case .decimal(let d): NSDecimalNumber(decimal: d).doubleValue
        case .date(let ms): Double(ms)
        default: nil
        }
    }

    static func decimal(_ v: Value) -> Decimal? {
        switch v {
        case .int(let i): Decimal(i)
        case .double(let d): d.isFinite ? Decimal(d) : nil
        case .decimal(let d): d
        default: nil
        }
    }

    static func describe(_ v: Value, _ type: AttributeType?) -> String {
        switch v {
        case .int(let i): "\(i)"
        case .double(let d): "\(d)"
        case .decimal(let d): "\(d)"
        case .string(let s): type == nil ? "\"\(s)\"" : "length \(s.count)"
        case .binary(let b): "length \(b.count)"
        case .date(let ms): "date \(ms) ms"
        default: "\(v)"
        }
    }
}
