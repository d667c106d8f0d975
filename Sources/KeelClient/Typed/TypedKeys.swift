// Typed keys: `Employee.age`, `Employee.department`, `Department.employees`,
// `Employee.department.name`. Generated code declares one static key per property in an
// extension of `KeelEntity where Self: <Entity>`, so `Employee.age` is an
// `AttributeKey<Employee, Int16>` even though `age` is declared on `Person`, and sort key paths
// (`.ascending(\.name)`) read the keys through the metatype. Keys build predicate text and sort
// keys (TypedPredicate.swift, TypedSort.swift); values never enter the text.

/// A key path from `Root` to an attribute of Swift type `Value` (through to-ones).
public struct AttributeKey<Root: KeelObject, Value: KeelValue>: Sendable, Hashable {
    /// The property names along the path (`["department", "name"]`).
    public let path: [String]

    public init(_ name: String) { path = [name] }
    init(path: [String]) { self.path = path }

    /// The key as predicate text (`department.name`, keywords escaped: `#in`).
    public var predicateText: String { KeyText.predicate(path) }
    /// The key as a sort descriptor's key (`department.name`).
    public var sortKey: String { path.joined(separator: ".") }
}

/// A key path from `Root` to a to-one relationship with destination `Target`.
@dynamicMemberLookup
public struct ToOneKey<Root: KeelObject, Target: KeelObject>: Sendable, Hashable {
    public let path: [String]

    public init(_ name: String) { path = [name] }
    init(path: [String]) { self.path = path }

    public var predicateText: String { KeyText.predicate(path) }

    /// `Employee.department.name`: an attribute of the target.
    public subscript<V>(dynamicMember key: KeyPath<Target.Type, AttributeKey<Target, V>>) -> AttributeKey<Root, V> {
        AttributeKey(path: path + Target.self[keyPath: key].path)
    }

    /// `Computer.owner.department`: a to-one of the target.
    public subscript<T>(dynamicMember key: KeyPath<Target.Type, ToOneKey<Target, T>>) -> ToOneKey<Root, T> {
        ToOneKey<Root, T>(path: path + Target.self[keyPath: key].path)
    }

    /// `Employee.department.employees`: a to-many of the target.
    public subscript<T>(dynamicMember key: KeyPath<Target.Type, ToManyKey<Target, T>>) -> ToManyKey<Root, T> {
        ToManyKey<Root, T>(path: path + Target.self[keyPath: key].path)
    }
}

/// A key path from `Root` to a to-many relationship with destination `Target`.
public struct ToManyKey<Root: KeelObject, Target: KeelObject>: Sendable, Hashable {
    public let path: [String]

    public init(_ name: String) { path = [name] }
    init(path: [String]) { self.path = path }

    public var predicateText: String { KeyText.predicate(path) }

    /// The relationship's name (the last component).
    public var name: String { path.last ?? "" }
}

/// A fetched property of `Root` fetching `Target` objects (`Book.feedbackList`).
public struct FetchedPropertyKey<Root: KeelObject, Target: KeelObject>: Sendable, Hashable {
    public let name: String

    public init(_ name: String) { self.name = name }
}

/// A relationship or fetched property a read may embed (`including:` of fetch and get).
public protocol IncludableKey<Root>: Sendable {
    associatedtype Root: KeelObject
    /// The name given in `include`.
    var includeName: String { get }
}

extension ToOneKey: IncludableKey {
    public var includeName: String { path.joined(separator: ".") }
}

extension ToManyKey: IncludableKey {
    public var includeName: String { path.joined(separator: ".") }
}

extension FetchedPropertyKey: IncludableKey {
    public var includeName: String { name }
}

enum KeyText {
    static func predicate(_ path: [String]) -> String {
        path.map(PredicateKeyPath.escapedKey).joined(separator: ".")
    }
}

extension KeelEntity where Self: KeelObject {
    /// The object a to-one embeds (it was read with `including:` the key); nil when unset.
    /// `BAD_REQUEST` when the read did not include it.
    public func included<T>(_ key: ToOneKey<Self, T>) throws(KeelError) -> T? {
        try embedded(key.includeName, as: T.self).first
    }

    /// The objects a to-many embeds (read with `including:` the key).
    public func included<T>(_ key: ToManyKey<Self, T>) throws(KeelError) -> [T] {
        try embedded(key.includeName, as: T.self)
    }

    /// The objects a fetched property gave when this object was read with `including:` it.
    public func included<T>(_ key: FetchedPropertyKey<Self, T>) throws(KeelError) -> [T] {
        try embedded(key.name, as: T.self)
    }
}
