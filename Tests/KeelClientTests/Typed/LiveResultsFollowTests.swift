// Which saves live results refetch for: only the fetched entity's when the predicate, the sorts
// and the section key read nothing but the fetched objects; every entity's otherwise — decided
// from the predicate's syntax tree, so a dotted literal does not make it follow everything.

import KeelSampleModel
import Testing

@testable import KeelClient

@Suite("Live results: what they follow")
struct LiveResultsFollowTests {
    @Test("own properties follow the entity only; a key path in the predicate, a sort or the section key follows every entity")
    func follows() {
        func follows(_ request: KeelFetchRequest<Employee>, _ section: (any GroupableKey<Employee>)? = nil) -> Bool {
            KeelFetchedResults<Employee>.AsyncIterator.followsKeyPaths(request, section)
        }
        #expect(!follows(KeelFetchRequest(Employee.self)))
        #expect(!follows(KeelFetchRequest(Employee.self, where: Employee.age > 30 && Employee.name.beginsWith("K"))))
        #expect(!follows(KeelFetchRequest(Employee.self, where: TypedPredicate("name == 'a.b' OR salary > 3.5"))))
        // A to-one compared with nil also holds once its target is deleted (noAction records no
        // change of the referrer): every entity; an attribute compared with nil: the entity only.
        #expect(follows(KeelFetchRequest(Employee.self, where: Employee.department == nil)))
        #expect(!follows(KeelFetchRequest(Employee.self, where: Employee.address == nil)))
        #expect(!follows(KeelFetchRequest(Employee.self, where: Employee.department == KeelID<Department>("Department/1")!)))
        #expect(follows(KeelFetchRequest(Employee.self, where: Employee.department.name == "Sales")))
        #expect(follows(KeelFetchRequest(Employee.self, sortedBy: [.ascending(\.department.name)])))
        #expect(follows(KeelFetchRequest(Employee.self, sortedBy: [.ascending(\.name)]), Employee.department.name))
        #expect(!follows(KeelFetchRequest(Employee.self, sortedBy: [.ascending(\.name)]), Employee.name))
        #expect(follows(KeelFetchRequest(Employee.self, where: TypedPredicate("name =="))), "a predicate that does not parse follows everything")
    }
}
