// Every bad value gets its specific error and leaves the context exactly as it was
// (spec/model.md: "A value that does not fit its attribute … is refused with TYPE and nothing
// changes"; spec/protocol.md: "An ERR reply never leaves a partial change behind").

import Testing

@testable import KeelModel

@Suite("Context bad values")
struct ContextBadValueTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let code: KeelError.Code
        let message: String
        let run: @Sendable (ObjectContext, Scene) throws -> Void
        var testDescription: String { name }
    }

    /// Objects of the scene: saved employees and departments, one pending insert, one pending delete.
    struct Scene {
        let kim: ObjectID
        let lee: ObjectID
        let development: ObjectID
        let pending: ObjectID
        let deleted: ObjectID
        let student: ObjectID
    }

    static let cases: [Case] = [
        Case(name: "unknown entity", code: .noSuchEntity, message: "Manager") { c, _ in
            try c.insert(entity: "Manager", values: ["name": "X"])
        },
        Case(name: "unknown property", code: .noSuchProperty, message: "nickname") { c, _ in
            try c.insert(entity: "Employee", values: ["name": "X", "salary": "1", "nickname": "x"])
        },
        Case(name: "a string for an int16", code: .type, message: "Employee.age") { c, _ in
            try c.insert(entity: "Employee", values: ["name": "X", "salary": "1", "age": "thirty"])
        },
        Case(name: "70000 into an int16", code: .type, message: "70000") { c, s in
            try c.update(s.kim, values: ["name": "Changed", "age": 70000])
        },
        Case(name: "a malformed date", code: .type, message: "RFC 3339") { c, s in
            try c.update(s.kim, values: ["address": "Jeju", "hired": "2026-13-01T00:00:00.000Z"])
        },
        Case(name: "a date that is not a date", code: .type, message: "RFC 3339") { c, _ in
            try c.insert(entity: "Employee", values: ["name": "X", "salary": "1", "hired": "yesterday"])
        },
        Case(name: "a malformed decimal", code: .type, message: "decimal") { c, s in
            try c.update(s.kim, values: ["salary": "12,5"])
        },
        Case(name: "a decimal as a float number", code: .type, message: "decimal") { c, s in
            try c.update(s.kim, values: ["salary": 12.5])
        },
        Case(name: "a malformed UUID", code: .type, message: "UUID") { c, _ in
            try c.insert(entity: "Employee", values: ["name": "X", "salary": "1", "badge": "not-a-uuid"])
        },
        Case(name: "a relationship to the wrong entity", code: .type, message: "takes Department objects") { c, s in
            try c.update(s.kim, values: ["department": .string("Student/1")])
        },
        Case(name: "a relationship given a number", code: .type, message: "Employee.department") { c, _ in
            try c.insert(entity: "Employee", values: ["name": "X", "salary": "1", "department": 2])
        },
        Case(name: "a malformed object ID", code: .type, message: "Department/2") { c, _ in
            try c.insert(entity: "Employee", values: ["name": "X", "salary": "1", "department": "Department-2"])
        },
        Case(name: "the ID of a deleted object", code: .notFound, message: "Department/4") { c, s in
            try c.insert(entity: "Employee", values: ["name": "X", "salary": "1", "department": .string("Department/4")])
            _ = s
        },
        Case(name: "a to-many list with one deleted member", code: .notFound, message: "Employee/2") { c, _ in
            try c.insert(entity: "Department", values: ["name": "Legal", "employees": ["Employee/1", "Employee/2"]])
        },
        Case(name: "an ID that was never handed out", code: .notFound, message: "Department/99") { c, s in
            try c.update(s.kim, values: ["department": "Department/99"])
        },
        Case(name: "RELATE with an object of the wrong entity", code: .type, message: "Student/1") { c, s in
            try c.relate(s.development, relationship: "employees", add: [s.kim, s.student])
        },
        Case(name: "RELATE with a deleted object", code: .notFound, message: "Employee/2") { c, s in
            try c.relate(s.development, relationship: "employees", add: [s.pending, s.lee])
        },
        Case(name: "RELATE on an attribute", code: .type, message: "attribute") { c, s in
            try c.relate(s.development, relationship: "name", add: [s.kim])
        },
        Case(name: "UPDATE of a deleted object", code: .notFound, message: "Employee/2") { c, s in
            try c.update(s.lee, values: ["age": 40])
        },
        Case(name: "values that are not an object", code: .badRequest, message: "JSON object") { c, s in
            try c.update(s.kim, values: ["name", "Kim"])
        },
        Case(name: "a typed value of the wrong kind", code: .type, message: "Employee.name") { c, s in
            try c.update(s.kim, typedValues: ["age": .int(31), "name": .int(3)])
        },
        Case(name: "a typed 70000 into an int16", code: .type, message: "70000") { c, s in
            try c.update(s.kim, typedValues: ["age": .int(70000)])
        },
    ]

    @Test("each bad value is refused with its specific error and the context is unchanged", arguments: cases)
    func refused(_ testCase: Case) throws {
        let fixture = ContextFixture(employeesRule: .nullify)
        let context = fixture.context()
        let development = try context.insert(entity: "Department", values: ["name": "Development"])
        let kim = try context.insert(entity: "Employee", values: ["name": "Kim", "salary": "1", "department": "Department/1"])
        let lee = try context.insert(entity: "Employee", values: ["name": "Lee", "salary": "2", "department": "Department/1"])
        let student = try context.insert(entity: "Student", values: ["name": "Han"])
        try context.insert(entity: "Department", values: ["name": "Design"])
        try context.insert(entity: "Department", values: ["name": "HR"])
        let hr = try context.insert(entity: "Department", values: ["name": "Gone"])
        try context.save()
        try context.delete(lee)
        try context.delete(hr)
        let pending = try context.insert(entity: "Employee", values: ["name": "Ahn", "salary": "3"])
        try context.update(kim, values: ["age": 33])
        let scene = Scene(kim: kim, lee: lee, development: development, pending: pending, deleted: hr, student: student)
        let before = try ContextFixture.fingerprint(context)
        let log = context.overlay.log.count
        let error = expectKeelError(testCase.code) { try testCase.run(context, scene) }
        #expect(error?.message.contains(testCase.message) == true, "\(error?.message ?? "")")
        #expect(try ContextFixture.fingerprint(context) == before)
        #expect(context.overlay.log.count == log)
        try context.save()
        #expect(fixture.store.state.rows[kim]?.values[CompanyModel.age] == .int(33))
        #expect(fixture.store.state.rows[kim]?.values[CompanyModel.name] == .string("Kim"))
    }
}
