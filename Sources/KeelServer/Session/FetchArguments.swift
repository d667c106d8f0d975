// The arguments of FETCH, COUNT and EXPLAIN (spec/protocol.md, "FETCH"), checked once: what to
// fetch, how much, in what form — and the filter, where this build can evaluate it.
//
// Predicates and sort descriptors belong to the predicate engine and planner (issue 4). Until
// they are in this build, a predicate other than TRUEPREDICATE/FALSEPREDICATE is refused with
// PREDICATE and a sort with BAD_REQUEST — never ignored, never approximated.

import KeelModel
import KeelProtocol

struct FetchArguments {
    enum ResultKind: String {
        case objects, ids, count, dictionaries
    }

    var entity: Entity
    var includeSubentities: Bool
    var limit: Int?
    var offset: Int
    var result: ResultKind
    var properties: [String]
    var include: [String]
    /// nil: every object; else the objects it accepts.
    var filter: ((ObjectValues) throws(KeelError) -> Bool)?
    /// How the filter reads, for EXPLAIN.
    var filterText: String

    init(_ request: Request, model: Model) throws(KeelError) {
        let name = request.arguments["entity"]?.stringValue ?? ""
        guard let entity = model.entity(named: name) else {
            throw KeelError(.noSuchEntity, "no entity \(name) in model \(model.name)")
        }
        self.entity = entity
        includeSubentities = request.arguments["includeSubentities"]?.boolValue ?? true
        if let limit = request.arguments["limit"]?.intValue {
            guard limit >= 0 else { throw KeelError(.badRequest, "\(request.command): \"limit\" must not be negative") }
            self.limit = Int(clamping: limit)
        }
        offset = 0
        if let offset = request.arguments["offset"]?.intValue {
            guard offset >= 0 else { throw KeelError(.badRequest, "\(request.command): \"offset\" must not be negative") }
            self.offset = Int(clamping: offset)
        }
        let resultName = request.arguments["result"]?.stringValue ?? "objects"
        guard let result = ResultKind(rawValue: resultName) else {
            throw KeelError(.badRequest, "\(request.command): \"result\" is objects, ids, count or dictionaries, not \"\(resultName)\"")
        }
        self.result = result
        properties = request.arguments["properties"]?.arrayValue?.compactMap(\.stringValue) ?? []
        for property in properties where entity.field(named: property) == nil {
            throw KeelError(.noSuchProperty, "\(entity.name) has no property \"\(property)\"")
        }
        include = request.arguments["include"]?.arrayValue?.compactMap(\.stringValue) ?? []
        if let sort = request.arguments["sort"]?.arrayValue, !sort.isEmpty {
            throw KeelError(
                .badRequest,
                "\(request.command): sorting is not available in this build yet (it arrives with the predicate engine); objects come in ID order")
        }
        filter = nil
        filterText = "none"
        if let predicate = request.arguments["predicate"]?.stringValue {
            switch predicate.trimmingSpaces.uppercased() {
            case "", "TRUEPREDICATE":
                break
            case "FALSEPREDICATE":
                filter = { (_: ObjectValues) throws(KeelError) -> Bool in false }
                filterText = "FALSEPREDICATE"
            default:
                throw KeelError(
                    .predicate,
                    "this daemon cannot evaluate predicates yet (the predicate engine is not in this build); only TRUEPREDICATE and FALSEPREDICATE",
                    details: ["position": 0])
            }
        }
    }

    /// How many of `total` matches a fetch returns after offset and limit.
    func window(_ total: Int) -> Int {
        let afterOffset = max(0, total - offset)
        return limit.map { min($0, afterOffset) } ?? afterOffset
    }
}
