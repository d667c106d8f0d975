// keelctl's exact output on a small store: what an operator reads (and a script parses) must not
// drift unnoticed. The store is made by `keelctl import` from five lines, so every figure below
// follows from them.

import Foundation
import KeelModel
import Testing

@Suite("keelctl output on a small store")
struct OutputTests {
    static let library = """
        {"$entity":"Author","$id":"a1","name":"Ursula K. Le Guin","born":1929,"books":["b1","b2"]}
        {"$entity":"Author","$id":"a2","name":"Italo Calvino","born":1923}
        {"$entity":"Book","$id":"b1","title":"A Wizard of Earthsea","year":1968,"related":["b2"]}
        {"$entity":"Book","$id":"b2","title":"The Dispossessed","year":1974,"notes":"Hugo and Nebula"}
        {"$entity":"Book","$id":"b3","title":"Invisible Cities","year":1972,"author":"a2","inPrint":false}

        """

    static func small() throws -> Workspace {
        let w = try Workspace()
        try w.write("lib.jsonl", library)
        let run = try w.keelctl("import", "--data", "data", "--model", "model.json", "lib.jsonl")
        #expect(run.status == 0 && run.stdout == "imported 5 objects in 2 saves: Author 2, Book 3\n", "\(run)")
        return w
    }

    func expectOutput(_ w: Workspace, _ arguments: [String], _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let run = try w.keelctl(arguments: arguments)
        #expect(run.status == 0, "\(arguments): \(run)", sourceLocation: sourceLocation)
        #expect(run.stdout == expected, "\(arguments)", sourceLocation: sourceLocation)
        #expect(run.stderr.isEmpty, "\(arguments): \(run.stderr)", sourceLocation: sourceLocation)
    }

