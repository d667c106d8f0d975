// Every command of protocol version 1 (spec/protocol.md, "Commands"), in one table. Dispatch in
// the daemon, requests in the client and the reference in Docs/Protocol.md all come from here.

public import KeelModel

public enum CommandTable {
    /// The protocol versions this build speaks.
    public static let protocolVersions: [Int] = [1]

    private static let fetchArguments: [ArgumentSpec] = [
        ArgumentSpec("entity", .string, required: true, "the entity to fetch"),
        ArgumentSpec("predicate", .string, "an NSPredicate-format filter (Docs/Predicates.md)"),
        ArgumentSpec("args", .array, "values for `%@` in the predicate, in order"),
        ArgumentSpec("vars", .object, "values for `$NAME` variables in the predicate"),
        ArgumentSpec("sort", .array, "sort descriptors: `{\"key\":…,\"ascending\":true,\"caseInsensitive\":false}`"),
        ArgumentSpec("limit", .integer, "at most this many results"),
        ArgumentSpec("offset", .integer, "skip this many results first"),
        ArgumentSpec("includeSubentities", .boolean, "include objects of sub-entities (default true)"),
        ArgumentSpec("result", .string, "`objects` (default), `ids`, `count` or `dictionaries`"),
        ArgumentSpec("properties", .array, "the properties of `dictionaries` results (key paths through to-ones too: `department.name`; `$id` for each object's ID), and aggregates `{\"name\":…,\"function\":…,\"key\":…}` (count, sum, avg, min, max); for `objects`, the properties their JSON shows"),
        ArgumentSpec("groupBy", .strings, "with `dictionaries`, one row per group of these keys' values (key paths through to-ones too); `properties` hold these keys and aggregates"),
        ArgumentSpec("having", .string, "with `groupBy` or aggregates, a predicate each group's row must satisfy, over the rows' names (`payroll > %@`: Core Data's `havingPredicate`)"),
        ArgumentSpec("havingArgs", .array, "values for `%@` in `having`, in order (`$NAME` in it takes `vars`)"),
        ArgumentSpec("distinct", .boolean, "with `dictionaries`, each distinct row once (`offset` and `limit` count distinct rows)"),
        ArgumentSpec("include", .strings, "relationships (or fetched properties) to embed as objects"),
        ArgumentSpec("context", .string, "the context (default `main`)"),
    ]

