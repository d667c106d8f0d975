// The names of the engine trees that hold one model's objects (Decision 0004, "Trees in each
// store"), worked out once per open so no save builds a tree name. A class: saves read it per
// object, and a struct of a dozen arrays would cost a retain per array on every copy.

final class TreeLayout: Sendable {
    static let meta = "$meta"
    static let history = "$history"
    static let intents = "$intents"

    /// Per entity: the object tree of its hierarchy (`obj/<RootEntity>`).
    let objects: [String]
    /// Per entity, per field: the link tree of a to-many relationship (`link/…` or `olink/…` named
    /// after the declaring entity, so a whole hierarchy shares one), nil for other fields.
    let links: [[String?]]
    /// Per entity: its store's position in `Model.configurations` (0 is the primary).
    let storeOf: [Int]
    /// Per entity: whether each field is an ordered to-many (meaningful where `links` is set).
    let ordered: [[Bool]]
    /// Per entity: its property count (the row's field count).
    let fieldCounts: [Int]
    /// Per entity: its indexes then its unique constraints (what a row change maintains).
    let keyed: [[Index]]
    /// Per entity, aligned with `keyed`: each one's tree name (`idx/…` or `uniq/…`).
    let keyedTrees: [[String]]
    /// Per entity, per field: how an insert sets it (the save's insert fast path).
    let insertKinds: [[InsertKind]]
    /// `kindOf[e][d]`: entity e is d or one of d's sub-entities (a valid destination of d).
    let kindOf: [[Bool]]
    /// Per entity: the fields validation looks at, with what it needs to know (SaveValidator).
    let rules: [[FieldRule]]
    /// Per entity: whether it has a unique constraint (declared or inherited).
    let hasUnique: [Bool]

    init(model: Model) {
        let configs = Array(model.configurations.keys)
        objects = model.entities.map { "obj/" + model[$0.root].name }
        links = model.entities.map { entity in
            entity.properties.map { p -> String? in
                guard case .relationship(let r) = p, r.isToMany else { return nil }
                return (r.isOrdered ? "olink/" : "link/") + model[r.declaredIn].name + "." + r.name
            }
        }
        storeOf = model.entities.map { configs.firstIndex(of: $0.configuration) ?? 0 }
        ordered = model.entities.map { entity in
            entity.properties.map { p in
                if case .relationship(let r) = p { return r.isToMany && r.isOrdered }
                return false
            }
        }
        fieldCounts = model.entities.map(\.properties.count)
        keyed = model.entities.map { $0.indexes + $0.uniqueConstraints }
        keyedTrees = keyed.map { $0.map(TreeLayout.index) }
        kindOf = model.entities.map { e in model.entities.map { d in d.includes(e.id) } }
        hasUnique = model.entities.map { !$0.uniqueConstraints.isEmpty }
        rules = model.entities.map { entity in
            entity.properties.enumerated().compactMap { field, p -> FieldRule? in
                switch p {
                case .attribute(let a):
                    if a.isTransient { return nil }
                    // The regex is compiled here, once per open store, not per save under the save lock
                    // (the model loader has checked it compiles; nil here fails the save as uncompilable).
                    return FieldRule(field: field, kind: .attribute, type: a.type, isOptional: a.isOptional,
                                     hasMore: a.minValue != nil || a.maxValue != nil || a.regex != nil,
                                     regex: a.regex.flatMap { try? CompiledRegex($0, caseInsensitive: false, position: SourcePosition(0)) })
                case .relationship(let r) where !r.isToMany:
                    return r.isOptional ? nil : FieldRule(field: field, kind: .toOne, type: .int64, isOptional: false, hasMore: false, regex: nil)
                case .relationship(let r):
                    return r.minCount > 0 || r.maxCount > 0
                        ? FieldRule(field: field, kind: .toMany, type: .int64, isOptional: true, hasMore: true, regex: nil) : nil
                }
            }
        }
        insertKinds = model.entities.map { entity in
            entity.properties.map { p -> InsertKind in
                switch p {
                case .attribute(let a): return a.isTransient ? .transient : .attribute
                case .relationship(let r) where !r.isToMany:
                    let destination = model[r.destination]
                    guard let name = r.inverse, let inverseField = destination.field(named: name),
                        case .relationship(let inverse) = destination.properties[inverseField], inverse.isToMany, !inverse.isOrdered
                    else { return .other }
                    return .toOneWithUnorderedInverse(destination: r.destination.index, inverseField: inverseField)
                case .relationship: return .other
                }
            }
        }
    }

    static func index(_ index: Index) -> String { (index.isUnique ? "uniq/" : "idx/") + index.name }

    /// `TreeLayout.index(index)`, the name kept in `keyedTrees` when the declaring entity lists
    /// the index (a model's own indexes always are): a read names its index tree without building
    /// the name (a concatenation, allocated past 15 bytes: ~390 instructions a read). The name is
    /// a function of `isUnique` and `name` alone, so an entry equal in both has the same one.
    func indexTree(_ index: Index) -> String {
        let e = index.declaredIn.index
        if e < keyed.count {
            let (indexes, names) = (keyed[e], keyedTrees[e])
            for i in indexes.indices where indexes[i].isUnique == index.isUnique && indexes[i].name == index.name {
                return names[i]
            }
        }
        return Self.index(index)
    }

    static func ids(_ entity: Entity) -> String { "ids/" + entity.name }
}

/// One field that validation checks, without copying its Property (SaveValidator.validate).
struct FieldRule: Sendable {
    enum Kind: Sendable { case attribute, toOne, toMany }
    var field: Int
    var kind: Kind
    /// An attribute's type (meaningless for relationships).
    var type: AttributeType
    var isOptional: Bool
    /// Bounds or a regex (attributes), counts (to-many): the Property has more to check.
    var hasMore: Bool
    /// The attribute's `regex`, compiled (nil without one, or if it did not compile).
    var regex: CompiledRegex?
}

/// How the save's insert fast path sets a field of a new object (SaveReplay.insert).
enum InsertKind: Sendable {
    /// A stored attribute: straight into the row.
    case attribute
    /// Never stored.
    case transient
    /// A to-one whose inverse is an unordered to-many: the row gets the target, the target's
    /// link tree the new object (no old target to leave, no partner to clear).
    case toOneWithUnorderedInverse(destination: Int, inverseField: Int)
    /// Anything else (to-many, one-to-one, ordered inverse): through GraphRules.
    case other

    var destination: Int? {
        if case .toOneWithUnorderedInverse(let d, _) = self { return d }
        return nil
    }
}

/// Keys of the `$meta` tree (UTF-8 names; values below).
enum MetaKey {
    /// Primary only: the model's hash (UTF-8 hex).
    static let modelHash = "model.hash"
    /// Primary only: the model's canonical JSON (UTF-8).
    static let modelJSON = "model.json"
    /// Primary only: the object layer's format, u64 BE (`ObjectStore.formatVersion`).
    static let format = "format"
    /// The highest multi-store save id applied to this store, u64 BE (redo intents are compared
    /// with it; single-store saves do not write it).
    static let applied = "applied"
    /// Where the counter is kept when the store's newest history record is pruned (format 1: the
    /// last save id, in the primary), u64 BE. `ObjectStore.lastSave` reads it.
    static let save = "save"
    /// The newest save id whose history record pruning removed from this store, u64 BE: HISTORY
    /// after an older save is refused (EXPIRED) rather than answered with a gap.
    static let historyPruned = "history.pruned"
    /// `ids/<Entity>` in the entity's store: the reserved object-number mark, u64 BE.
}