    @Test("stats, verify, query and export print exactly this")
    func reads() throws {
        let w = try Self.small()
        defer { w.cleanUp() }
        let stats = """
            entity  objects
            Author        2
            Book          3
            total         5

            store file    page file bytes  log bytes  page size  pages used  pages free  entries  data bytes  compression
            Default.keel            45056    8388608       4096          11           0       21        2622         2.33
            total                   45056    8388608                     11           0       21        2622         2.33

            last save: 2

            """
        try expectOutput(w, ["stats", "--data", "data"], stats)
        try expectOutput(w, ["stats", "--data", "data", "--quick"], """
            entity  objects
            Author        2
            Book          3
            total         5

            store file    page file bytes  log bytes  page size  pages used  pages free
            Default.keel            45056    8388608       4096          11           0
            total                   45056    8388608                     11           0

            last save: 2

            """)
        // One row per tree (each store's walk, `files.<Conf>.trees`): cell bytes are the cells with
        // their slots, the leaf fill those bytes over the leaves' 4064 usable bytes each.
        try expectOutput(w, ["stats", "--data", "data", "--trees"], stats + """

            store file    tree                entries  key bytes  value bytes  cell bytes  per entry  leaf pages  branch pages  leaf fill
            Default.keel  $history                  2         16           45          69       34.5           1             0       0.02
            Default.keel  $meta                     5         44         2070         827      165.4           1             0       0.04
            Default.keel  idx/Book.title            3         91            0         103       34.3           1             0       0.03
            Default.keel  link/Book.related         1         20            0          24       24.0           1             0       0.01
            Default.keel  obj/Author                2         20           44          72       36.0           1             0       0.02
            Default.keel  obj/Book                  3         30          102         144       48.0           1             0       0.04
            Default.keel  olink/Author.books        3         54           30          96       32.0           1             0       0.02
            Default.keel  uniq/Author.name          2         36           20          64       32.0           1             0       0.02

            """)
        let refused = try w.keelctl("stats", "--data", "data", "--trees", "--quick")
        #expect(refused.status != 0 && refused.stderr.contains("--trees needs the tree walk"), "\(refused)")
        let json = try w.keelctl("stats", "--data", "data", "--json")
        let figures = try JSON.parse(json.stdout.trimmingCharacters(in: .newlines))
        #expect(figures["objects"] == ["Author": 2, "Book": 3])
        #expect(figures["totalObjects"] == 5 && figures["lastTxn"] == 2 && figures["pagesUsed"] == 11 && figures["pagesFree"] == 0)
        #expect(figures["files"]?["Default"]?["pageFileBytes"] == 45056 && figures["compressionRatio"] == 2.33)
        let trees = figures["files"]?["Default"]?["trees"]
        #expect(trees?["obj/Book"]?["entries"] == 3 && trees?["obj/Book"]?["keyBytes"] == 30 && trees?["obj/Book"]?["valueBytes"] == 102)
        #expect(trees?["obj/Book"]?["cellBytes"] == 144 && trees?["obj/Book"]?["leafPages"] == 1 && trees?["obj/Book"]?["branchPages"] == 0)
        #expect(trees?["obj/Book"]?["leafFill"] == 0.035 && trees?["$meta"]?["overflowValues"] == 1, "\(trees ?? .null)")
        let treeEntries = trees?.objectValue?.values.reduce(0) { $0 + ($1["entries"]?.intValue ?? 0) }
        #expect(treeEntries == figures["files"]?["Default"]?["entries"]?.intValue, "the trees' entries add up to the file's")
        try expectOutput(w, ["verify", "--data", "data"], "clean: 1 store file, 11 pages, 5 objects\n")
        try expectOutput(w, ["query", "Book", "--data", "data", "--sort", "year"], """
            $id     title                 year  notes            inPrint  author    related
            Book/1  A Wizard of Earthsea  1968  null             true     Author/1  [Book/2]
            Book/3  Invisible Cities      1972  null             false    Author/2  []
            Book/2  The Dispossessed      1974  Hugo and Nebula  true     Author/1  []
            (3 objects)

            """)
        try expectOutput(w, ["query", "Book", "--data", "data", "--where", "year > %@ AND title BEGINSWITH[c] 't'", "--arg", "1970", "--properties", "title,year,author"], """
            $id     title             year  author
            Book/2  The Dispossessed  1974  Author/1
            (1 object)

            """)
        // Key paths through to-ones: the values and each object's ID (FETCH's dictionaries with
        // "$id"); --distinct: the values alone.
        try expectOutput(w, ["query", "Book", "--data", "data", "--sort", "title", "--properties", "title,author.name,author.born"], """
            $id     title                 author.name        author.born
            Book/1  A Wizard of Earthsea  Ursula K. Le Guin         1929
            Book/3  Invisible Cities      Italo Calvino             1923
            Book/2  The Dispossessed      Ursula K. Le Guin         1929
            (3 objects)

            """)
        try expectOutput(w, ["query", "Book", "--data", "data", "--sort", "author.name", "--properties", "author.name,inPrint", "--distinct"], """
            author.name        inPrint
            Italo Calvino      false
            Ursula K. Le Guin  true
            (2 rows)

            """)
        // Groups and aggregates (FETCH's groupBy; an aggregate's column named as written).
        try expectOutput(w, ["query", "Book", "--data", "data", "--group-by", "author.name", "--properties", "author.name,count(),min(year),max(year)", "--sort", "count():desc"], """
            author.name        count()  min(year)  max(year)
            Ursula K. Le Guin        2       1968       1974
            Italo Calvino            1       1972       1972
            (2 rows)

            """)
        try expectOutput(w, ["query", "Book", "--data", "data", "--properties", "count(),sum(year),avg(year)"], """
            count()  sum(year)           avg(year)
                  3       5914  1971.3333333333333
            (1 row)

            """)
        // Named aggregates, and --having over the names with its own arguments.
        try expectOutput(w, ["query", "Book", "--data", "data", "--group-by", "author.name", "--properties", "author.name,books=count(),first=min(year)", "--having", "books >= %@ OR author.name BEGINSWITH 'I'", "--having-arg", "2", "--sort", "first:desc"], """
            author.name        books  first
            Italo Calvino          1   1972
            Ursula K. Le Guin      2   1968
            (2 rows)

            """)
        try expectOutput(w, ["query", "Book", "--data", "data", "--group-by", "author.name", "--properties", "author.name,books=count()", "--having", "books > 1"], """
            author.name        books
            Ursula K. Le Guin      2
            (1 row)

            """)
        let noGroups = try w.keelctl("query", "Book", "--data", "data", "--having", "year > 1")
        #expect(noGroups.status != 0 && noGroups.stderr.contains("--having needs --group-by or an aggregate"), "\(noGroups)")
        let badName = try w.keelctl("query", "Book", "--data", "data", "--group-by", "inPrint", "--properties", "inPrint,n=median(year)")
        #expect(badName.status != 0 && badName.stderr.contains("expected NAME=FUNCTION(KEY)"), "\(badName)")
        let unknown = try w.keelctl("query", "Book", "--data", "data", "--group-by", "inPrint", "--having", "year > 1")
        #expect(unknown.status == 1 && unknown.stderr.contains("a name of the grouped rows"), "\(unknown)")
        try expectOutput(w, ["query", "Book", "--data", "data", "--group-by", "inPrint"], """
            inPrint
            false
            true
            (2 rows)

            """)
        let ungrouped = try w.keelctl("query", "Book", "--data", "data", "--group-by", "author.name", "--properties", "title")
        #expect(ungrouped.status == 1 && ungrouped.stderr.contains("\"title\" is neither a \"groupBy\" key nor an aggregate"), "\(ungrouped)")
        try expectOutput(w, ["export", "--data", "data"], """
            {"$id":"Author/1","$entity":"Author","name":"Ursula K. Le Guin","born":1929,"books":["Book/1","Book/2"]}
            {"$id":"Author/2","$entity":"Author","name":"Italo Calvino","born":1923,"books":["Book/3"]}
            {"$id":"Book/1","$entity":"Book","title":"A Wizard of Earthsea","year":1968,"notes":null,"inPrint":true,"author":"Author/1","related":["Book/2"]}
            {"$id":"Book/2","$entity":"Book","title":"The Dispossessed","year":1974,"notes":"Hugo and Nebula","inPrint":true,"author":"Author/1","related":[]}
            {"$id":"Book/3","$entity":"Book","title":"Invisible Cities","year":1972,"notes":null,"inPrint":false,"author":"Author/2","related":[]}

            """)
        try expectOutput(w, ["export", "--data", "data", "--entity", "Author"], """
            {"$id":"Author/1","$entity":"Author","name":"Ursula K. Le Guin","born":1929,"books":["Book/1","Book/2"]}
            {"$id":"Author/2","$entity":"Author","name":"Italo Calvino","born":1923,"books":["Book/3"]}

            """)
        let bad = try w.keelctl("query", "Book", "--data", "data", "--where", "year >")
        #expect(bad.status == 1 && bad.stderr.hasPrefix("keelctl: "), "\(bad)")
    }

