// Sort descriptors from typed keys: `.ascending(\.name)`, `.descending(\.salary)`,
// `.ascending(\.name, caseInsensitive: true)`, `.ascending(\.department.name)`. The key path runs
// over the entity's metatype to its generated key (`\Employee.Type.name`), so only keys of the
// fetched entity (inherited ones included) compile. Several sorts apply in order.

/// One sort key of a fetch of `Root` objects.
public struct TypedSort<Root: KeelObject>: Sendable, Hashable {
    public let key: String
    public let ascending: Bool
    public let caseInsensitive: Bool

    init(key: String, ascending: Bool, caseInsensitive: Bool) {
        self.key = key
        self.ascending = ascending
        self.caseInsensitive = caseInsensitive
    }

    public static func ascending<V>(_ key: KeyPath<Root.Type, AttributeKey<Root, V>>) -> TypedSort {
        TypedSort(key: Root.self[keyPath: key].sortKey, ascending: true, caseInsensitive: false)
    }

    public static func descending<V>(_ key: KeyPath<Root.Type, AttributeKey<Root, V>>) -> TypedSort {
        TypedSort(key: Root.self[keyPath: key].sortKey, ascending: false, caseInsensitive: false)
    }

    /// Text sorted with `caseInsensitive` (case-folded) or by its Unicode scalars.
    public static func ascending(_ key: KeyPath<Root.Type, AttributeKey<Root, String>>, caseInsensitive: Bool) -> TypedSort {
        TypedSort(key: Root.self[keyPath: key].sortKey, ascending: true, caseInsensitive: caseInsensitive)
    }

    public static func descending(_ key: KeyPath<Root.Type, AttributeKey<Root, String>>, caseInsensitive: Bool) -> TypedSort {
        TypedSort(key: Root.self[keyPath: key].sortKey, ascending: false, caseInsensitive: caseInsensitive)
    }

    /// With a key value: `.ascending(Employee.name)`.
    public static func ascending<V>(_ key: AttributeKey<Root, V>) -> TypedSort {
        TypedSort(key: key.sortKey, ascending: true, caseInsensitive: false)
    }

    public static func descending<V>(_ key: AttributeKey<Root, V>) -> TypedSort {
        TypedSort(key: key.sortKey, ascending: false, caseInsensitive: false)
    }

    /// The FETCH request's form: `{"key":…,"ascending":…,"caseInsensitive":…}`.
    var json: JSON {
        ["key": .string(key), "ascending": .bool(ascending), "caseInsensitive": .bool(caseInsensitive)]
    }
}
