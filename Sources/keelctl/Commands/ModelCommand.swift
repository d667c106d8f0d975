// keelctl model check FILE / model diff OLD NEW: a model file validated; two models compared,
// saying whether the change is a lightweight migration (KeelModel/Schema/Model+Migration.swift).

import ArgumentParser
import KeelModel

struct ModelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Validates a model file, or says whether a model change is a lightweight migration.",
        subcommands: [Check.self, Diff.self])

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Checks a model file against every rule of spec/model.md; lists every problem by JSON path.")

        @Argument(help: ArgumentHelp("The model file.", valueName: "file"))
        var file: String

        func run() async throws {
            let model = try ModelCommand.load(file)
            let configurations = model.configurations.keys.joined(separator: ", ")
            print("\(file): valid — model \(model.name) version \(model.version), \(model.entities.count) entities, configurations \(configurations)")
            print("hash: \(model.hash)")
        }
    }

    struct Diff: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lists how NEW differs from OLD and says whether the change is a lightweight migration.",
            discussion: """
                Lightweight (spec/model.md): entities, attributes and relationships added or removed, \
                renames declared with renamingIdentifier, an optional attribute made non-optional with \
                a defaultValue, indexes and unique constraints added or removed — and, in Keel, changes \
                that store nothing (name, version, validation rules, delete rules, fetched \
                properties, userInfo). Each line says "lightweight" or "not lightweight". Exit 0 when \
                the models mean the same or the change is lightweight, 1 when it is not. This build \
                opens a data folder only with the model it was created with (keeld refuses any other, \
                naming the differences): a lightweight change still needs the data exported and \
                imported into a new folder.
                """)

        @Argument(help: ArgumentHelp("The model the store was made with.", valueName: "old"))
        var old: String

        @Argument(help: ArgumentHelp("The new model.", valueName: "new"))
        var new: String

        func run() async throws {
            let migration = try ModelCommand.load(new).migration(from: try ModelCommand.load(old))
            if migration.isEmpty {
                print("the models mean the same (same hash): nothing to migrate")
                return
            }
            for change in migration.changes {
                print("\(change.isLightweight ? "lightweight" : "not lightweight"): \(change.description)")
            }
            guard migration.isLightweight else {
                let heavy = migration.changes.filter { !$0.isLightweight }.count
                print("lightweight migration: no")
                throw Failure("\(new) is not a lightweight migration of \(old) (\(heavy) change\(heavy == 1 ? "" : "s") would rewrite stored data)")
            }
            print("lightweight migration: yes")
        }
    }

    static func load(_ file: String) throws(Failure) -> Model {
        do throws(KeelError) {
            return try ModelLoader.load(path: file)
        } catch {
            // Several problems: each on a line of its own (the message has room for the first few;
            // details carry the first ProblemReport.detailLimit and the total).
            guard error.code == .invalidModel, let problems = error.details?["problems"]?.arrayValue, problems.count > 1 else {
                throw Failure(error.message)  // it names the file
            }
            let total = Int(error.details?["problemCount"]?.intValue ?? Int64(problems.count))
            var lines = problems.map { "  \($0.stringValue ?? $0.serialized())" }
            if total > problems.count { lines.append("  … and \(total - problems.count) more") }
            throw Failure("\(file): the model has \(total) problems:\n" + lines.joined(separator: "\n"))
        }
    }
}
