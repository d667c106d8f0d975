// Where a command works (spec/cli.md): offline on a data folder (`--data`, held with keeld's
// own lock for the command's length, so neither a keeld nor another keelctl opens it meanwhile)
// or online through a running keeld (`--socket`). Defaults come from keeld's configuration
// file, read the way keeld reads it (`--config`, else config/keeld.json when it exists).

import ArgumentParser
import KeelModel
import KeelProtocol

struct Location: ParsableArguments {
    @Option(help: ArgumentHelp(
        "keeld's configuration file; keelctl takes the data folder, model, socket and store settings from it (default: config/keeld.json when it exists).",
        valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp(
        "Work offline on this data folder (default: the configuration's dataDirectory, .keel/data). Refused while a keeld holds it.",
        valueName: "dir"))
    var data: String?

    @Option(help: ArgumentHelp("Work online through the keeld listening on this socket.", valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp(
        "Offline: the model to open the data folder with (default: the configuration's modelPath, config/model.json, when that file exists; else the model the folder was created with).",
        valueName: "file"))
    var model: String?

    func validate() throws {
        if data != nil && socket != nil {
            throw ValidationError("--data and --socket exclude each other: work offline on a data folder or online through keeld")
        }
        if socket != nil && model != nil {
            throw ValidationError("--model is for offline work; online, keeld's model is used")
        }
    }

    var isOnline: Bool { socket != nil }

    /// The configuration keeld would read.
    func settings() throws(Failure) -> ServerConfiguration {
        do throws(ConfigurationError) {
            return try ServerConfiguration.resolve(file: config)
        } catch {
            throw Failure(error.message)
        }
    }

    /// The data folder offline commands use.
    func dataDirectory() throws(Failure) -> String {
        if let data { return data }
        return try settings().dataDirectory
    }
}
