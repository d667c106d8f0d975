// Helpers for the model tests: the sample model's path, and loading a model text expecting
// problems.

import Testing

@testable import KeelModel

enum ModelFixture {
    /// `config/model.json` at the repository root, found from this file's path (no resources).
    static var samplePath: String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        // …/Tests/KeelModelTests/Model/ModelTestSupport.swift → …/config/model.json
        parts.removeLast(4)
        return (parts + ["config", "model.json"]).joined(separator: "/")
    }

    static func sample() throws -> Model {
        try ModelLoader.load(path: samplePath)
    }

    /// The problems a model text is refused with (empty when it loads).
    static func problems(_ text: String) -> [String] {
        do {
            _ = try ModelLoader.load(text: text)
            return []
        } catch {
            guard error.code == .invalidModel else { return ["\(error.code): \(error.message)"] }
            return error.details?["problems"]?.arrayValue?.compactMap(\.stringValue) ?? []
        }
    }

    /// A small valid model with one hierarchy and a one-to-many pair; tests splice into it.
    static func model(entities: String, configurations: String? = nil) -> String {
        var text = #"{"name":"T","entities":["# + entities + "]"
        if let configurations { text += #","configurations":"# + configurations }
        return text + "}"
    }
}
