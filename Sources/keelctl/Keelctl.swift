// keelctl: Keel's admin tool (spec/cli.md, "keelctl"). The root command only lists the
// subcommands; each lives in its own file. Exit codes: 0 success, 1 the operation failed (reason
// on standard error), 2 bad usage — swift-argument-parser's usage errors (its own code is 64,
// EX_USAGE) are reported as it reports them and exit 2.

import ArgumentParser
import Foundation

@main
struct Keelctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keelctl",
        abstract: "Administers Keel stores and generates typed Swift from a model.",
        subcommands: [
            CodegenCommand.self,
        ])

    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            guard code == .validationFailure else { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }
}
