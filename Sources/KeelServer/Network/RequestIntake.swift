// Requests out of a connection's bytes: framed one line at a time (LineFramer, bounded: a line
// longer than the limit is skipped to its LF and answered TOO_LARGE), parsed, checked against the
// command table, the daemon's state and the peer's rights. One code for both readers of a
// connection: the event loop (ConnectionHandler+Reading.swift, when the connection's thread cannot
// read its socket) and the session thread (Session+Input.swift).

import KeelModel
import KeelProtocol

struct RequestIntake {
    private var framer: LineFramer
    private let server: ServerContext

    init(server: ServerContext) {
        self.server = server
        self.framer = LineFramer(maximumLength: server.limits.maxRequestBytes)
    }

    /// Frames `raw` one line at a time while `proceed()` holds (asked before each line); each
    /// line, checked, goes to `take` in order: a request to run, or its answer when it cannot
    /// run. Returns how many bytes were taken (the rest waits for `proceed`).
    mutating func frame(
        _ raw: UnsafeRawBufferPointer, link: ConnectionLink?, while proceed: () -> Bool, _ take: (SessionItem) -> Void
    ) -> Int {
        let limit = framer.maximumLength
        let server = self.server
        var offset = 0
        while offset < raw.count, proceed() {
            let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
            let end = LineFramer.firstNewline(in: rest).map { $0 + 1 } ?? rest.count
            // At most one LF: at most one frame.
            framer.feed(UnsafeRawBufferPointer(rebasing: rest[..<end])) { frame in
                switch frame {
                case .line(let line):
                    take(Self.item(for: line, server: server, link: link))
                case .tooLong(let prefix):
                    let tag = Request.leadingTag(of: prefix) ?? "*"
                    take(.reply(.error(tag: tag, KeelError(
                        .tooLarge, "the request line is longer than the limit of \(limit) bytes (maxRequestBytes)"))))
                }
            }
            offset += end
        }
        return offset
    }

    /// One request line: parsed and checked; answered here when it cannot run.
    private static func item(for line: [UInt8], server: ServerContext, link: ConnectionLink?) -> SessionItem {
        let request: Request
        do {
            request = try Request.parse(line)
        } catch {
            return .reply(error.reply)
        }
        let spec: CommandSpec
        do {
            spec = try CommandTable.resolve(request)
        } catch {
            return .reply(.error(tag: request.tag, error))
        }
        if server.isShuttingDown {
            return .reply(.error(tag: request.tag, KeelError(.busy, "shutting down")))
        }
        if spec.isAdmin, let link, !link.isAdmin {
            return .reply(.error(tag: request.tag, KeelError(
                .permission, "\(spec.name) is an admin command; uid \(link.peer.uid) is not an admin of this daemon")))
        }
        return .request(request, spec)
    }
}
