// HELLO, PING, QUIT and MODEL: the commands that touch no store. They are pure, so the event
// loop answers them itself when nothing of the connection is in flight (no thread hop: a PING
// round trip is one read and one write), and the session's thread answers them in order when
// something is.

import KeelModel
import KeelProtocol

enum ConnectionCommands {
    /// The commands answered here (QUIT also ends the connection): the table's connection group.
    static let names: Set<String> = Set(CommandTable.all.filter { $0.group == .connection }.map(\.name))

    /// The OK payload of one of `names`. Throws for an unsupported protocol.
    static func answer(_ request: Request, server: ServerContext, connection: Int) throws(KeelError) -> JSON? {
        switch request.command {
        case "PING", "QUIT":
            return nil
        case "MODEL":
            return server.model.canonical
        case "HELLO":
            if let version = request.arguments["protocol"]?.intValue,
                !CommandTable.protocolVersions.contains(Int(clamping: version))
            {
                let supported = CommandTable.protocolVersions.map(String.init).joined(separator: ", ")
                throw KeelError(
                    .badRequest, "protocol \(version) is not supported; this daemon speaks protocol \(supported)",
                    details: ["supported": .array(CommandTable.protocolVersions.map { .int(Int64($0)) })])
            }
            var logger = server.logger
            logger[metadataKey: "conn.id"] = "\(connection)"
            logger.debug("hello", metadata: ["client.name": "\(request.arguments["client"]?.stringValue ?? "-")"])
            return server.hello
        default:
            throw KeelError(.internal, "\(request.command) is not a connection command")
        }
    }
}
