// A fixed, in-memory data set of the sample model (config/model.json) for predicate tests, and
// the tiny `ObjectGraphReading` it is read through.
//
// | entity | objects (number: name …) |
// | --- | --- |
// | Department | 1 Sales (code 10, companies Acme), 2 Engineering (20, Globex), 3 Émigré Services (30, Acme + Globex, no employees) |
// | Company | 1 Acme (https://acme.example, founded 1990, reg 100), 2 Globex (no website, founded 2005, reg 200) |
// | Employee | 1 Alice 30 f 5200.00 hired 2020-01-15 manager Sales Acme "1 Main St"; 2 bob 25 m 3100.50 hired 2021-06-01 Sales Acme; 3 Chloé 41 f 7000 Engineering Globex "Straße 5"; 4 David (no age) 4000 no department; 5 Eve 35 5200 hired 2019-03-01 manager Engineering Acme "*star*"; 6 Zed 50 100, department → Department/9 which does not exist (dangling) |
// | Student | 1 Frank 16 grade 10 Math; 2 GRACE 17 grade 11 |
// | Computer | 1 "MacBook Pro" 2499.99 laptop → Alice; 2 ThinkPad 1200 laptop → Alice; 3 "Desktop?" no price, not a laptop → Chloé; 4 no model 300 → Frank |
// | Book | 1 "Swift" uuid U1; 2 "Linux" uuid U2 |
// | Feedback | 1 "great" U1 4.5; 2 "meh" U2 3; 3 "long" U1 2 |

import Foundation
import Testing

@testable import KeelModel

/// Objects and to-many members held in dictionaries.
struct MemoryGraph: ObjectGraphReading {
    let model: Model
    var objects: [ObjectID: StoredObject] = [:]
    var links: [ObjectID: [Int: [ObjectID]]] = [:]

    func object(_ id: ObjectID) throws(KeelError) -> StoredObject? { objects[id] }

    func members(of id: ObjectID, field: Int) throws(KeelError) -> [ObjectID] {
        (links[id]?[field] ?? []).filter { objects[$0] != nil }
    }

    /// Every object of `entity` and its sub-entities, by ID.
    func all(_ entity: String) -> [StoredObject] {
        guard let e = model.entity(named: entity) else { return [] }
        return objects.values.filter { e.includes($0.id.entity) }.sorted { $0.id < $1.id }
    }
}

enum PredicateFixture {
    static let u1 = "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"
    static let u2 = "0f8fad5b-d9cb-469f-a165-70867728950e"

    /// The sample model, loaded once.
    static let model: Model = {
        do { return try ModelFixture.sample() } catch { fatalError("the sample model does not load: \(error)") }
    }()

    static let graph: MemoryGraph = build()

    static func id(_ text: String) -> ObjectID {
        guard let id = model.objectID(text) else { fatalError("bad id \(text)") }
        return id
    }

