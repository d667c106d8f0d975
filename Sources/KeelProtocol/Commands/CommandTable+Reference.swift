// The command reference of Docs/Protocol.md, rendered from the table, so the doc cannot drift
// from what the daemon accepts (a test compares the doc's generated block with this).

extension CommandTable {
    /// Markers around the generated block in Docs/Protocol.md.
    public static let referenceBegin = "<!-- BEGIN GENERATED COMMAND REFERENCE (CommandTable.referenceMarkdown) -->"
    public static let referenceEnd = "<!-- END GENERATED COMMAND REFERENCE -->"

    /// Every command, by group: its summary, who may run it, its request keys and its reply.
    public static func referenceMarkdown() -> String {
        var out = ""
        for group in CommandGroup.allCases {
            let commands = all.filter { $0.group == group }
            guard !commands.isEmpty else { continue }
            out += "### \(group.rawValue)\n\n"
            for command in commands {
                out += "#### `\(command.name)`\n\n"
                out += command.summary
                if command.isAdmin { out += " **Admin only** (`PERMISSION` for other peers)." }
                out += "\n\n"
                let keys = command.arguments + (command.acceptedKeys.contains("context") && !command.arguments.contains { $0.key == "context" }
                    ? [ArgumentSpec("context", .string, "the context (default `main`)")] : [])
                if keys.isEmpty {
                    out += "Request: no JSON.\n\n"
                } else {
                    out += "| key | kind | required | meaning |\n| --- | --- | --- | --- |\n"
                    for key in keys {
                        out += "| `\(key.key)` | \(key.kind.rawValue) | \(key.isRequired ? "yes" : "no") | \(key.summary) |\n"
                    }
                    out += "\n"
                }
                out += "Reply: \(command.reply)\n\n"
            }
        }
        return out
    }
}
