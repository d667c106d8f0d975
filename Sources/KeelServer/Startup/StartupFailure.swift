// Why keeld refuses to start (spec/cli.md: "a one-line reason and exit code 1"): the data folder
// held by another daemon, an invalid model, a store that cannot take this model, a socket in
// use, a bad configuration. `message` is that one line.

public struct StartupFailure: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        // One line, whatever the cause said.
        self.message = message.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    public var description: String { message }
}