    private static func build() -> MemoryGraph {
        var g = MemoryGraph(model: model)
        func put(_ entity: String, _ number: UInt64, _ values: [String: JSON]) {
            guard let e = model.entity(named: entity) else { fatalError(entity) }
            var row = [Value](repeating: .null, count: e.properties.count)
            for (name, json) in values {
                guard let field = e.field(named: name) else { fatalError("\(entity).\(name)") }
                switch e.properties[field] {
                case .attribute(let a):
                    do { row[field] = try a.decode(json, entity: entity) } catch { fatalError("\(error)") }
                case .relationship:
                    row[field] = .object(id(json.stringValue ?? ""))
                }
            }
            g.objects[ObjectID(entity: e.id, number: number)] = StoredObject(id: ObjectID(entity: e.id, number: number), version: 1, values: row)
        }
        put("Department", 1, ["name": "Sales", "code": 10])
        put("Department", 2, ["name": "Engineering", "code": 20])
        put("Department", 3, ["name": "Émigré Services", "code": 30])
        put("Company", 1, ["name": "Acme", "website": "https://acme.example", "founded": "1990-01-01T00:00:00Z", "registrationNumber": 100])
        put("Company", 2, ["name": "Globex", "founded": "2005-05-05T00:00:00Z", "registrationNumber": 200])
        put("Employee", 1, [
            "name": "Alice", "age": 30, "gender": "female", "salary": "5200.00", "hiredAt": "2020-01-15T09:00:00Z", "isManager": true,
            "department": "Department/1", "company": "Company/1", "address": "1 Main St",
        ])
        put("Employee", 2, [
            "name": "bob", "age": 25, "gender": "male", "salary": "3100.50", "hiredAt": "2021-06-01T00:00:00Z", "isManager": false,
            "department": "Department/1", "company": "Company/1",
        ])
        put("Employee", 3, [
            "name": "Chloé", "age": 41, "gender": "female", "salary": "7000", "isManager": false, "department": "Department/2",
            "company": "Company/2", "address": "Straße 5",
        ])
        put("Employee", 4, ["name": "David", "salary": "4000", "isManager": false])
        put("Employee", 5, [
            "name": "Eve", "age": 35, "salary": "5200", "hiredAt": "2019-03-01T00:00:00Z", "isManager": true,
            "department": "Department/2", "company": "Company/1", "address": "*star*",
        ])
        put("Employee", 6, ["name": "Zed", "age": 50, "salary": "100", "isManager": false])
        // Zed's department is an object that does not exist (dangling).
        if let e = model.entity(named: "Employee"), let field = e.field(named: "department") {
            g.objects[id("Employee/6")]?.values[field] = .object(ObjectID(entity: model.entity(named: "Department")!.id, number: 9))
        }
        put("Student", 1, ["name": "Frank", "age": 16, "grade": 10, "course": "Math"])
        put("Student", 2, ["name": "GRACE", "age": 17, "grade": 11])
        put("Computer", 1, ["id": .string(u1), "model": "MacBook Pro", "price": 2499.99, "isLaptop": true, "owner": "Employee/1"])
        put("Computer", 2, ["id": .string(u2), "model": "ThinkPad", "price": 1200, "isLaptop": true, "owner": "Employee/1"])
        put("Computer", 3, ["id": .string(u1), "model": "Desktop?", "isLaptop": false, "owner": "Employee/3"])
        put("Computer", 4, ["id": .string(u2), "price": 300, "isLaptop": true, "owner": "Student/1"])
        put("Book", 1, ["uuid": .string(u1), "title": "Swift"])
        put("Book", 2, ["uuid": .string(u2), "title": "Linux"])
        put("Feedback", 1, ["bookUUID": .string(u1), "rating": 4.5, "comment": "great"])
        put("Feedback", 2, ["bookUUID": .string(u2), "rating": 3, "comment": "meh"])
        put("Feedback", 3, ["bookUUID": .string(u1), "rating": 2, "comment": "long"])

        func link(_ from: String, _ relationship: String, _ to: [String]) {
            let source = id(from)
            guard let field = model[source.entity].field(named: relationship) else { fatalError(relationship) }
            g.links[source, default: [:]][field] = to.map(id)
        }
        link("Department/1", "employees", ["Employee/1", "Employee/2"])
        link("Department/2", "employees", ["Employee/3", "Employee/5"])
        link("Department/1", "companies", ["Company/1"])
        link("Department/2", "companies", ["Company/2"])
        link("Department/3", "companies", ["Company/1", "Company/2"])
        link("Company/1", "departments", ["Department/1", "Department/3"])
        link("Company/2", "departments", ["Department/2", "Department/3"])
        link("Company/1", "employees", ["Employee/1", "Employee/2", "Employee/5"])
        link("Company/2", "employees", ["Employee/3"])
        link("Employee/1", "computers", ["Computer/1", "Computer/2"])
        link("Employee/3", "computers", ["Computer/3"])
        link("Student/1", "computers", ["Computer/4"])
        return g
    }

    /// How a matched object is named in expectations: its `name`, else `model`/`comment`/`title`,
    /// else its ID.
    static func label(_ object: StoredObject) -> String {
        let entity = model[object.id.entity]
        for key in ["name", "model", "comment", "title"] {
            if let field = entity.field(named: key), case .string(let s) = object.values[field] { return s }
        }
        return object.id.text(in: model)
    }

    /// The labels of the objects of `entity` (with sub-entities) matching `predicate`, in ID order.
    static func matches(
        _ entity: String, _ predicate: String, args: [JSON] = [], vars: [String: JSON] = [:], fetchSource: FetchSource? = nil
    ) throws -> [String] {
        guard let e = model.entity(named: entity) else { throw KeelError(.noSuchEntity, entity) }
        let bound = try PredicateBinder(model: model, args: args, vars: vars, fetchSource: fetchSource).bind(predicate, to: e.id)
        var labels: [String] = []
        for object in graph.all(entity) where try bound.evaluate(object, in: graph) { labels.append(label(object)) }
        return labels
    }

    /// The PREDICATE error binding `predicate` for `entity` gives, or nil when it binds.
    static func error(_ entity: String, _ predicate: String, args: [JSON] = [], vars: [String: JSON] = [:]) -> KeelError? {
        guard let e = model.entity(named: entity) else { return KeelError(.noSuchEntity, entity) }
        do {
            _ = try PredicateBinder(model: model, args: args, vars: vars).bind(predicate, to: e.id)
            return nil
        } catch {
            return error
        }
    }
}
