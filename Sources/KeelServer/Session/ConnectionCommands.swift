// HELLO, PING, QUIT and MODEL: the commands that touch no store. They are pure, so the event
// loop answers them itself when nothing of the connection is in flight (no thread hop: a PING
// round trip is one read and one write), and the session's thread answers them in order when
// something is.

import KeelModel
import KeelProtocol

enum ConnectionCommands {
    /// The commands answered here (QUIT also ends the connection): the table's connection group.
    static let names: Set<String> = Set(CommandTable.all.filter { $0.group == .connection }.map(\.name))

    /// The OK payload of one of `names`. Throws for an unsupported protocol or a bad
    /// `coalesceMicros`. HELLO's `coalesceMicros` is kept on `link` (nil only before the
    /// connection is admitted, when no request is read).
    static func answer(_ request: Request, server: ServerContext, connection: Int, link: ConnectionLink?) throws(KeelError) -> JSON? {
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
            let coalesce = try coalesceMicros(request.arguments["coalesceMicros"])
            var logger = server.logger
            logger[metadataKey: "conn.id"] = "\(connection)"
            logger.debug("hello", metadata: ["client.name": "\(request.arguments["client"]?.stringValue ?? "-")"])
            // Each HELLO sets it: without the key, the default again.
            link?.coalesceNanoseconds = coalesce.map { UInt64($0) * 1000 } ?? ReplyCoalescing.unbounded
            guard let coalesce else { return server.hello }
            guard case .object(var members) = server.hello else { return server.hello }
            members["coalesceMicros"] = .int(coalesce)
            return .object(members)
        default:
            throw KeelError(.internal, "\(request.command) is not a connection command")
        }
    }

    /// HELLO's `coalesceMicros` (the command table has checked it is an integer, if present):
    /// 0 … one second.
    private static func coalesceMicros(_ value: JSON?) throws(KeelError) -> Int64? {
        guard let value, value != .null else { return nil }
        guard let micros = value.intValue, (0...ReplyCoalescing.maximumMicros).contains(micros) else {
            throw KeelError(
                .badRequest,
                "coalesceMicros must be a whole number of microseconds from 0 to \(ReplyCoalescing.maximumMicros), not \(value.serialized())",
                details: ["key": "coalesceMicros"])
        }
        return micros
    }
}
