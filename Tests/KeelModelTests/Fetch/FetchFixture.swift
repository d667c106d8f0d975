// A store with the project's model (config/model.json: Person ← Employee/Student, Department
// with an indexed name, Employee's compound index (department, salary), Company's unique name,
// Book in store Default and Feedback in store Feedback) on the in-memory file system, filled with
// seeded random objects for fetch tests: names with case and accent variants and ties, nil ages,
// salaries, dates and departments, so every index and every nil rule is met.

import Foundation
import Testing

@testable import KeelModel

struct FetchFixture {
    var store: StoreFixture
    var model: Model { store.model }
    var companies: [ObjectID] = []
    var departments: [ObjectID] = []
    var employees: [ObjectID] = []
    var students: [ObjectID] = []

    static let names = [
        "Anna", "anna", "Ånna", "Bob", "bob", "Chloé", "Chloe", "David", "Eve", "Émile", "Frank", "Grace", "Heidi", "Ivan",
        "Judy", "Kim", "kim", "Lee", "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter",
        "Zed", "Ann", "Annabel", "B", "Ka", "Kalle",
    ]
    static let departmentNames = ["Sales", "Design", "Development", "HR", "Planning", "Finance", "sales", "Research"]
    static let addresses = ["Seoul", "Busan", "Main Strasse 1", "Hauptstraße 2", "Oak Road", "Elm Street"]

    init(employees employeeCount: Int = 600, students studentCount: Int = 150, seed: UInt64) throws {
        store = try StoreFixture(model: try TestModels.projectModel())
        var rng = SeededGenerator(seed: seed)
        let context = ObjectContext(store: store.store)
        for name in ["Acme", "Globex", "Initech"] {
            companies.append(try context.insert(entity: "Company", values: ["name": .string(name)]))
        }
        for name in Self.departmentNames {
            var values: [String: JSON] = ["name": .string(name), "companies": .array([.string(companies.randomElement(using: &rng)!.text(in: model))])]
            if Int.random(in: 0..<4, using: &rng) > 0 { values["code"] = .int(Int64.random(in: 1...5, using: &rng)) }
            departments.append(try context.insert(entity: "Department", values: .object(.init(uniqueKeysWithValues: values.sorted { $0.key < $1.key }))))
        }
        for _ in 0..<employeeCount {
            employees.append(try context.insert(entity: "Employee", values: Self.randomEmployee(&rng, departments: departments, model: model)))
        }
        for _ in 0..<studentCount {
            var values = Self.randomPerson(&rng)
            values["grade"] = Int.random(in: 0..<5, using: &rng) == 0 ? .null : .int(Int64.random(in: 1...12, using: &rng))
            values["course"] = .string(["Math", "Art", "math", "Biology"].randomElement(using: &rng)!)
            students.append(try context.insert(entity: "Student", values: .object(.init(uniqueKeysWithValues: values.sorted { $0.key < $1.key }))))
        }
        try context.save()
    }

    static func randomPerson(_ rng: inout SeededGenerator) -> [String: JSON] {
        var values: [String: JSON] = ["name": .string(names.randomElement(using: &rng)!)]
        values["age"] = Int.random(in: 0..<8, using: &rng) == 0 ? .null : .int(Int64.random(in: 18...70, using: &rng))
        if Bool.random(using: &rng) { values["address"] = .string(addresses.randomElement(using: &rng)!) }
        return values
    }

    static func randomEmployee(_ rng: inout SeededGenerator, departments: [ObjectID], model: Model) -> JSON {
        var values = randomPerson(&rng)
        values["salary"] = .string("\(Int.random(in: 10...80, using: &rng) * 100)\(Bool.random(using: &rng) ? ".50" : "")")
        if Int.random(in: 0..<6, using: &rng) > 0 {
            let ms = Int64.random(in: 1_500_000_000_000...1_750_000_000_000, using: &rng) / 86_400_000 * 86_400_000
            values["hiredAt"] = .string(WireDate.format(ms))
        }
        values["isManager"] = .bool(Int.random(in: 0..<5, using: &rng) == 0)
        if Int.random(in: 0..<10, using: &rng) > 0, let d = departments.randomElement(using: &rng) {
            values["department"] = .string(d.text(in: model))
        }
        return .object(.init(uniqueKeysWithValues: values.sorted { $0.key < $1.key }))
    }

    func context() -> ObjectContext { ObjectContext(store: store.store) }
}

extension ObjectContext {
    /// The IDs a request fetches, in order.
    func ids(_ request: FetchRequest) throws -> [ObjectID] {
        var request = request
        request.result = .ids
        return try fetch(request).map(\.id)
    }

    /// `ids` by their text (`Employee/3`).
    func names(_ request: FetchRequest, property: String = "name") throws -> [String] {
        try fetch(request).compactMap { row in
            guard case .string(let s)? = row.object?[property] else { return nil }
            return s
        }
    }
}
