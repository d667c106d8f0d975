// `keelctl codegen --model FILE --out DIR` (spec/cli.md): typed Swift for the client library,
// one file per entity (KeelCodegen). An invalid model prints the model loader's problems, one per
// line, and exits 1; bad usage exits 2.

import ArgumentParser
import Foundation
import KeelCodegen
import KeelModel

struct CodegenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codegen",
        abstract: "Writes typed Swift for KeelClient, one file per entity of a model.",
        discussion: """
            Each file holds the entity's class (a subclass of its parent's, for inheritance), its \
            typed keys for predicates and sorts, its to-many accessors and its metadata. Files \
            already in DIR that an earlier run generated for entities the model no longer has are \
            removed; other files are left alone. See Docs/Client.md.
            """)

    @Option(name: .long, help: "The model file (spec/model.md).")
    var model: String

    @Option(name: .long, help: "The folder to write the Swift files into (created when missing).")
    var out: String

    func run() throws {
        let loaded: Model
        let files: [GeneratedFile]
        do throws(KeelError) {
            loaded = try ModelLoader.load(path: model)
            files = try SwiftGenerator(model: loaded, command: "keelctl codegen --model \(model) --out \(out)").files()
        } catch {
            fail(error)
        }
        let report: GeneratedFiles.Report
        do throws(KeelError) {
            report = try GeneratedFiles.write(files, to: out)
        } catch {
            fail(error)
        }
        for warning in loaded.warnings { FileHandle.standardError.write(Data("keelctl: warning: \(warning)\n".utf8)) }
        var summary = "\(files.count) files for model \(loaded.name) in \(out): \(report.written.count) written, \(report.unchanged.count) unchanged"
        if !report.removed.isEmpty { summary += ", \(report.removed.count) removed (\(report.removed.joined(separator: ", ")))" }
        print(summary)
    }

    /// The error on standard error — each of a model's problems on its own line — and exit 1.
    private func fail(_ error: KeelError) -> Never {
        var text = "keelctl: \(error.message)\n"
        if let problems = error.details?["problems"]?.arrayValue, !problems.isEmpty {
            text = "keelctl: \(error.code == .invalidModel ? "invalid model" : "cannot generate") \(model):\n"
            for problem in problems { text += "  \(problem.stringValue ?? problem.serialized())\n" }
        }
        FileHandle.standardError.write(Data(text.utf8))
        Foundation.exit(1)
    }
}
