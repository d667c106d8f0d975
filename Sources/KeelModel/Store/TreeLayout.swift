// The names of the engine trees that hold one model's objects (Decision 0004, "Trees in each
// store"), worked out once per open so no save builds a tree name.

struct TreeLayout: Sendable {
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
    }

    static func index(_ index: Index) -> String { (index.isUnique ? "uniq/" : "idx/") + index.name }

    static func ids(_ entity: Entity) -> String { "ids/" + entity.name }
}

/// Keys of the `$meta` tree (UTF-8 names; values below).
enum MetaKey {
    /// Primary only: the model's hash (UTF-8 hex).
    static let modelHash = "model.hash"
    /// Primary only: the model's canonical JSON (UTF-8).
    static let modelJSON = "model.json"
    /// Every store: the object layer's format, u64 BE (1).
    static let format = "format"
    /// Every store: the highest save id applied to this store, u64 BE.
    static let applied = "applied"
    /// Primary only: the last save id, u64 BE.
    static let save = "save"
    /// `ids/<Entity>` in the entity's store: the reserved object-number mark, u64 BE.
}
