// The structured details of save failures, typed: a `CONFLICT` lists the objects that another
// save (or the parent context) changed since this context read them; `VALIDATION`, `DENY` and
// `CONSTRAINT` list each failure with its object, property and rule (Docs/Contexts.md,
// "Conflicts and merge policies" and "Validation").
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

    /// The objects of a `CONFLICT` (empty for other errors).
    public var conflicts: [Conflict] {
        guard code == .conflict else { return [] }
        return (details?["conflicts"]?.arrayValue ?? []).compactMap { item in
            guard let text = item["object"]?.stringValue, let object = KeelObjectID(text) else { return nil }
            return Conflict(
                object: object, snapshotVersion: item["snapshotVersion"]?.intValue, storeVersion: item["storeVersion"]?.intValue,
                original: item["original"], parent: item["parent"], context: item["context"])
        }
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