    public static let all: [CommandSpec] = [
        // Connection
        CommandSpec(
            "HELLO", group: .connection,
            arguments: [
                ArgumentSpec("protocol", .integer, "the protocol version the client speaks (1)"),
                ArgumentSpec("client", .string, "the client's name, for the daemon's log"),
                ArgumentSpec(
                    "coalesceMicros", .integer,
                    "0–1000000: a finished reply waits at most this long for the rest of its burst before it is written (default: until the burst is done; see \"Order, pipelining and flushing\")"),
            ],
            reply: #"`OK {"server":"keeld","version":…,"protocol":1,"model":…,"modelHash":…,"limits":{…},"coalesceMicros":n?}`; an unsupported protocol is `BAD_REQUEST` naming the supported ones, a `coalesceMicros` out of range `BAD_REQUEST`"#,
            "Introduces the client; the reply tells the server, the model and the limits."),
        CommandSpec("PING", group: .connection, reply: "`OK`", "Checks the connection."),
        CommandSpec("QUIT", group: .connection, reply: "`OK`, then the daemon closes the connection", "Ends the connection."),
        CommandSpec("MODEL", group: .connection, reply: "`OK {the model, as model.md}`", "Returns the model the daemon serves."),
        // Contexts
        CommandSpec(
            "CONTEXT.OPEN", group: .contexts,
            arguments: [
                ArgumentSpec("name", .string, required: true, "the new context's name"),
                ArgumentSpec("parent", .string, "a context to save into instead of the store"),
                ArgumentSpec("mergePolicy", .string, "`error` (default), `storeTrumps`, `objectTrumps`, `overwrite` or `rollback`"),
            ],
            reply: #"`OK {"context":"bg"}`"#, "Opens another context on this connection."),
        CommandSpec(
            "CONTEXT.CLOSE", group: .contexts,
            arguments: [ArgumentSpec("context", .string, required: true, "the context to close (not `main`)")],
            reply: "`OK`", "Closes a context, dropping its pending changes."),
        CommandSpec(
            "CHANGES", group: .contexts, context: true,
            reply: #"`OK {"hasChanges":b,"inserted":[ids],"updated":[ids],"deleted":[ids]}`"#,
            "The context's pending changes."),
        CommandSpec(
            "SAVE", group: .contexts, context: true,
            reply: #"`OK {"inserted":n,"updated":n,"deleted":n,"txn":T}`"#,
            "Writes the context's changes atomically (or into its parent context)."),
        CommandSpec("ROLLBACK", group: .contexts, context: true, reply: "`OK`", "Drops the context's pending changes."),
        CommandSpec("REFRESH", group: .contexts, context: true, reply: "`OK`", "Takes a new snapshot; pending changes are kept."),
        // Objects
        CommandSpec(
            "INSERT", group: .objects, context: true,
            arguments: [
                ArgumentSpec("entity", .string, required: true, "a concrete entity"),
                ArgumentSpec("values", .object, "attribute values and relationship IDs"),
                ArgumentSpec("context", .string, "the context (default `main`)"),
            ],
            reply: #"`OK {"$id":"Employee/18"}`"#, "Inserts an object into the context; its ID is permanent."),
        CommandSpec(
            "UPDATE", group: .objects, context: true,
            arguments: [
                ArgumentSpec("$id", .string, required: true, "the object"),
                ArgumentSpec("values", .object, required: true, "the values to set"),
                ArgumentSpec("context", .string, "the context (default `main`)"),
            ],
            reply: "`OK`", "Changes values of an object in the context."),
        CommandSpec(
            "DELETE", group: .objects, context: true,
            arguments: [
                ArgumentSpec("$id", .string, required: true, "the object"),
                ArgumentSpec("context", .string, "the context (default `main`)"),
            ],
            reply: #"`OK {"deleted":["Employee/18",…]}` (with cascades)"#,
            "Deletes an object in the context, applying delete rules at once (`deny` is checked at save)."),
        CommandSpec(
            "RELATE", group: .objects, context: true,
            arguments: [
                ArgumentSpec("$id", .string, required: true, "the source object"),
                ArgumentSpec("relationship", .string, required: true, "a relationship of its entity"),
                ArgumentSpec("add", .strings, "IDs to add, each of an object that exists (or, for a to-one, the one to set)"),
                ArgumentSpec("remove", .strings, "IDs to remove; one that is not a member (existing or not) is left alone, as Core Data's `removeFrom…`"),
                ArgumentSpec("context", .string, "the context (default `main`)"),
            ],
            reply: "`OK`", "Adds and removes related objects; inverses follow."),
        CommandSpec(
            "GET", group: .objects, context: true,
            arguments: [
                ArgumentSpec("$id", .string, required: true, "the object"),
                ArgumentSpec("include", .strings, "relationships (or fetched properties) to embed as objects"),
                ArgumentSpec("context", .string, "the context (default `main`)"),
            ],
            reply: "`OK {object}`", "Reads one object as the context sees it."),
        // Fetching
        CommandSpec(
            "FETCH", group: .fetching, context: true, arguments: fetchArguments,
            reply: #"`ROW {object}`… then `OK {"count":N}`"#, "Fetches objects, streamed as rows."),
        CommandSpec(
            "COUNT", group: .fetching, context: true, arguments: fetchArguments,
            reply: #"`OK {"count":N}`"#, "Counts what a FETCH would return."),
        CommandSpec(
            "EXPLAIN", group: .fetching, context: true, arguments: fetchArguments,
            reply: #"`OK {"plan":"…","access":"index","indexes":["Person.name"],"estimatedRows":n}`"#,
            "Says how a FETCH would run: which index, which filter."),
        // Batch
        CommandSpec(
            "BATCH.INSERT", group: .batch,
            arguments: [
                ArgumentSpec("entity", .string, required: true, "a concrete entity"),
                ArgumentSpec("objects", .array, required: true, "the objects' values"),
            ],
            reply: #"`OK {"inserted":n,"first":"Employee/…","txn":T}`"#,
            "Inserts many objects in one transaction, validated, inverses kept; they are numbered consecutively from `first`, in the order of `objects`."),
        CommandSpec(
            "BATCH.UPDATE", group: .batch,
            arguments: [
                ArgumentSpec("entity", .string, required: true, "the entity"),
                ArgumentSpec("predicate", .string, "which objects (default all)"),
                ArgumentSpec("args", .array, "values for `%@`"),
                ArgumentSpec("vars", .object, "values for `$NAME`"),
                ArgumentSpec("values", .object, required: true, "the values to set"),
            ],
            reply: #"`OK {"updated":n,"txn":T}`"#,
            "Updates every matching object in one transaction; `updated` counts the objects the predicate matched (not those whose inverse relationships changed with them: they are in the save's `HISTORY` and events). When nothing matches nothing is written: `txn` is `null` (no transaction, no `HISTORY` record, no event)."),
        CommandSpec(
            "BATCH.DELETE", group: .batch,
            arguments: [
                ArgumentSpec("entity", .string, required: true, "the entity"),
                ArgumentSpec("predicate", .string, "which objects (default all)"),
                ArgumentSpec("args", .array, "values for `%@`"),
                ArgumentSpec("vars", .object, "values for `$NAME`"),
            ],
            reply: #"`OK {"deleted":n,"txn":T}`"#, "Deletes every matching object in one transaction, delete rules applied. When nothing matches nothing is written: `txn` is `null`."),
        // Changes and history
        CommandSpec(
            "SUBSCRIBE", group: .notifications,
            arguments: [ArgumentSpec("entities", .strings, "only commits touching these entities (default all)")],
            reply: #"`OK`, then `* EVENT {"txn":T,"inserted":[ids],"updated":[ids],"deleted":[ids]}` after every commit"#,
            "Pushes an event after every commit."),
        CommandSpec("UNSUBSCRIBE", group: .notifications, reply: "`OK`", "Stops the events."),
        CommandSpec(
            "HISTORY", group: .notifications,
            arguments: [
                ArgumentSpec("after", .integer, required: true, "the last transaction already seen"),
                ArgumentSpec("limit", .integer, "at most this many"),
            ],
            reply: #"`ROW {"txn":T,"time":"…","inserted":[…],"updated":[…],"deleted":[…]}`… then `OK`"#,
            "The transactions committed after one, oldest first. When records after `after` were pruned (keeld's `historyRetention`, or HISTORY.PRUNE), the answer would have a gap: `ERR EXPIRED` instead, `details` `{\"after\":A,\"prunedThrough\":P,\"last\":L}` — read the objects again, then follow the history after `L`."),
        CommandSpec(
            "HISTORY.PRUNE", group: .notifications, admin: true,
            arguments: [ArgumentSpec("through", .integer, required: true, "the last transaction whose record goes (a number past the last transaction means the last)")],
            reply: #"`OK {"deleted":n,"prunedThrough":T}`"#,
            "Deletes the history records of the transactions through one, in every store (Core Data's `deleteHistory(before:)`): what every reader of the history has seen. HISTORY after an earlier transaction is `ERR EXPIRED` from then on; `prunedThrough` is `through`, or the last transaction when `through` is past it."),
        // Administration
        CommandSpec(
            "STATS", group: .admin,
            arguments: [
                ArgumentSpec("contents", .boolean, "also walk every tree: entries, key and value bytes, compression ratio of values (default false)")
            ],
            reply: "`OK {…}`: objects per entity, file and log bytes, pages used and free, cache hits, last txn",
            "Store statistics."),
        CommandSpec("CHECKPOINT", group: .admin, admin: true, reply: "`OK`", "Moves the log into the page files."),
        CommandSpec(
            "COMPACT", group: .admin, admin: true, reply: #"`OK {"bytesBefore":n,"bytesAfter":n}`"#,
            "Rewrites the stores without free pages; the store stays online."),
        CommandSpec(
            "VERIFY", group: .admin, admin: true,
            reply: #"`OK {"ok":true,"faults":0,"faultCount":0,"pages":n,"checked":[…]}` or `ERR CORRUPT {…}` whose `details.faults` lists the first 100 faults and `details.faultCount` counts them all"#,
            "Checks every page, tree, index and relationship, and that every key of the object and link trees belongs to an object of the model."),
        CommandSpec(
            "BACKUP", group: .admin, admin: true,
            arguments: [ArgumentSpec("path", .string, required: true, "a name under the configured backup folder")],
            reply: #"`OK {"bytes":n,"path":"…","entries":n,"payloadBytes":n}`"#,
            "Writes a consistent copy of the stores: one backup file (Docs/FileFormat.md, \"Backup file\")."),
    ]

    private static let byName: [String: CommandSpec] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The command named `name` (any case).
    public static func command(_ name: String) -> CommandSpec? { byName[name.uppercased()] }

    /// The command a request names, its arguments checked. Throws `UNKNOWN_COMMAND` or
    /// `BAD_REQUEST`.
    public static func resolve(_ request: Request) throws(KeelError) -> CommandSpec {
        guard let spec = byName[request.command] else {
            throw KeelError(.unknownCommand, "no command \(request.command) (Docs/Protocol.md lists them)")
        }
        try spec.validate(request)
        return spec
    }
}
