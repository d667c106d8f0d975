// A second small model for relationship shapes the Company model lacks: an ordered to-many
// (Project.tasks ↔ Task.project) and a many-to-many (Project.tags ↔ Tag.projects).

import KeelModel

enum ProjectModel {
    static let project = EntityID(0), task = EntityID(1), tag = EntityID(2)

    static func make() -> Model {
        let entities = [
            Entity(
                id: project, name: "Project", isAbstract: false, parent: nil, root: project, family: [project],
                properties: [
                    .attribute(Attribute(name: "title", type: .string, declaredIn: project)),
                    .relationship(
                        Relationship(
                            name: "tasks", destination: task, isToMany: true, isOrdered: true, inverse: "project",
                            deleteRule: .cascade, declaredIn: project)),
                    .relationship(
                        Relationship(name: "tags", destination: tag, isToMany: true, inverse: "projects", declaredIn: project)),
                ], fetchedProperties: [], uniqueConstraints: [], indexes: [], configuration: "Default"),
            Entity(
                id: task, name: "Task", isAbstract: false, parent: nil, root: task, family: [task],
                properties: [
                    .attribute(Attribute(name: "title", type: .string, declaredIn: task)),
                    .relationship(Relationship(name: "project", destination: project, inverse: "tasks", declaredIn: task)),
                ], fetchedProperties: [], uniqueConstraints: [], indexes: [], configuration: "Default"),
            Entity(
                id: tag, name: "Tag", isAbstract: false, parent: nil, root: tag, family: [tag],
                properties: [
                    .attribute(Attribute(name: "label", type: .string, declaredIn: tag)),
                    .relationship(
                        Relationship(name: "projects", destination: project, isToMany: true, inverse: "tags", declaredIn: tag)),
                ], fetchedProperties: [], uniqueConstraints: [], indexes: [], configuration: "Default"),
        ]
        return Model(
            name: "Projects", version: 1, entities: entities, configurations: ["Default": entities.map(\.id)],
            hash: "test-projects", canonical: .null, warnings: [])
    }
}
