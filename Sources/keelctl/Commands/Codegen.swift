// keelctl codegen --model FILE --out DIR (spec/cli.md): typed Swift for the client library, one
// file per entity (KeelCodegen; Docs/Client.md, "Generating code"). An invalid model fails with
// the model loader's problems, one per line (exit 1); bad usage exits 2 (Keelctl.swift).

import ArgumentParser
import Foundation
import KeelCodegen
import KeelModel

struct Codegen: ParsableCommand {
    static let configuration = CommandConfiguration(
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
        let report: GeneratedFiles.Report
        do throws(KeelError) {
            loaded = try ModelLoader.load(path: model)
            files = try SwiftGenerator(model: loaded, command: "keelctl codegen --model \(model) --out \(out)").files()
            report = try GeneratedFiles.write(files, to: out)
        } catch {
            throw failure(error)
        }
        for warning in loaded.warnings { Output.error("keelctl: warning: \(warning)") }
        var summary = "\(files.count) files for model \(loaded.name) in \(out): \(report.written.count) written, \(report.unchanged.count) unchanged"
        if !report.removed.isEmpty { summary += ", \(report.removed.count) removed (\(report.removed.joined(separator: ", ")))" }
        print(summary)
    }

    /// The error as keelctl's failure; a model's problems each on a line of their own.
    private func failure(_ error: KeelError) -> Failure {
        guard let problems = error.details?["problems"]?.arrayValue, !problems.isEmpty else { return Failure(error) }
        let what = error.code == .invalidModel ? "invalid model" : "cannot generate"
        var lines = problems.map { "  \($0.stringValue ?? $0.serialized())" }
        // Details carry the first ProblemReport.detailLimit problems and the total.
        if let total = error.details?["problemCount"]?.intValue, total > problems.count {
            lines.append("  … and \(total - Int64(problems.count)) more")
        }
        return Failure("\(what) \(model):\n" + lines.joined(separator: "\n"))
    }
}
