// The command table drives dispatch: each command of `CommandTable.all` that runs on the
// session's thread has its handler here (a test checks that none is missing). Arguments arrive
// already checked against the table (kinds, required keys, no unknown keys).

import KeelModel
import KeelProtocol

extension Session {
    typealias Handler = @Sendable (Session, Request) throws(KeelError) -> Answer

    static let handlers: [String: Handler] = [
        "CONTEXT.OPEN": { s, r throws(KeelError) in .json(try s.openContext(r)) },
        "CONTEXT.CLOSE": { s, r throws(KeelError) in .json(try s.closeContext(r)) },
        "CHANGES": { s, r throws(KeelError) in .json(try s.changes(r)) },
        "SAVE": { s, r throws(KeelError) in try s.save(r) },
        "ROLLBACK": { s, r throws(KeelError) in .json(try s.rollback(r)) },
        "REFRESH": { s, r throws(KeelError) in .json(try s.refresh(r)) },
        "INSERT": { s, r throws(KeelError) in .insertedID(try s.insert(r)) },
        "UPDATE": { s, r throws(KeelError) in .json(try s.update(r)) },
        "DELETE": { s, r throws(KeelError) in .json(try s.delete(r)) },
        "RELATE": { s, r throws(KeelError) in .json(try s.relate(r)) },
        "GET": { s, r throws(KeelError) in .object(try s.get(r)) },
        "FETCH": { s, r throws(KeelError) in .json(try s.fetch(r)) },
        "COUNT": { s, r throws(KeelError) in .json(try s.count(r)) },
        "EXPLAIN": { s, r throws(KeelError) in .json(try s.explain(r)) },
        "BATCH.INSERT": { s, r throws(KeelError) in .json(try BatchCommands.insert(r.arguments, store: s.server.store)) },
        "BATCH.UPDATE": { s, r throws(KeelError) in .json(try BatchCommands.update(r.arguments, store: s.server.store)) },
        "BATCH.DELETE": { s, r throws(KeelError) in .json(try BatchCommands.delete(r.arguments, store: s.server.store)) },
        "SUBSCRIBE": { s, r throws(KeelError) in .json(try s.subscribe(r)) },
        "UNSUBSCRIBE": { s, r throws(KeelError) in .json(try s.unsubscribe(r)) },
        "HISTORY": { s, r throws(KeelError) in .json(try s.history(r)) },
        "HISTORY.PRUNE": { s, r throws(KeelError) in .json(try EventTerms.pruneHistory(r.arguments, in: s.server.store)) },
        "STATS": { s, r throws(KeelError) in .json(try s.stats(r)) },
        "CHECKPOINT": { s, r throws(KeelError) in .json(try s.checkpoint(r)) },
        "COMPACT": { s, r throws(KeelError) in .json(try s.compact(r)) },
        "VERIFY": { s, r throws(KeelError) in .json(try s.verify(r)) },
        "BACKUP": { s, r throws(KeelError) in .json(try s.backup(r)) },
    ]
}

/// What a request's OK line carries: JSON (nil: a bare OK), or an object written straight from
/// its values into the reply's bytes (GET: no `JSON` tree, no `String`; ManagedObject+Wire.swift).
enum Answer {
    case json(JSON?)
    case object(ManagedObject)
    /// INSERT's `{"$id":"Entity/N"}`, written straight into the reply's bytes (no `JSON` object
    /// built per insert).
    case insertedID(ObjectID)
    /// Its final line is already in the output (a SAVE answered by its save group's leader the
    /// moment it was durable: Session.save).
    case answered
}
