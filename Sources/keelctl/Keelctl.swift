// keelctl: the admin tool (spec/cli.md, "keelctl"; Docs/Operations.md). The root command only
// lists the subcommands, each in its own file under Commands/, and maps failures onto the exit
// codes of the spec: 0 success, 1 the operation failed (reason on standard error), 2 bad usage
// (every error of the argument parser, whose own code for those is 64).

import ArgumentParser
import Foundation
import KeelModel
import Logging

@main
struct Keelctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keelctl",
        abstract: "Administers Keel data folders: compaction, checkpoints, verification, statistics, backup and restore, import and export, models, queries; generates typed Swift from a model.",
        discussion: """
            Commands that read or change a store work offline on a data folder (--data DIR, \
            default: the dataDirectory of config/keeld.json, else ./.keel/data; refused while a keeld \
            holds the folder) or online through a running keeld (--socket PATH), with the admin \
            commands of the protocol. Long work shows progress on a terminal and stays quiet when \
            standard error is not one.

            Exit codes: 0 success, 1 the operation failed (the reason on standard error; for verify: \
            faults were found), 2 bad usage. Docs/Operations.md explains each command.
            """,
        subcommands: [
            Compact.self, Checkpoint.self, Verify.self, Salvage.self, Stats.self, Backup.self, Restore.self, Import.self, Export.self,
            ModelCommand.self, Query.self, History.self, Watch.self, Codegen.self,
        ])

    static func main() async {
        // The libraries log through swift-log: to standard error, warnings and worse only (results
        // go to standard output).
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let failure as Failure {
            Output.error("keelctl: \(failure.message)")
            Foundation.exit(1)
        } catch let error as KeelError {
            Output.error("keelctl: \(error.message)")
            Foundation.exit(1)
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { print(message) }
                Foundation.exit(0)
            }
            if !message.isEmpty { Output.error(message) }
            Foundation.exit(code == .validationFailure ? 2 : code.rawValue)
        }
    }
}
