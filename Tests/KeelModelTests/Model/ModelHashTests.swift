import Foundation
import Testing

@testable import KeelModel

@Suite("Model hash and differences")
struct ModelHashTests {
    private static let base = #"{"name":"T","version":1,"entities":[{"name":"A","attributes":[{"name":"n","type":"int16","defaultValue":3},{"name":"s","type":"string","indexed":true},{"name":"d","type":"decimal","defaultValue":"10.50"}]}]}"#

    private func hash(_ text: String) throws -> String { try ModelLoader.load(text: text).hash }

    @Test(
        "the hash ignores key order, whitespace, explicit defaults and value spelling",
        arguments: [
            // Key order and whitespace.
            #"{ "entities": [ { "attributes": [ {"type":"int16","name":"n","defaultValue":3}, {"indexed":true,"name":"s","type":"string"}, {"name":"d","defaultValue":"10.50","type":"decimal"} ], "name": "A" } ], "version": 1, "name": "T" }"#,
            // Defaults written out.
            #"{"name":"T","version":1,"entities":[{"name":"A","abstract":false,"parent":null,"attributes":[{"name":"n","type":"int16","defaultValue":3,"optional":true,"transient":false,"indexed":false},{"name":"s","type":"string","indexed":true,"regex":null},{"name":"d","type":"decimal","defaultValue":"10.50"}],"relationships":[],"fetchedProperties":[],"uniqueConstraints":[],"indexes":[]}],"configurations":{"Default":["A"]}}"#,
            // Version left out (default 1); a decimal spelt differently; an index written as a list.
            #"{"name":"T","entities":[{"name":"A","attributes":[{"name":"n","type":"int16","defaultValue":3.0},{"name":"s","type":"string"},{"name":"d","type":"decimal","defaultValue":"10.5"}],"indexes":[["s"]]}]}"#,
        ])
    func invariance(_ text: String) throws {
        #expect(try hash(text) == hash(Self.base))
    }

    @Test(
        "the hash changes with any change of meaning",
        arguments: [
            ("attribute name", #""name":"n""#, #""name":"m""#),
            ("type", #""type":"int16""#, #""type":"int32""#),
            ("default", #""defaultValue":3"#, #""defaultValue":4"#),
            ("indexed", #","indexed":true"#, ""),
            ("decimal default", #""10.50""#, #""10.51""#),
            ("model name", #"{"name":"T""#, #"{"name":"U""#),
            ("version", #""version":1"#, #""version":2"#),
            ("optional", #""type":"int16""#, #""type":"int16","optional":false"#),
            ("attribute order", #"{"name":"n","type":"int16","defaultValue":3},{"name":"s","type":"string","indexed":true}"#, #"{"name":"s","type":"string","indexed":true},{"name":"n","type":"int16","defaultValue":3}"#),
        ])
    func sensitivity(_ what: String, _ from: String, _ to: String) throws {
        let changed = Self.base.replacingOccurrences(of: from, with: to)
        #expect(changed != Self.base, "\(what): the replacement did not apply")
        #expect(try hash(changed) != hash(Self.base), "\(what)")
    }

    @Test("the canonical form writes every default and loads back unchanged")
    func canonical() throws {
        let model = try ModelLoader.load(text: Self.base)
        let attribute = model.canonical["entities"]?.arrayValue?.first?["attributes"]?.arrayValue?.first
        #expect(attribute?.objectValue.map { Array($0.keys) } == ["name", "type", "optional", "defaultValue", "transient", "indexed", "minValue", "maxValue", "regex", "renamingIdentifier"])
        #expect(model.canonical["configurations"] == ["Default": ["A"]])
        let again = try ModelLoader.load(text: model.canonical.serialized())
        #expect(again.canonical == model.canonical)
    }

    @Test("SHA-256 of the canonical text is the hash")
    func hashIsSHA256() throws {
        let model = try ModelLoader.load(text: Self.base)
        #expect(model.hash == SHA256.hex(of: model.canonical.serialized().utf8))
    }

    @Test("differences name what changed, there against here")
    func differences() throws {
        let stored = try ModelFixture.sample()
        let text = try String(contentsOfFile: ModelFixture.samplePath, encoding: .utf8)
        let changed = text.replacingOccurrences(of: #""name": "salary",    "type": "decimal""#, with: #""name": "salary",    "type": "double""#)
            .replacingOccurrences(of: #""minValue": "0""#, with: #""minValue": 0"#)
            .replacingOccurrences(of: #"{ "name": "code", "type": "int16" }"#, with: #"{ "name": "code", "type": "int16" }, { "name": "floor", "type": "int16" }"#)
        let current = try ModelLoader.load(text: changed)
        let sentences = current.differences(from: stored)
        #expect(sentences.first == "Employee.salary is decimal there, double here")
        #expect(sentences.contains("Department.floor is an attribute here, not there"))
        #expect(current.differences(from: current) == [])
        #expect(stored.differences(from: try ModelFixture.sample()) == [])
    }

    @Test("differences report removed entities, renumbered entities and configuration moves")
    func entityDifferences() throws {
        let there = try ModelLoader.load(text: ModelFixture.model(entities: #"{"name":"A"},{"name":"B"},{"name":"C"}"#, configurations: #"{"One":["A","B"],"Two":["C"]}"#))
        let here = try ModelLoader.load(text: ModelFixture.model(entities: #"{"name":"A"},{"name":"C"}"#, configurations: #"{"One":["A","C"]}"#))
        #expect(here.differences(from: there) == [
            "B is an entity there, not here",
            "C is entity #2 there, #1 here (entity numbers are part of every stored key)",
            "C is in configuration Two there, One here",
            "the configurations are One, Two there, One here",
        ])
    }
}
