import Testing

@testable import KeelModel

@Suite("The sample model (config/model.json)")
struct SampleModelTests {
    @Test("loads without problems or warnings")
    func loads() throws {
        let model = try ModelFixture.sample()
        #expect(model.name == "Company")
        #expect(model.warnings == [])
        #expect(model.entities.map(\.name) == ["Person", "Employee", "Student", "Computer", "Company", "Department", "Book", "Feedback"])
    }
}
