// Shared setup for context tests: a store with the Company model, the tutorials' departments and
// employees (seed 000: department.json and employee.json, department 0 = none), and helpers that
// read a context's whole visible state so a test can assert that a failed command changed nothing.

import KeelModel
import Testing

@testable import KeelModel

struct ContextFixture {
    let model: Model
    let store: MemoryStore

    init(employeesRule: DeleteRule = .cascade) {
        model = CompanyModel.make(employeesRule: employeesRule)
        store = MemoryStore(model: model)
    }

    func context(_ policy: MergePolicy = .error) -> ObjectContext {
        ObjectContext(store: store, mergePolicy: policy)
    }

    static let departments: [(Int, String)] = [
        (1, "Management"), (2, "Design"), (3, "Development"), (4, "HR"), (5, "Planning"), (6, "Finance"), (7, "Sales"),
        (8, "Public Relation"),
    ]

    /// (name, age, address, salary, department number; 0 = none)
    static let employees: [(String, Int64, String, String, Int)] = [
        ("Kim", 30, "Seoul", "5200.5", 3), ("Lee", 41, "Busan", "6100", 3), ("Park", 25, "Incheon", "3900", 2),
        ("Choi", 35, "Daegu", "4800", 1), ("Jung", 29, "Seoul", "4100", 3), ("Kang", 52, "Gwangju", "7200", 6),
        ("Cho", 23, "Ulsan", "3100", 0), ("Yoon", 38, "Suwon", "5600", 7),
    ]

    /// Imports the tutorial data in one context and saves it. Returns department number → ID and
    /// the employees' IDs in order.
    @discardableResult
    func importCompany() throws -> (departments: [Int: ObjectID], employees: [ObjectID]) {
        let context = context()
        var departments: [Int: ObjectID] = [:]
        for (number, name) in Self.departments {
            departments[number] = try context.insert(entity: "Department", values: ["name": .string(name)])
        }
        var employees: [ObjectID] = []
        for (name, age, address, salary, department) in Self.employees {
            var values: JSON = ["name": .string(name), "age": .int(age), "address": .string(address), "salary": .string(salary)]
            if let id = departments[department], case .object(var members) = values {
                members["department"] = .string(id.text(in: model))
                values = .object(members)
            }
            employees.append(try context.insert(entity: "Employee", values: values))
        }
        try context.save()
        return (departments, employees)
    }

    /// Everything a context shows: its changes, pending count, log length and every object.
    static func fingerprint(
        _ context: ObjectContext, entities: [String] = ["Employee", "Student", "Department"]
    ) throws -> String {
        var text = "\(context.changes()) pending=\(context.pendingObjectCount) log=\(context.overlay.log.count)\n"
        for entity in entities {
            for object in try context.fetch(entity: entity) { text += object.json(in: context.model).serialized() + "\n" }
        }
        return text
    }
}

/// Runs `body`, expecting a `KeelError` with `code`; returns it.
@discardableResult
func expectKeelError(
    _ code: KeelError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> KeelError? {
    do {
        try body()
        Issue.record("expected \(code), but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as KeelError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected KeelError \(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