    @Test("compact, checkpoint and the model commands print exactly this")
    func changes() throws {
        let w = try Self.small()
        defer { w.cleanUp() }
        try expectOutput(w, ["compact", "--data", "data"], "bytes before: 8433664\nbytes after:  45120\n")
        try expectOutput(w, ["checkpoint", "--data", "data"], "log bytes before: 64 (frames 0)\nlog bytes after:  64 (frames 0)\n")
        try expectOutput(w, ["model", "check", "model.json"], """
            model.json: valid — model Library version 1, 2 entities, configurations Default
            hash: \(LibraryModel.model.hash)

            """)
        try expectOutput(w, ["model", "diff", "model.json", "model.json"], "the models mean the same (same hash): nothing to migrate\n")
        let v2 = LibraryModel.text
            .replacingOccurrences(of: #""version": 1"#, with: #""version": 2"#)
            .replacingOccurrences(of: #"{ "name": "notes", "type": "string" }"#, with: #"{ "name": "remarks", "type": "string", "renamingIdentifier": "notes" }, { "name": "isbn", "type": "string" }"#)
            .replacingOccurrences(of: #"{ "name": "year", "type": "int32" }"#, with: #"{ "name": "year", "type": "int32", "optional": false, "defaultValue": 0 }"#)
        try w.write("v2.json", v2)
        try expectOutput(w, ["model", "diff", "model.json", "v2.json"], """
            lightweight: the version changes from 1 to 2
            lightweight: Book.year: optional changes from true to false
            lightweight: Book.year: defaultValue changes from null to 0
            lightweight: Book.notes is renamed remarks (renamingIdentifier)
            lightweight: Book.isbn is added (attribute)
            lightweight migration: yes

            """)
        try w.write("v3.json", v2.replacingOccurrences(of: #""name": "born", "type": "int16""#, with: #""name": "born", "type": "int32""#))
        let heavy = try w.keelctl("model", "diff", "model.json", "v3.json")
        #expect(heavy.status == 1, "\(heavy)")
        #expect(heavy.stdout.contains("not lightweight: Author.born: type changes from \"int16\" to \"int32\"\n"), "\(heavy)")
        #expect(heavy.stdout.hasSuffix("lightweight migration: no\n"))
        #expect(heavy.stderr == "keelctl: v3.json is not a lightweight migration of model.json (1 change would rewrite stored data)\n")
    }
}
