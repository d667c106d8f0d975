// Which saves live results refetch for: only the fetched entity's when the predicate, the sorts
// and the section key read nothing but the fetched objects; every entity's otherwise — decided
// from the predicate's syntax tree, so a dotted literal does not make it follow everything.

import KeelModel
import KeelSampleModel
import Testing

@testable import KeelClient

@Suite("Live results: what they follow")
struct LiveResultsFollowTests {
    @Test("own properties follow the entity only; a key path in the predicate, a sort or the section key follows every entity")
    func follows() throws {
        let model = try ModelLoader.load(path: TestPaths.model)
        func follows(_ request: KeelFetchRequest<Employee>, _ section: (any GroupableKey<Employee>)? = nil) -> Bool {
            KeelFetchedResults<Employee>.AsyncIterator.followsKeyPaths(request, section, model: model)
        }
        #expect(!follows(KeelFetchRequest(Employee.self)))
        #expect(!follows(KeelFetchRequest(Employee.self, where: Employee.age > 30 && Employee.name.beginsWith("K"))))
        #expect(!follows(KeelFetchRequest(Employee.self, where: TypedPredicate("name == 'a.b' OR salary > 3.5"))))
        #expect(!follows(KeelFetchRequest(Employee.self, where: Employee.address == nil)))
        // Employee.department cannot dangle (Department.employees denies the delete).
        #expect(!follows(KeelFetchRequest(Employee.self, where: Employee.department == nil)))
        #expect(!follows(KeelFetchRequest(Employee.self, where: Employee.department == KeelID<Department>("Department/1")!)))
        #expect(follows(KeelFetchRequest(Employee.self, where: Employee.department.name == "Sales")))
        #expect(follows(KeelFetchRequest(Employee.self, sortedBy: [.ascending(\.department.name)])))
        #expect(follows(KeelFetchRequest(Employee.self, sortedBy: [.ascending(\.name)]), Employee.department.name))
        #expect(!follows(KeelFetchRequest(Employee.self, sortedBy: [.ascending(\.name)]), Employee.name))
        #expect(follows(KeelFetchRequest(Employee.self, where: TypedPredicate("name =="))), "a predicate that does not parse follows everything")
        // Person.computers may dangle (deleting a computer leaves its owner alone: Computer.owner
        // is noAction): comparing it follows every entity, whatever the operator.
        #expect(follows(KeelFetchRequest(Employee.self, where: Employee.computers.contains(KeelID<Computer>("Computer/1")!))))
    }

    @Test("a to-one that may dangle: compared with nil or with an ID, every entity; one that cannot: the entity only")
    func danglingToOne() throws {
        let model = try ModelLoader.load(path: TestPaths.model)
        // The same model with Person.computers' delete rule noAction: deleting a person then
        // leaves Computer.owner pointing at nothing, with no change of the computer recorded.
        let text = try String(contentsOfFile: TestPaths.model, encoding: .utf8)
        let rule = #""toMany": true, "deleteRule": "cascade", "maxCount": 5"#
        #expect(text.contains(rule))
        let dangling = try ModelLoader.load(text: text.replacingOccurrences(of: rule, with: #""toMany": true, "deleteRule": "noAction", "maxCount": 5"#))
        func follows(_ predicate: TypedPredicate<Computer>, _ model: Model) -> Bool {
            KeelFetchedResults<Computer>.AsyncIterator.followsKeyPaths(KeelFetchRequest(Computer.self, where: predicate), model: model)
        }
        let kim = KeelID<Person>("Employee/1")!
        #expect(!follows(Computer.owner == nil, model) && !follows(Computer.owner == kim, model))
        #expect(follows(Computer.owner == nil, dangling) && follows(Computer.owner == kim, dangling))
        #expect(follows(Computer.model == "X" || Computer.owner != kim, dangling))
        #expect(!follows(Computer.model == "X", dangling))
    }
}
