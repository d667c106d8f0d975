// keelctl: Keel's admin tool (spec/cli.md, "keelctl"). The root command only lists the
// subcommands; each lives in its own file. Exit codes: 0 success, 1 the operation failed (reason
// on standard error), 2 bad usage (swift-argument-parser's validation errors).

import ArgumentParser

@main
struct Keelctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keelctl",
        abstract: "Administers Keel stores and generates typed Swift from a model.",
        subcommands: [
            CodegenCommand.self,
        ])
}
