// The connection's contexts (spec/protocol.md, "Contexts"): `main` always, more with
// CONTEXT.OPEN (a child saves into its parent), each ended by CONTEXT.CLOSE or with the
// connection; and the commands on a whole context — CHANGES, SAVE, ROLLBACK, REFRESH — mapped
// one to one to ObjectContext.

import KeelModel
import KeelProtocol

extension Session {
    static let mainContext = "main"

    /// The context a request names (`"context"`, default `main`), or NO_SUCH_CONTEXT.
    func context(for request: Request) throws(KeelError) -> ObjectContext {
        let name = request.arguments["context"]?.stringValue ?? Self.mainContext
        guard let context = contexts[name] else {
            throw KeelError(.noSuchContext, "no context \"\(name)\" on this connection (open: \(openContextNames))")
        }
        return context
    }

    private var openContextNames: String { contexts.keys.joined(separator: ", ") }

    func openContext(_ request: Request) throws(KeelError) -> JSON? {
        let name = request.arguments["name"]?.stringValue ?? ""
        try ContextTerms.checkContextName(name)
        guard contexts[name] == nil else {
            throw KeelError(.badRequest, "a context named \"\(name)\" is already open on this connection")
        }
        let policy = try ContextTerms.mergePolicy(request.arguments["mergePolicy"]?.stringValue)
        var parent: ObjectContext?
        if let parentName = request.arguments["parent"]?.stringValue {
            guard let found = contexts[parentName] else {
                throw KeelError(.noSuchContext, "no context \"\(parentName)\" on this connection (open: \(openContextNames))")
            }
            parent = found
        }
        let limit = server.limits.contextsPerConnection
        guard contexts.count < limit else {
            throw KeelError(
                .limit, "this connection has \(contexts.count) contexts open, the limit (contextsPerConnection)",
                details: ["limit": .int(Int64(limit))])
        }
        let context: ObjectContext
        if let parent {
            context = ObjectContext(parent: parent, mergePolicy: policy)
        } else {
            context = ObjectContext(store: server.store, mergePolicy: policy)
        }
        context.pendingObjectLimit = server.limits.pendingObjectsPerContext
        contexts[name] = context
        return ["context": .string(name)]
    }

    func closeContext(_ request: Request) throws(KeelError) -> JSON? {
        let name = request.arguments["context"]?.stringValue ?? ""
        guard name != Self.mainContext else {
            throw KeelError(.badRequest, "the main context cannot be closed; it ends with the connection")
        }
        guard let context = contexts[name] else {
            throw KeelError(.noSuchContext, "no context \"\(name)\" on this connection (open: \(openContextNames))")
        }
        let children = contexts.filter { $0.value.parentContext === context }.map(\.key)
        guard children.isEmpty else {
            throw KeelError(.badRequest, "context \"\(name)\" has child contexts open (\(children.joined(separator: ", "))): close them first")
        }
        contexts[name] = nil
        return nil
    }

    func changes(_ request: Request) throws(KeelError) -> JSON? {
        try context(for: request).changes().json(in: server.model)
    }

    /// The reply is written the moment the save is durable, from inside the save: a save that
    /// ran in another saver's group is answered by that group's leader, which leaves this thread
    /// asleep when nothing else waits for it — it wakes for the client's next request, finishes
    /// the save and runs that request (one sleep per save, not two).
    func save(_ request: Request) throws(KeelError) -> Answer {
        let context = try context(for: request)
        var answered = false
        let result = try context.save(wakeUp: link.worker.wakeUp) { (result: SaveResult) -> Bool in
            answered = true
            return answerDurableSave(tag: request.tag, result)
        }
        return answered ? .answered : .json(ContextTerms.saveReply(result))
    }

    func rollback(_ request: Request) throws(KeelError) -> JSON? {
        try context(for: request).rollback()
        return nil
    }

    func refresh(_ request: Request) throws(KeelError) -> JSON? {
        try context(for: request).refresh()
        return nil
    }
}
