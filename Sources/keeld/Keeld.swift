// keeld: the thin @main over KeelServer (spec/cli.md, "keeld"): flags over the configuration
// file, logging to standard error, the daemon in a service group that turns SIGTERM/SIGINT into
// a graceful shutdown. Prints exactly one line on standard output: `keeld ready socket=PATH
// pid=N`. A refusal to start is one line on standard error and exit code 1.

import ArgumentParser
import Foundation
import KeelProtocol
import KeelServer
import Logging
import ServiceLifecycle

@main
struct Keeld: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keeld",
        abstract: "Serves a Keel data folder to many processes over a Unix-domain socket.",
        discussion: """
            With no arguments it serves ./.keel/data with the model config/model.json on the socket \
            ./.keel/keeld.sock, reading config/keeld.json first when it exists. Flags override the \
            configuration file. SIGTERM or SIGINT stops it cleanly.
            """)

    @Option(name: .long, help: "The configuration file (default: config/keeld.json when it exists).")
    var config: String?

    @Option(name: .long, help: "The data folder (configuration key dataDirectory).")
    var data: String?

    @Option(name: .long, help: "The model file (configuration key modelPath).")
    var model: String?

    @Option(name: .long, help: "The socket path (configuration key socketPath).")
    var socket: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    func run() async throws {
        let settings: ServerConfiguration
        do {
            settings = try resolveConfiguration()
        } catch {
            refuse(error.message)
        }
        let level = settings.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "keeld")
        let daemon: KeelDaemon
        do {
            daemon = try await KeelDaemon.start(settings, logger: logger)
        } catch {
            refuse(error.message)
        }
        // The one line on standard output, once SIGTERM/SIGINT are handled by the service group,
        // written unbuffered so that a parent reading the pipe sees it at once.
        let ready = "keeld ready socket=\(daemon.socketPath) pid=\(ProcessInfo.processInfo.processIdentifier)\n"
        daemon.onRun { FileHandle.standardOutput.write(Data(ready.utf8)) }
        let group = ServiceGroup(services: [daemon], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        try await group.run()
    }

    private func resolveConfiguration() throws(StartupFailure) -> ServerConfiguration {
        var settings: ServerConfiguration
        do throws(ConfigurationError) {
            settings = try ServerConfiguration.resolve(file: config)
        } catch {
            throw StartupFailure(error.message)
        }
        if let data { settings.dataDirectory = data }
        if let model { settings.modelPath = model }
        if let socket { settings.socketPath = socket }
        if let logLevel {
            guard let level = Logger.Level(rawValue: logLevel) else {
                throw StartupFailure("--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            settings.logLevel = level
        }
        return settings
    }

    private func refuse(_ reason: String) -> Never {
        FileHandle.standardError.write(Data("keeld: \(reason)\n".utf8))
        Foundation.exit(1)
    }
}
