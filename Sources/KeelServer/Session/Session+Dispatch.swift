// The command table drives dispatch: each command of `CommandTable.all` that runs on the
// session's thread has its handler here (a test checks that none is missing). Arguments arrive
// already checked against the table (kinds, required keys, no unknown keys).

import KeelModel
import KeelProtocol

extension Session {
    typealias Handler = @Sendable (Session, Request) throws(KeelError) -> JSON?

    static let handlers: [String: Handler] = [:]
}
