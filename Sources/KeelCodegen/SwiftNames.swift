// Swift names for model names. Entity names become class names as they are; an entity name that
// would hide a type the generated code uses (`Date`, `String`, `KeelObject`…) is refused. A
// property name becomes a Swift member name as it is, in backticks when it is a Swift keyword, and
// with a trailing `_` when `KeelObject` already has a member of that name (`version` →
// `version_`, `description` → `description_`): the model's name is still what goes on the wire.

enum SwiftNames {
    /// Swift keywords a member name must escape with backticks.
    static let keywords: Set<String> = [
        "associatedtype", "borrowing", "break", "case", "catch", "class", "consuming", "continue", "default", "defer",
        "deinit", "do", "else", "enum", "extension", "fallthrough", "false", "fileprivate", "for", "func", "guard", "if",
        "import", "in", "init", "inout", "internal", "is", "let", "nil", "open", "operator", "precedencegroup", "private",
        "protocol", "public", "repeat", "rethrows", "return", "static", "struct", "subscript", "super", "switch",
        "throw", "throws", "true", "try", "typealias", "var", "where", "while", "any", "some", "await", "async",
    ]

    /// Names a member cannot take even in backticks, and names `KeelObject` (or its keys'
    /// protocol) already uses: generated with a trailing `_`.
    static let taken: Set<String> = [
        "self", "init", "deinit", "subscript", "super", "description", "anyObjectID", "objectID", "version",
        "isDeleted", "entity", "concreteType", "encode", "memberIDs", "setMembers", "addMember", "removeMember", "included",
    ]

    /// Types the generated code names: an entity cannot take these names.
    static let reservedTypes: Set<String> = [
        "Any", "AnyObject", "Self", "Type", "Protocol", "Int16", "Int32", "Int64", "Int", "Double", "Float", "Bool",
        "String", "Decimal", "Date", "Data", "UUID", "URL", "JSON", "Optional", "Array", "Foundation", "KeelClient",
        "KeelModel", "KeelObject", "KeelEntity", "KeelID", "KeelRow", "KeelValues", "KeelError", "KeelEntityDescription",
        "KeelPropertyDescription", "KeelFetchedPropertyDescription", "AttributeKey", "ToOneKey", "ToManyKey",
        "FetchedPropertyKey", "KeelDefault",
    ]

    /// The Swift member name for a property (without backticks).
    static func member(_ name: String) -> String {
        taken.contains(name) ? name + "_" : name
    }

    /// The member name as written in declarations and uses: in backticks when a keyword.
    static func written(_ name: String) -> String {
        let member = member(name)
        return keywords.contains(member) ? "`\(member)`" : member
    }

    /// The member name as an argument label in a call: keywords need no backticks there (but
    /// `inout`, `var` and `let`).
    static func label(_ name: String) -> String {
        let member = member(name)
        return ["inout", "var", "let"].contains(member) ? "`\(member)`" : member
    }

    /// `employees` → `Employees`, for `addToEmployees`.
    static func capitalized(_ name: String) -> String {
        name.prefix(1).uppercased() + name.dropFirst()
    }
}
