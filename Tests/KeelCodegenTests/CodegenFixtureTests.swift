// The generated code in the repository is exactly what the generator makes now, byte for byte:
// the sample model's entities (Sources/KeelSampleModel, from config/model.json — used by
// keel-example and the client tests) and the golden fixture (Tests/KeelCodegenFixture, from
// Models/golden.json: every attribute type with a default, inheritance three deep, keyword
// names). Both are compiled in the test build. `KEEL_UPDATE_CODEGEN=1` rewrites them.

import Foundation
import KeelCodegen
import KeelModel
import Testing

@Suite("Generated code in the repository")
struct CodegenFixtureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    @Test(
        "the checked-in code is what keelctl codegen makes now (KEEL_UPDATE_CODEGEN=1 rewrites it)",
        arguments: [
            ("config/model.json", "Sources/KeelSampleModel"),
            ("Tests/KeelCodegenTests/Models/golden.json", "Tests/KeelCodegenFixture"),
        ])
    func inStep(model: String, out: String) throws {
        let loaded = try ModelLoader.load(path: Self.root + "/" + model)
        let files = try SwiftGenerator(model: loaded, command: "keelctl codegen --model \(model) --out \(out)").files()
        let folder = Self.root + "/" + out
        if ProcessInfo.processInfo.environment["KEEL_UPDATE_CODEGEN"] == "1" {
            _ = try GeneratedFiles.write(files, to: folder)
            return
        }
        let present = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(present == files.map(\.name).sorted(), "\(out) has other files than the model's entities")
        for file in files {
            let current = try String(contentsOfFile: folder + "/" + file.name, encoding: .utf8)
            #expect(
                current == file.contents,
                "\(out)/\(file.name) is stale: run KEEL_UPDATE_CODEGEN=1 swift test --filter CodegenFixtureTests")
        }
    }

    @Test("the same model gives the same bytes every time")
    func deterministic() throws {
        let model = try ModelLoader.load(path: Self.root + "/config/model.json")
        let a = try SwiftGenerator(model: model, command: "keelctl codegen --model m --out o").files()
        let b = try SwiftGenerator(model: try ModelLoader.load(path: Self.root + "/config/model.json"), command: "keelctl codegen --model m --out o").files()
        #expect(a == b)
        #expect(a.map(\.name) == ["Person.swift", "Employee.swift", "Student.swift", "Computer.swift", "Company.swift", "Department.swift", "Book.swift", "Feedback.swift"])
        #expect(a.allSatisfy { $0.contents.hasPrefix(SwiftGenerator.marker + " --model m --out o`\n") })
    }

    @Test("names the generated Swift cannot carry are refused, every one, as INVALID_MODEL")
    func badNames() throws {
        let model = try ModelLoader.load(path: Self.root + "/Tests/KeelCodegenTests/Models/bad-names.json")
        let error = #expect(throws: KeelError.self) { _ = try SwiftGenerator(model: model, command: "keelctl codegen").files() }
        #expect(error?.code == .invalidModel)
        #expect(error?.details?["problems"] == [
            "entities[0].name: \"Date\" would hide the Swift type of that name in the generated code: rename the entity",
            "Box.addToItems: clashes with the generated accessor of items",
        ])
    }
}
