// A small fixed data set on the project's model for exact fetch expectations:
//
// | Department | 1 Sales (code 1); 2 Design (code 2); 3 Dev (no code) — all of company Acme |
// | Employee | 1 Alice 30 5200 Sales; 2 bob 25 4100 Sales; 3 Chloé 41 6100 Design; 4 David (no age) 3900 Design; 5 Eve 35 5200 (no department); 6 Zed 52 7200 Dev |
// | Student | 1 Sam 16 grade 10; 2 ann 17 grade 11 |
// | Computer | 1 MacBook → Alice; 2 ThinkPad → Alice |
// | Book (store Default) | 1 "Swift" U1; 2 "Linux" U2 |
// | Feedback (store Feedback) | 1 great U1 4.5; 2 meh U2 3; 3 long U1 2 |

import Foundation
import Testing

@testable import KeelModel

struct FetchTestData {
    let store: StoreFixture
    var model: Model { store.model }
    var departments: [ObjectID] = []
    var employees: [ObjectID] = []
    var students: [ObjectID] = []
    var books: [ObjectID] = []
    static let u1 = "00000000-0000-0000-0000-0000000000A1"
    static let u2 = "00000000-0000-0000-0000-0000000000A2"

    init() throws {
        store = try StoreFixture(model: try TestModels.projectModel())
        let c = ObjectContext(store: store.store)
        let acme = try c.insert(entity: "Company", values: ["name": "Acme"])
        let acmeText = JSON.string(acme.text(in: model))
        departments.append(try c.insert(entity: "Department", values: ["name": "Sales", "code": 1, "companies": [acmeText]]))
        departments.append(try c.insert(entity: "Department", values: ["name": "Design", "code": 2, "companies": [acmeText]]))
        departments.append(try c.insert(entity: "Department", values: ["name": "Dev", "companies": [acmeText]]))
        let people: [(String, JSON, String, Int?)] = [
            ("Alice", 30, "5200", 0), ("bob", 25, "4100", 0), ("Chloé", 41, "6100", 1), ("David", nil, "3900", 1),
            ("Eve", 35, "5200", nil), ("Zed", 52, "7200", 2),
        ]
        for (name, age, salary, department) in people {
            var values: JSON = ["name": .string(name), "age": age, "salary": .string(salary)]
            if let department, case .object(var o) = values {
                o["department"] = .string(departments[department].text(in: model))
                values = .object(o)
            }
            employees.append(try c.insert(entity: "Employee", values: values))
        }
        students.append(try c.insert(entity: "Student", values: ["name": "Sam", "age": 16, "grade": 10]))
        students.append(try c.insert(entity: "Student", values: ["name": "ann", "age": 17, "grade": 11]))
        let alice = JSON.string(employees[0].text(in: model))
        _ = try c.insert(entity: "Computer", values: ["id": "00000000-0000-0000-0000-000000000001", "model": "MacBook", "owner": alice])
        _ = try c.insert(entity: "Computer", values: ["id": "00000000-0000-0000-0000-000000000002", "model": "ThinkPad", "owner": alice])
        books.append(try c.insert(entity: "Book", values: ["uuid": .string(Self.u1), "title": "Swift"]))
        books.append(try c.insert(entity: "Book", values: ["uuid": .string(Self.u2), "title": "Linux"]))
        _ = try c.insert(entity: "Feedback", values: ["bookUUID": .string(Self.u1), "rating": 4.5, "comment": "great"])
        _ = try c.insert(entity: "Feedback", values: ["bookUUID": .string(Self.u2), "rating": 3, "comment": "meh"])
        _ = try c.insert(entity: "Feedback", values: ["bookUUID": .string(Self.u1), "rating": 2, "comment": "long"])
        try c.save()
    }

    func context() -> ObjectContext { ObjectContext(store: store.store) }

    func id(_ i: Int) -> JSON { .string(employees[i].text(in: model)) }
    func dept(_ i: Int) -> JSON { .string(departments[i].text(in: model)) }
}

extension FetchTestData {
    /// Departments of one new company "Acme", inserted in `c` (not saved), by name: the wire IDs.
    static func departments(_ names: [String], in c: ObjectContext, _ model: Model) throws -> [JSON] {
        let acme = JSON.string(try c.insert(entity: "Company", values: ["name": "Acme"]).text(in: model))
        return try names.map { name in
            .string(try c.insert(entity: "Department", values: ["name": .string(name), "companies": [acme]]).text(in: model))
        }
    }
}
