// The tutorials' Company model (seeds 000–003), built by hand so contexts can be tested before
// the model loader and config/model.json are on main: abstract Person with Employee and Student,
// Department with a to-many `employees` whose delete rule each test chooses.

import KeelModel

enum CompanyModel {
    // Fields (attributes then relationships, inherited first).
    static let person = EntityID(0), employee = EntityID(1), student = EntityID(2), department = EntityID(3)
    static let name = 0, age = 1, address = 2, mood = 3
    static let salary = 4, hired = 5, badge = 6, employeeDepartment = 7
    static let grade = 4, course = 5
    static let departmentName = 0, employees = 1, departmentBudget = 2

    static func make(employeesRule: DeleteRule = .cascade) -> Model {
        let personAttributes = [
            Attribute(name: "name", type: .string, isOptional: false, declaredIn: person),
            Attribute(name: "age", type: .int16, defaultValue: .int(0), minValue: .int(0), maxValue: .int(150), declaredIn: person),
            Attribute(name: "address", type: .string, declaredIn: person),
            Attribute(name: "mood", type: .string, defaultValue: .string("calm"), isTransient: true, declaredIn: person),
        ].map(Property.attribute)
        let employeeProperties: [Property] =
            personAttributes + [
                .attribute(Attribute(name: "salary", type: .decimal, isOptional: false, declaredIn: employee)),
                .attribute(Attribute(name: "hired", type: .date, declaredIn: employee)),
                .attribute(Attribute(name: "badge", type: .uuid, declaredIn: employee)),
                .relationship(
                    Relationship(
                        name: "department", destination: department, inverse: "employees", deleteRule: .nullify,
                        declaredIn: employee)),
            ]
        let studentProperties: [Property] =
            personAttributes + [
                .attribute(Attribute(name: "grade", type: .int16, declaredIn: student)),
                .attribute(Attribute(name: "course", type: .string, declaredIn: student)),
            ]
        let departmentProperties: [Property] = [
            .attribute(Attribute(name: "name", type: .string, isOptional: false, declaredIn: department)),
            .relationship(
                Relationship(
                    name: "employees", destination: employee, isToMany: true, inverse: "department",
                    deleteRule: employeesRule, declaredIn: department)),
            .attribute(Attribute(name: "budget", type: .int32, declaredIn: department)),
        ]
        let unique = Index(
            name: "Department.name", fields: [departmentName], propertyNames: ["name"], isUnique: true,
            declaredIn: department)
        let entities = [
            Entity(
                id: person, name: "Person", isAbstract: true, parent: nil, root: person, family: [person, employee, student],
                properties: personAttributes, fetchedProperties: [], uniqueConstraints: [], indexes: [],
                configuration: "Default"),
            Entity(
                id: employee, name: "Employee", isAbstract: false, parent: person, root: person, family: [employee],
                properties: employeeProperties, fetchedProperties: [], uniqueConstraints: [], indexes: [],
                configuration: "Default"),
            Entity(
                id: student, name: "Student", isAbstract: false, parent: person, root: person, family: [student],
                properties: studentProperties, fetchedProperties: [], uniqueConstraints: [], indexes: [],
                configuration: "Default"),
            Entity(
                id: department, name: "Department", isAbstract: false, parent: nil, root: department, family: [department],
                properties: departmentProperties, fetchedProperties: [], uniqueConstraints: [unique], indexes: [unique],
                configuration: "Default"),
        ]
        return Model(
            name: "Company", version: 1, entities: entities, configurations: ["Default": entities.map(\.id)],
            hash: "test-\(employeesRule.rawValue)", canonical: .null, warnings: [])
    }
}
