import Foundation
import Testing

@testable import KeelModel

@Suite("The sample model (config/model.json)")
struct SampleModelTests {
    @Test("loads without problems or warnings, entities in file order")
    func loads() throws {
        let model = try ModelFixture.sample()
        #expect(model.name == "Company")
        #expect(model.version == 1)
        #expect(model.warnings == [])
        #expect(model.entities.map(\.name) == ["Person", "Employee", "Student", "Computer", "Company", "Department", "Book", "Feedback"])
        #expect(model.entities.enumerated().allSatisfy { $1.id == EntityID($0) })
    }

    @Test("Person is abstract with Employee and Student below it; fields are inherited first")
    func hierarchy() throws {
        let model = try ModelFixture.sample()
        let person = try #require(model.entity(named: "Person"))
        let employee = try #require(model.entity(named: "Employee"))
        let student = try #require(model.entity(named: "Student"))
        #expect(person.isAbstract)
        #expect(!employee.isAbstract)
        #expect(employee.parent == person.id && student.parent == person.id)
        #expect(person.family == [person.id, employee.id, student.id])
        #expect(employee.root == person.id && person.root == person.id)
        #expect(person.properties.map(\.name) == ["name", "age", "address", "gender", "photo", "computers"])
        #expect(employee.properties.map(\.name) == ["name", "age", "address", "gender", "photo", "computers", "salary", "hiredAt", "isManager", "department", "company"])
        #expect(student.properties.map(\.name) == ["name", "age", "address", "gender", "photo", "computers", "grade", "course"])
        for name in ["name", "age", "address", "gender", "photo", "computers"] {
            #expect(person.field(named: name) == employee.field(named: name))
            #expect(person.field(named: name) == student.field(named: name))
        }
        #expect(employee.property(named: "name")?.declaredIn == person.id)
    }

    @Test("every attribute type, a transient attribute, and typed defaults and bounds")
    func attributes() throws {
        let model = try ModelFixture.sample()
        let types = Set(model.entities.flatMap { $0.attributes.map(\.attribute.type) })
        #expect(types == Set(AttributeType.allCases))
        let book = try #require(model.entity(named: "Book"))
        guard case .attribute(let selected) = try #require(book.property(named: "isSelected")) else {
            Issue.record("isSelected is not an attribute")
            return
        }
        #expect(selected.isTransient)
        let employee = try #require(model.entity(named: "Employee"))
        guard case .attribute(let salary) = try #require(employee.property(named: "salary")) else { return }
        #expect(salary.type == .decimal && !salary.isOptional && salary.minValue == .decimal(0))
        let person = try #require(model.entity(named: "Person"))
        guard case .attribute(let age) = try #require(person.property(named: "age")) else { return }
        #expect(age.defaultValue == .int(0) && age.maxValue == .int(150))
        let company = try #require(model.entity(named: "Company"))
        guard case .attribute(let founded) = try #require(company.property(named: "founded")) else { return }
        #expect(founded.minValue == .date(WireDate.parse("1800-01-01T00:00:00Z")!))
    }

    @Test("to-one, to-many and many-to-many relationships, all with mutual inverses")
    func relationships() throws {
        let model = try ModelFixture.sample()
        var kinds: Set<String> = []
        for entity in model.entities {
            for (_, r) in entity.relationships {
                let inverseName = try #require(r.inverse)
                let destination = model[r.destination]
                guard case .relationship(let inverse) = try #require(destination.property(named: inverseName)) else {
                    Issue.record("\(entity.name).\(r.name)'s inverse is not a relationship")
                    continue
                }
                #expect(inverse.inverse == r.name)
                kinds.insert(r.isToMany ? (inverse.isToMany ? "many-to-many" : "one-to-many") : (inverse.isToMany ? "many-to-one" : "one-to-one"))
            }
        }
        #expect(kinds.isSuperset(of: ["many-to-many", "one-to-many", "many-to-one"]))
        let rules = Set(model.entities.flatMap { $0.relationships.map(\.relationship.deleteRule) })
        #expect(rules == Set(DeleteRule.allCases))
        let department = try #require(model.entity(named: "Department"))
        guard case .relationship(let employees) = try #require(department.property(named: "employees")),
            case .relationship(let companies) = try #require(department.property(named: "companies"))
        else { return }
        #expect(employees.isOrdered && employees.isToMany && employees.deleteRule == .deny)
        #expect(companies.minCount == 1 && companies.maxCount == 10)
        let computer = try #require(model.entity(named: "Computer"))
        guard case .relationship(let owner) = try #require(computer.property(named: "owner")) else { return }
        #expect(owner.destination == model.entity(named: "Person")?.id && owner.deleteRule == .noAction)
    }

    @Test("indexes (indexed attributes and compound) and unique constraints, inherited by sub-entities")
    func indexes() throws {
        let model = try ModelFixture.sample()
        let employee = try #require(model.entity(named: "Employee"))
        #expect(employee.indexes.map(\.name) == ["Person.name", "Employee.department,salary"])
        #expect(employee.indexes[1].fields == [employee.field(named: "department"), employee.field(named: "salary")].compactMap { $0 })
        #expect(model.entity(named: "Student")?.indexes.map(\.name) == ["Person.name"])
        let company = try #require(model.entity(named: "Company"))
        #expect(company.uniqueConstraints.map(\.name) == ["Company.name"])
        #expect(company.uniqueConstraints.allSatisfy { $0.isUnique })
        #expect(model.entity(named: "Book")?.uniqueConstraints.first?.propertyNames == ["uuid"])
    }

    @Test("Book and Feedback live in two configurations, joined by the fetched property feedbackList")
    func configurations() throws {
        let model = try ModelFixture.sample()
        #expect(Array(model.configurations.keys) == ["Default", "Feedback"])
        let book = try #require(model.entity(named: "Book"))
        let feedback = try #require(model.entity(named: "Feedback"))
        #expect(model.configuration(of: book.id) != model.configuration(of: feedback.id))
        let list = try #require(book.fetchedProperty(named: "feedbackList"))
        #expect(list.destination == feedback.id)
        #expect(list.predicate == "bookUUID == $FETCH_SOURCE.uuid")
        #expect(list.sort == [KeelSortDescriptor(key: "rating", ascending: false)])
    }

    @Test("the canonical form loads back to the same hash")
    func canonicalRoundTrip() throws {
        let model = try ModelFixture.sample()
        let again = try ModelLoader.load(json: model.canonical)
        #expect(again.hash == model.hash)
        #expect(again.canonical == model.canonical)
        #expect(model.hash.count == 64 && model.hash.allSatisfy { "0123456789abcdef".contains($0) })
    }
}
