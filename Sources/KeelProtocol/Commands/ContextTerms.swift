// The object commands' terms between the wire and a KeelModel `ObjectContext`, written once for
// both sides that run contexts: keeld's sessions (KeelServer/Session) and the embedded context
// backend (KeelClient), so an ID, a merge policy or a SAVE reply reads the same embedded and over
// the socket (spec/protocol.md, "Contexts" and "Commands").

public import KeelModel

public enum ContextTerms {
    /// An `Entity/N` ID of `model`: `BAD_REQUEST` when malformed, `NO_SUCH_ENTITY` when the
    /// entity is unknown.
    public static func objectID(_ text: String, in model: Model) throws(KeelError) -> ObjectID {
        if let id = model.objectID(text) { return id }
        if let slash = text.lastIndex(of: "/"), slash > text.startIndex, Model.objectNumber(text[text.index(after: slash)...]) != nil {
            throw KeelError(.noSuchEntity, "no entity \(text[..<slash]) in model \(model.name) (in the ID \"\(text)\")")
        }
        throw KeelError(.badRequest, "\"\(text)\" is not an object ID (Entity/N, N from 1)")
    }

    public static func objectIDs(_ texts: [String], in model: Model) throws(KeelError) -> [ObjectID] {
        var out: [ObjectID] = []
        out.reserveCapacity(texts.count)
        for text in texts { out.append(try objectID(text, in: model)) }
        return out
    }

    /// `Entity/N` texts.
    public static func texts(_ ids: [ObjectID], in model: Model) -> [String] {
        ids.map { $0.text(in: model) }
    }

    /// A `CONTEXT.OPEN` merge policy by name (nil: `error`); `BAD_REQUEST` naming the policies.
    public static func mergePolicy(_ text: String?) throws(KeelError) -> MergePolicy {
        guard let text else { return .error }
        guard let policy = MergePolicy(rawValue: text) else {
            let names = MergePolicy.allCases.map(\.rawValue).joined(separator: ", ")
            throw KeelError(.badRequest, "no merge policy \"\(text)\" (one of \(names))")
        }
        return policy
    }

    /// A context name for `CONTEXT.OPEN`: 1 to 64 characters.
    public static func checkContextName(_ name: String) throws(KeelError) {
        guard !name.isEmpty, name.count <= 64 else {
            throw KeelError(.badRequest, "CONTEXT.OPEN: a context name is 1 to 64 characters")
        }
    }

    /// The reply of `SAVE`: `{"inserted":n,"updated":n,"deleted":n,"txn":T}`.
    public static func saveReply(_ result: SaveResult) -> JSON {
        [
            "inserted": .int(Int64(result.inserted.count)),
            "updated": .int(Int64(result.updated.count)),
            "deleted": .int(Int64(result.deleted.count)),
            "txn": txn(result),
        ]
    }

    /// `saveReply(result)`'s compact text, written straight into `out`: keeld's SAVE reply, with
    /// no `JSON` object built per save.
    public static func writeSaveReply(_ result: SaveResult, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"inserted":"#.utf8)
        out.appendInteger(Int64(result.inserted.count))
        out.append(contentsOf: #","updated":"#.utf8)
        out.appendInteger(Int64(result.updated.count))
        out.append(contentsOf: #","deleted":"#.utf8)
        out.appendInteger(Int64(result.deleted.count))
        out.append(contentsOf: #","txn":"#.utf8)
        if let id = result.saveID { out.appendInteger(Int64(id.rawValue)) } else { out.append(contentsOf: "null".utf8) }
        out.append(UInt8(ascii: "}"))
    }

    /// A save's transaction number on the wire (`null` when it saved nothing).
    public static func txn(_ result: SaveResult) -> JSON {
        result.saveID.map { .int(Int64($0.rawValue)) } ?? .null
    }
}
