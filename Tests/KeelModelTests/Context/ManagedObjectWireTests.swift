// The two outputs of an object's wire form (ManagedObject+Wire.swift): the text keeld writes
// straight into a reply's bytes must be the text of the `JSON` tree, byte for byte — for objects
// of every entity of config/model.json with values of every attribute type (unicode and escapes,
// nulls, decimals, dates, binary, uuid, uri, json, float and double edge cases), to-one nil and
// set, empty and ordered to-many, selected fields, included objects and fetched properties —
// and the tree keeps the form the protocol documents (checked against whole lines written out
// here).

import Foundation
import Testing

@testable import KeelModel

@Suite("ManagedObject wire form: text writer against the JSON tree")
struct ManagedObjectWireTests {
    let model: Model

    init() throws { model = try TestModels.projectModel() }

    func id(_ entity: String, _ number: UInt64) throws -> ObjectID {
        ObjectID(entity: try #require(model.entity(named: entity)).id, number: number)
    }

    /// An object of `entity` with `values` by name (every other field unset).
    func object(
        _ entity: String, _ number: UInt64, version: UInt64 = 3, _ values: [String: Value] = [:], included: [String: [ManagedObject]] = [:]
    ) throws -> ManagedObject {
        let e = try #require(model.entity(named: entity))
        var row = [Value](repeating: .null, count: e.properties.count)
        for (name, value) in values { row[try #require(e.field(named: name), "\(entity).\(name)")] = value }
        return ManagedObject(id: ObjectID(entity: e.id, number: number), entity: e, version: version, values: row, included: included)
    }

    func text(_ o: ManagedObject, fields: [Int]? = nil) -> String {
        var bytes: [UInt8] = []
        o.write(to: &bytes, in: model, fields: fields)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The writer's bytes are the tree's text; also after other text in the buffer.
    func expectSame(_ o: ManagedObject, fields: [Int]? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        let tree = o.json(in: model, fields: fields).serialized()
        #expect(text(o, fields: fields) == tree, sourceLocation: sourceLocation)
        var bytes = Array("t ROW ".utf8)
        o.write(to: &bytes, in: model, fields: fields)
        #expect(String(decoding: bytes, as: UTF8.self) == "t ROW " + tree, sourceLocation: sourceLocation)
    }

    static let strings = [
        "", "plain", "é😀 Ünïcode / slash", "quote \" backslash \\ newline \n tab \t cr \r", "\u{0}\u{1}\u{8}\u{C}\u{1F}\u{7F}",
        String(repeating: "long ", count: 100),
    ]

    @Test("objects of every entity of config/model.json, with values of every attribute type: the same text both ways, and the documented form")
    func everyAttributeType() throws {
        let date = Int64(1_763_717_400_123)  // 2025-11-21T09:30:00.123Z
        var objects: [ManagedObject] = []
        for (i, s) in Self.strings.enumerated() {
            let n = UInt64(i + 1)
            objects.append(try object("Person", n, ["name": .string(s), "age": .int(Int64(Int16.min) + Int64(i)), "address": i % 2 == 0 ? .null : .string(s),
                                                    "gender": .string("f"), "photo": .binary(Array(s.utf8) + [0, 255, 128])]))
            objects.append(try object("Employee", n, ["name": .string(s), "salary": .decimal(Decimal(string: ["0", "-1234.50", "99999999999999999999999999999999999999", "0.000001", "7", "1e20"][i])!),
                                                      "hiredAt": .date(date * Int64(i % 3 - 1)), "isManager": .bool(i % 2 == 0),
                                                      "department": i % 2 == 0 ? .null : .object(try id("Department", 9)), "company": .object(try id("Company", n))]))
            objects.append(try object("Computer", n, ["id": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), "model": .string(s),
                                                      "price": .double([0.1, -0.0, 2.0, 1e300, .nan, -.infinity][i]), "isLaptop": .bool(true),
                                                      "specs": .json(["ram": 16, "tags": ["a", .string(s)], "none": nil, "f": 1.5])]))
            objects.append(try object("Company", n, ["name": .string(s), "website": .uri("https://example.com/\(i)?q=a&b=\"c\""), "founded": .date(-date),
                                                     "registrationNumber": .int([Int64.max, .min, 0, 1, -1, 42][i]),
                                                     "departments": .objects([]), "employees": .objects((1...UInt64(i + 1)).map { try! id("Employee", $0) })]))
            objects.append(try object("Department", n, ["name": .string(s), "code": .int(Int64(i)), "companies": .objects([try id("Company", 1)]),
                                                        "employees": .objects([try id("Employee", 3), try id("Employee", 1), try id("Employee", 2)])]))
            objects.append(try object("Feedback", n, ["bookUUID": .uuid(UUID()), "rating": .double([0.1, 3.4028235e38, 4.5, .infinity, 1e-45, 0][i]), "comment": .string(s)]))
            objects.append(try object("Book", n, ["uuid": .uuid(UUID()), "title": .string(s), "publishedAt": .null, "isSelected": .bool(false)]))
            objects.append(try object("Student", n, ["name": .string(s), "grade": .int(Int64(Int32.max)), "course": .null]))
        }
        for o in objects {
            expectSame(o)
            let count = o.entity.properties.count
            expectSame(o, fields: [])
            expectSame(o, fields: [count - 1, 0])
            expectSame(o, fields: Array(stride(from: 0, to: count, by: 2)))
        }
        // An object with nothing set: nulls, empty to-manys, null to-ones.
        for entity in model.entities where !entity.isAbstract {
            expectSame(try object(entity.name, 1))
        }
        // The documented form, whole (spec/protocol.md, "Values and objects").
        let company = try object("Company", 7, version: 2, [
            "name": .string("Acme \"R&D\"\n"), "website": .uri("https://acme.example"), "founded": .date(date),
            "registrationNumber": .int(42), "employees": .objects([try id("Employee", 2), try id("Employee", 1)]),
        ])
        #expect(text(company) == #"{"$id":"Company/7","$entity":"Company","$version":2,"name":"Acme \"R&D\"\n","website":"https://acme.example","founded":"2025-11-21T09:30:00.123Z","registrationNumber":42,"departments":[],"employees":["Employee/2","Employee/1"]}"#)
        let computer = try object("Computer", 1, version: 0, ["id": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), "price": .double(2.0), "specs": .json(["ram": 16])])
        #expect(text(computer) == #"{"$id":"Computer/1","$entity":"Computer","$version":0,"id":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f","model":null,"price":2.0,"isLaptop":null,"specs":{"ram":16},"owner":null}"#)
    }

    @Test("included relationships and fetched properties: embedded objects (one, none, many), selected fields keep them, the same text both ways")
    func included() throws {
        let department = try object("Department", 4, ["name": .string("R&D"), "employees": .objects([try id("Employee", 1), try id("Employee", 2)])])
        let kim = try object("Employee", 1, ["name": .string("Kim"), "salary": .decimal(Decimal(string: "5200.00")!), "department": .object(department.id)])
        let lee = try object("Employee", 2, ["name": .string("Lee"), "salary": .decimal(1)])
        let withDepartment = try object("Employee", 1, version: kim.version, ["name": .string("Kim"), "department": .object(department.id)], included: ["department": [department]])
        let noDepartment = try object("Employee", 3, ["name": .string("Nobody")], included: ["department": []])
        let withEmployees = try object("Department", 4, ["name": .string("R&D"), "employees": .objects([kim.id, lee.id])], included: ["employees": [kim, lee]])
        let feedback = try object("Feedback", 5, ["rating": .double(4.5), "comment": .string("good")])
        let book = try object("Book", 6, ["title": .string("T")], included: ["feedbackList": [feedback, feedback]])
        let bookNone = try object("Book", 7, ["title": .string("T")], included: ["feedbackList": []])
        for o in [withDepartment, noDepartment, withEmployees, book, bookNone] {
            expectSame(o)
            expectSame(o, fields: [0])
        }
        #expect(text(noDepartment, fields: [0]).hasSuffix(#","name":"Nobody","department":null}"#))
        #expect(text(withDepartment).contains(#""department":{"$id":"Department/4","$entity":"Department","#))
        #expect(text(bookNone).hasSuffix(#""feedbackList":[]}"#))
    }
}
