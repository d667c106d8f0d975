// The structured details of save failures and of VERIFY, typed: a `CONFLICT` lists the objects
// that another save (or the parent context) changed since this context read them; `VALIDATION`,
// `DENY` and `CONSTRAINT` list each failure with its object, property and rule (Docs/Contexts.md,
// "Conflicts and merge policies" and "Validation"); VERIFY's `CORRUPT` lists the faults. Each list
// holds the first 100 (Docs/Protocol.md, "Errors that list problems"); the counts give the total.
//
//     do { try await context.save() }
//     catch let error where error.code == .conflict {
//         for conflict in error.conflicts { print(conflict.object, conflict.storeVersion ?? "deleted") }
//     }

extension KeelError {
    /// One object a save conflicted on.
    public struct Conflict: Sendable, Hashable {
        public let object: KeelObjectID
        /// Against the store: the version this context read, and the one stored now (nil: another
        /// save deleted it). Nil for a child context's conflict with its parent.
        public let snapshotVersion: Int64?
        public let storeVersion: Int64?
        /// Against the parent (child contexts): the object as the child read it, as the parent
        /// has it now (null: deleted there), and as the child has it — wire objects.
        public let original: JSON?
        public let parent: JSON?
        public let context: JSON?
    }

    /// The objects of a `CONFLICT` (empty for other errors): the first 100 in ID order; past
    /// them, `conflictCount` counts the rest.
    public var conflicts: [Conflict] {
        guard code == .conflict else { return [] }
        return (details?["conflicts"]?.arrayValue ?? []).compactMap { item in
            guard let text = item["object"]?.stringValue, let object = KeelObjectID(text) else { return nil }
            return Conflict(
                object: object, snapshotVersion: item["snapshotVersion"]?.intValue, storeVersion: item["storeVersion"]?.intValue,
                original: item["original"], parent: item["parent"], context: item["context"])
        }
    }

    /// How many objects a `CONFLICT` conflicted on, listed in `conflicts` or not
    /// (`details.conflictCount`; 0 for other errors).
    public var conflictCount: Int {
        guard code == .conflict else { return 0 }
        return count("conflictCount", listed: "conflicts")
    }

    /// How many failures a `VALIDATION`, `DENY` or `CONSTRAINT` reported, listed in
    /// `validationFailures` (the first 100) or not (`details.failureCount`; 0 for other errors).
    public var validationFailureCount: Int { count("failureCount", listed: "failures") }

    /// The faults of a `VERIFY` that found damage (`CORRUPT`): the first 100 (empty for other
    /// errors); past them, `faultCount` counts the rest.
    public var verificationFaults: [StoreFault] {
        guard code == .corrupt else { return [] }
        return (details?["faults"]?.arrayValue ?? []).compactMap(StoreFault.init(json:))
    }

    /// How many faults a `VERIFY` found, listed in `verificationFaults` or not
    /// (`details.faultCount`; 0 for other errors).
    public var faultCount: Int {
        guard code == .corrupt else { return 0 }
        return count("faultCount", listed: "faults")
    }

    /// `details[countKey]`, else the length of the list `details[listKey]` (a reply without the
    /// count), else 0.
    private func count(_ countKey: String, listed listKey: String) -> Int {
        if let n = details?[countKey]?.intValue { return Int(n) }
        return details?[listKey]?.arrayValue?.count ?? 0
    }

    /// One rule a save broke.
    public struct ValidationFailure: Sendable, Hashable {
        public let object: KeelObjectID?
        public let property: String?
        /// `required`, `type`, `minValue`, `maxValue`, `regex`, `minCount`, `maxCount`, `deny`,
        /// `unique`.
        public let rule: String
        /// `VALIDATION`, `DENY` or `CONSTRAINT`.
        public let code: Code
        public let message: String
    }

    /// The failures of a `VALIDATION`, `DENY` or `CONSTRAINT` (empty for other errors).
    public var validationFailures: [ValidationFailure] {
        (details?["failures"]?.arrayValue ?? []).compactMap { item in
            guard let rule = item["rule"]?.stringValue else { return nil }
            return ValidationFailure(
                object: item["object"]?.stringValue.flatMap(KeelObjectID.init),
                property: item["property"]?.stringValue, rule: rule,
                code: Code(rawValue: item["code"]?.stringValue ?? code.rawValue), message: item["message"]?.stringValue ?? "")
        }
    }
}
