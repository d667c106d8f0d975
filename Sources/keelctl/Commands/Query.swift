// keelctl query ENTITY: a FETCH (spec/protocol.md, "FETCH") from the command line, printed as a
// table, or as the rows' JSON.

import ArgumentParser
import KeelModel
import Synchronization

struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Runs a FETCH and prints the objects as a table.",
        discussion: """
            Example: keelctl query Employee --where "salary > %@ AND department.name BEGINSWITH[c] 'sal'" \
            --arg 5000 --sort name --sort age:desc --limit 10 --properties name,age,department

            --where takes the predicate language of Docs/Predicates.md; each --arg fills the next %@ \
            (a JSON value, or else taken as a string). Sub-entities' objects are included unless \
            --no-subentities. Columns are $id and the properties (--properties, default every stored \
            property of the entity); long cells are cut with "…". Key paths through to-one \
            relationships (--properties name,department.name) fetch only those values and each \
            object's $id (FETCH's result "dictionaries"); --distinct shows each distinct row of the \
            properties once, without $id.

            Groups and aggregates: --group-by department.name --properties \
            'department.name,count(),sum(salary),avg(age)' shows one row per department; an aggregate \
            is count(), count(KEY), sum(KEY), avg(KEY), min(KEY) or max(KEY), its column named as \
            written, and --sort takes it too (--sort 'sum(salary):desc'). Aggregates without \
            --group-by give one row over every object fetched. NAME=sum(salary) names the column             NAME, which --having can test: --group-by department.name --properties             'department.name,n=count(),payroll=sum(salary)' --having 'n >= 2 AND payroll > %@'             --having-arg 10000 keeps the departments it holds for (FETCH's having).
            """)

    @OptionGroup var location: Location

    @Argument(help: ArgumentHelp("The entity to fetch.", valueName: "entity"))
    var entity: String

    @Option(help: ArgumentHelp("A predicate (Docs/Predicates.md).", valueName: "predicate"))
    var `where`: String?

    @Option(help: ArgumentHelp("A value for the next %@ of the predicate: JSON, or else a string.", valueName: "value"))
    var arg: [String] = []

    @Option(help: ArgumentHelp("Sort by this key; KEY:desc for descending, KEY:ci for case-insensitive (repeat for more keys).", valueName: "key"))
    var sort: [String] = []

    @Option(help: ArgumentHelp("At most this many objects.", valueName: "n"))
    var limit: Int?

    @Option(help: ArgumentHelp("Skip this many objects first.", valueName: "n"))
    var offset: Int?

    @Option(help: ArgumentHelp("The properties to show, comma-separated.", valueName: "names"))
    var properties: String?

    @Flag(help: "Leave out objects of sub-entities.")
    var noSubentities = false

    @Option(help: ArgumentHelp("One row per group of these keys' values, comma-separated (FETCH's groupBy).", valueName: "keys"))
    var groupBy: String?

    @Option(help: ArgumentHelp("Keep the groups whose row satisfies this predicate over the group keys and the aggregates' names (FETCH's having).", valueName: "predicate"))
    var having: String?

    @Option(help: ArgumentHelp("A value for the next %@ of --having: JSON, or else a string.", valueName: "value"))
    var havingArg: [String] = []

    @Flag(help: "Each distinct row of --properties once (FETCH's distinct; needs --properties).")
    var distinct = false

    @Flag(help: "Print each row's JSON (FETCH's ROW) on a line instead of a table.")
    var json = false

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        if let offset, offset < 0 { throw ValidationError("--offset must not be negative") }
        if distinct, columnsAsked?.isEmpty ?? true { throw ValidationError("--distinct needs --properties") }
        if having != nil, groupKeys == nil, !(columnsAsked ?? []).contains(where: { Self.aggregate($0) != nil }) {
            throw ValidationError("--having needs --group-by or an aggregate in --properties")
        }
        if !havingArg.isEmpty, having == nil { throw ValidationError("--having-arg needs --having") }
        for column in columnsAsked ?? [] where column.contains("=") && Self.aggregate(column) == nil {
            throw ValidationError("--properties \(column): expected NAME=FUNCTION(KEY), FUNCTION one of count, sum, avg, min, max")
        }
        for key in sort {
            let parts = key.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 3, !parts[0].isEmpty, parts.dropFirst().allSatisfy({ ["asc", "desc", "ci"].contains($0) }) else {
                throw ValidationError("--sort \(key): expected KEY, KEY:desc, KEY:ci or KEY:desc:ci")
            }
        }
    }

    /// The FETCH request.
    var request: JSON {
        var members: [(String, JSON)] = [("entity", .string(entity))]
        if let `where` { members.append(("predicate", .string(`where`))) }
        if !arg.isEmpty { members.append(("args", .array(arg.map { (try? JSON.parse($0)) ?? .string($0) }))) }
        if !sort.isEmpty {
            members.append(("sort", .array(sort.map { key in
                let parts = key.split(separator: ":").map(String.init)
                return ["key": .string(parts[0]), "ascending": .bool(!parts.contains("desc")), "caseInsensitive": .bool(parts.contains("ci"))]
            })))
        }
        if let limit { members.append(("limit", .int(Int64(limit)))) }
        if let offset { members.append(("offset", .int(Int64(offset)))) }
        if noSubentities { members.append(("includeSubentities", false)) }
        if let names = columnsAsked {
            // Rows of objects fetched as values (key paths) ask for each object's ID too.
            let sent = valuesOnly && rowsAreObjects ? ["$id"] + names.filter { $0 != "$id" } : names
            members.append(("properties", .array(sent.map { Self.aggregate($0) ?? .string($0) })))
        }
        if let keys = groupKeys { members.append(("groupBy", .array(keys.map(JSON.string)))) }
        if let having { members.append(("having", .string(having))) }
        if !havingArg.isEmpty { members.append(("havingArgs", .array(havingArg.map { (try? JSON.parse($0)) ?? .string($0) }))) }
        if valuesOnly { members.append(("result", "dictionaries")) }
        if distinct { members.append(("distinct", true)) }
        return .object(.init(members, uniquingKeysWith: { a, _ in a }))
    }

    /// Only the properties' values (FETCH's `dictionaries`): asked for by a key path, an
    /// aggregate, --group-by or --distinct.
    private var valuesOnly: Bool {
        distinct || groupKeys != nil || (columnsAsked ?? []).contains { $0.contains(".") || Self.aggregate($0) != nil }
    }

    /// Whether each row is one object (shown with its `$id`): not a distinct row, not a group.
    private var rowsAreObjects: Bool {
        !distinct && groupKeys == nil && !(columnsAsked ?? []).contains { Self.aggregate($0) != nil }
    }

    private var columnsAsked: [String]? { properties.map(Self.list) }

    private var groupKeys: [String]? { groupBy.map(Self.list) }

    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `sum(salary)` → the aggregate `{"name":"sum(salary)","function":"sum","key":"salary"}`
    /// (`count()` counts objects); `payroll=sum(salary)` → the same named `payroll`; nil for a
    /// property name.
    static func aggregate(_ text: String) -> JSON? {
        guard text.hasSuffix(")"), let open = text.firstIndex(of: "(") else { return nil }
        var name = text
        var function = String(text[..<open])
        if let equals = function.firstIndex(of: "=") {
            name = function[..<equals].trimmingCharacters(in: .whitespaces)
            function = function[function.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
        }
        guard FetchAggregate.Function(wire: function) != nil else { return nil }
        let key = text[text.index(after: open)..<text.index(before: text.endIndex)].trimmingCharacters(in: .whitespaces)
        var members: [(String, JSON)] = [("name", .string(name)), ("function", .string(function))]
        if !key.isEmpty { members.append(("key", .string(key))) }
        return .object(.init(members, uniquingKeysWith: { a, _ in a }))
    }

    func run() async throws {
        let rows = Mutex<[JSON]>([])
        let asJSON = json
        let request = self.request
        let model = try await location.run(reading: true) { backend in
            try await backend.fetch(request) { (row) throws(KeelError) in
                if asJSON { print(row.serialized()) } else { rows.withLock { $0.append(row) } }
            }
            return backend.model
        }
        if asJSON { return }
        let all = rows.withLock { $0 }
        // An aggregate's column is its name (`payroll=sum(salary)`: payroll).
        let asked = columnsAsked?.map { Self.aggregate($0)?["name"]?.stringValue ?? $0 }
        let shown = asked ?? groupKeys ?? Self.columns(of: entity, in: model)
        let columns = rowsAreObjects ? ["$id"] + shown.filter { $0 != "$id" } : shown
        let cells = all.map { row in columns.map { Self.cell(row[$0]) } }
        print(Output.table(columns, cells))
        let noun = rowsAreObjects ? "object" : "row"
        print("(\(all.count) \(noun)\(all.count == 1 ? "" : "s"))")
    }

    /// Every stored property of `entity`.
    static func columns(of entity: String, in model: Model) -> [String] {
        guard let e = model.entity(named: entity) else { return [] }
        return e.properties.compactMap { p in
            if case .attribute(let a) = p, a.isTransient { return nil }
            return p.name
        }
    }

    static func cell(_ value: JSON?) -> String {
        switch value {
        case nil: ""
        case .string(let s)?: s
        case .array(let items)?: "[" + items.map { cell($0) }.joined(separator: ", ") + "]"
        case let other?: other.serialized()
        }
    }
}
