// The model file as read, before cross-entity checks: what ModelLoader+Reading.swift produces
// and ModelLoader+Checking/Building consume. Every piece keeps its JSON path for problems. A
// piece that could not be read is left out (or nil), so later checks skip it instead of
// reporting echoes of the first problem.

struct RawModel {
    var name: String
    var version: Int
    var entities: [RawEntity]
    /// nil when the file has no `configurations` (one `Default` holding every entity).
    var configurations: [(name: String, entities: [(name: String, path: String)], path: String)]?
}

struct RawEntity {
    var path: String
    var name: String
    var isAbstract = false
    var parent: String?
    var attributes: [RawAttribute] = []
    var relationships: [RawRelationship] = []
    var fetchedProperties: [RawFetchedProperty] = []
    var uniqueConstraints: [RawColumns] = []
    var indexes: [RawColumns] = []
    var userInfo: JSON?
}

struct RawAttribute {
    var path: String
    var name: String
    var type: AttributeType
    var isOptional = true
    var defaultValue: Value?
    var isTransient = false
    var isIndexed = false
    var minValue: Value?
    var maxValue: Value?
    var regex: String?
    var renamingIdentifier: String?
}

struct RawRelationship {
    var path: String
    var name: String
    var destination: String
    var isToMany = false
    var isOrdered = false
    var inverse: String?
    var deleteRule = DeleteRule.nullify
    var isOptional = true
    var minCount = 0
    var maxCount = 0
    var renamingIdentifier: String?
}

struct RawFetchedProperty {
    var path: String
    var name: String
    var destination: String
    var predicate: String
    var sort: [(descriptor: KeelSortDescriptor, path: String)]
}

/// One `uniqueConstraints` or `indexes` entry.
struct RawColumns {
    var path: String
    var names: [String]
}

extension RawEntity {
    /// Own property names with their paths: attributes, relationships, fetched properties.
    var ownPropertyNames: [(name: String, path: String)] {
        attributes.map { ($0.name, $0.path) } + relationships.map { ($0.name, $0.path) }
            + fetchedProperties.map { ($0.name, $0.path) }
    }
}
