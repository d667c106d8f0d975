// keelctl import and export, through the binary: a round trip keeps every object and every
// relationship (ordered lists in order, links without an inverse, both sides of each link);
// problems are named by line and field and nothing is imported; a save that fails part-way is
// undone.

import Foundation
import Synchronization
import KeelModel
import Testing

@Suite("keelctl import and export")
struct ImportExportTests {
    /// An export with IDs replaced by each object's name or title (unique in these tests), lines
    /// sorted, unordered to-many lists sorted: equal for equal object graphs under any IDs.
    static func canonical(_ export: String) throws -> [String] {
        let lines = export.split(separator: "\n").map(String.init)
        var objects: [JSON] = []
        for line in lines { objects.append(try JSON.parse(line)) }
        var name: [String: String] = [:]
        for o in objects {
            let label = o["name"]?.stringValue ?? o["title"]?.stringValue ?? "?"
            name[o["$id"]?.stringValue ?? ""] = "\(o["$entity"]?.stringValue ?? "?"):\(label)"
        }
        return objects.map { o -> String in
            guard case .object(var members) = o else { return o.serialized() }
            for (key, value) in members {
                switch value {
                case .string(let s) where key == "$id" || key == "author": members[key] = .string(name[s] ?? "missing \(s)")
                case .array(let items):
                    var mapped = items.map { JSON.string(name[$0.stringValue ?? ""] ?? "missing") }
                    if key == "related" { mapped.sort { $0.stringValue! < $1.stringValue! } }
                    members[key] = .array(mapped)
                default: break
                }
            }
            return JSON.object(members).serialized()
        }.sorted()
    }

    @Test("a store exported, imported into a fresh store and exported again gives the same objects and relationships")
    func roundTrip() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        try w.withStore("a") { store in
            let ids = try LibraryModel.fill(store, authors: 12, booksEach: 5, notes: "first edition")
            // Books related to books of other authors (no inverse), in both directions of the ID order.
            let books = ids.filter { $0.entity == LibraryModel.book.id }
            let related = LibraryModel.field(LibraryModel.book, "related")
            var changes: [Change] = []
            for (i, b) in books.enumerated() where i % 7 == 0 {
                changes.append(.set(b, field: related, value: .objects([books[(i + 13) % books.count], books[(i + 31) % books.count]])))
            }
            // One author's books in an order that is not the ID order.
            let author = ids[0]
            let own = Array(books.prefix(5))
            changes.append(.set(author, field: LibraryModel.field(LibraryModel.author, "books"), value: .objects([own[3], own[0], own[4], own[1], own[2]])))
            _ = try store.save(ChangeSet(changes: changes))
        }
        let first = try w.keelctl("export", "--data", "a", "--out", "a.jsonl")
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout == "exported 72 objects to a.jsonl\n")
        let imported = try w.keelctl("import", "--data", "b", "--model", "model.json", "a.jsonl")
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stdout == "imported 72 objects in 2 saves: Author 12, Book 60\n", "\(imported)")  // the inserts, then the books lists in their order
        let second = try w.keelctl("export", "--data", "b")
        #expect(second.status == 0, "\(second)")
        #expect(try Self.canonical(second.stdout) == Self.canonical(try w.read("a.jsonl")))
        // The reordered list kept its order.
        #expect(second.stdout.contains(#""books":["Book/4","Book/1","Book/5","Book/2","Book/3"]"#), "\(second.stdout.prefix(600))")
        // Small saves give the same result.
        let chunked = try w.keelctl("import", "--data", "c", "--model", "model.json", "--chunk", "7", "a.jsonl")
        #expect(chunked.status == 0, "\(chunked)")
        #expect(chunked.stdout.hasPrefix("imported 72 objects in "), "\(chunked)")
        let third = try w.keelctl("export", "--data", "c")
        #expect(try Self.canonical(third.stdout) == Self.canonical(try w.read("a.jsonl")))
        try w.withStore("b") { _ in }
        try w.withStore("c") { _ in }
    }

    @Test("objects written by hand: keys, either side of a link, a JSON array, defaults; relationships completed")
    func handWritten() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        // Books before their (required) author, the author's list giving the order, one link
        // written only on the book's side, a related book that comes later in the file.
        try w.write("books.json", """
            [
              {"$entity": "Book", "$id": "b2", "title": "Second", "author": "le-guin", "related": ["b3"]},
              {"$entity": "Book", "$id": "b1", "title": "First", "year": 1968},
              {"$entity": "Author", "$id": "le-guin", "name": "Ursula K. Le Guin", "born": 1929, "books": ["b1", "b2"]},
              {"$entity": "Book", "$id": "b3", "title": "Third", "author": "le-guin", "inPrint": false}
            ]
            """)
        let run = try w.keelctl("import", "--data", "d", "--model", "model.json", "books.json")
        #expect(run.status == 0, "\(run)")
        let out = try w.keelctl("export", "--data", "d")
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(out)")
        let author = try #require(lines.first { $0.contains(#""$entity":"Author""#) })
        #expect(author.contains(#""books":["#), "\(author)")
        let objects = try lines.map { try JSON.parse($0) }
        let titleOf = Dictionary(uniqueKeysWithValues: objects.map { ($0["$id"]?.stringValue ?? "", $0["title"]?.stringValue ?? $0["name"]?.stringValue ?? "") })
        let authorObject = try #require(objects.first { $0["$entity"] == "Author" })
        #expect(authorObject["books"]?.arrayValue?.compactMap { titleOf[$0.stringValue ?? ""] } == ["First", "Second", "Third"])
        let second = try #require(objects.first { $0["title"] == "Second" })
        #expect(second["related"]?.arrayValue?.compactMap { titleOf[$0.stringValue ?? ""] } == ["Third"])
        #expect(objects.first { $0["title"] == "First" }?["inPrint"] == true, "the default applies to a value left out")
        #expect(objects.first { $0["title"] == "Third" }?["inPrint"] == false)
        try w.withStore("d") { _ in }
    }

    @Test("a malformed line fails the import with its line number and imports nothing")
    func malformedLine() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        try w.write("bad.jsonl", """
            {"$entity":"Author","$id":"a","name":"A"}
            {"$entity":"Book","$id":"b","title":"B","author":"a"}

            {"$entity":"Book","$id":"c","title":"C","author":"a",}
            {"$entity":"Book","$id":"d","title":"D","author":"a"}

            """)
        let run = try w.keelctl("import", "--data", "e", "--model", "model.json", "bad.jsonl")
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr == "keelctl: bad.jsonl: line 4, column 54: invalid JSON: expected a string key in an object, found '}'; nothing was imported\n", "\(run)")
        // Problems of meaning: every one named by line and field.
        try w.write("wrong.jsonl", """
            {"$entity":"Author","$id":"a","name":"A","born":"nineteen"}
            {"$entity":"Book","$id":"b","title":"B","author":"zz"}
            {"$entity":"Book","$id":"a","title":"C","author":"a","colour":"red"}
            {"$entity":"Shelf","$id":"s"}
            """)
        let wrong = try w.keelctl("import", "--data", "e", "--model", "model.json", "wrong.jsonl")
        #expect(wrong.status == 1, "\(wrong)")
        #expect(wrong.stderr.contains("line 1: Author.born"), "\(wrong)")
        #expect(wrong.stderr.contains("line 3: Book.colour: no such property"), "\(wrong)")
        #expect(wrong.stderr.contains(#"line 4: $entity: the model has no entity "Shelf""#), "\(wrong)")
        #expect(wrong.stderr.hasSuffix("nothing was imported\n"), "\(wrong)")
        let unknownKey = try w.keelctl("import", "--data", "e", "--model", "model.json", "--entity", "Book", "-",
                                       stdin: #"{"$id":"x","title":"X","author":"nobody"}"# + "\n")
        #expect(unknownKey.stderr == #"keelctl: -: line 1: Book.author: no Author with the key "nobody" in this import; nothing was imported"# + "\n", "\(unknownKey)")
        let total = FileManager.default.fileExists(atPath: w.file("e/Default.keel")) ? try w.withStore("e") { try $0.statistics()["totalObjects"] } : 0
        #expect(total == 0, "nothing was imported")
    }

    @Test("a save that fails part-way is undone: the error names the line, the store keeps only what it had")
    func failureUndoes() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        try w.withStore("f") { store in try LibraryModel.fill(store, authors: 2, booksEach: 2) }
        // Author 1 exists already: the unique name fails the save holding line 7, after three
        // saves of two objects went through.
        var lines: [String] = []
        for i in 0..<6 { lines.append(#"{"$entity":"Author","$id":"n\#(i)","name":"New \#(i)"}"#) }
        lines.append(#"{"$entity":"Author","$id":"dup","name":"Author 1"}"#)
        lines.append(#"{"$entity":"Author","$id":"n7","name":"New 7"}"#)
        try w.write("more.jsonl", lines.joined(separator: "\n") + "\n")
        let run = try w.keelctl("import", "--data", "f", "--chunk", "2", "more.jsonl")
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("(line 7)"), "\(run)")
        #expect(run.stderr.contains("CONSTRAINT") || run.stderr.contains("unique"), "\(run)")
        #expect(run.stderr.hasSuffix("(nothing was imported)\n"), "\(run)")
        try w.withStore("f") { store in
            let stats = try store.statistics()
            #expect(stats["objects"]?["Author"] == 2)
            #expect(stats["objects"]?["Book"] == 4)
        }
    }

    @Test("export --out writes through a link and into a named pipe without replacing them; a folder or a missing file is refused with the reason")
    func outputsThatAreNotPlainFiles() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        try w.withStore("g") { store in try LibraryModel.fill(store, authors: 3, booksEach: 2) }
        func kind(_ name: String) -> mode_t {
            var info = stat()
            return lstat(w.file(name), &info) == 0 ? info.st_mode & S_IFMT : 0
        }
        // A link to a file not made yet, then to the file the first export made: the link stays.
        try FileManager.default.createSymbolicLink(atPath: w.file("link.jsonl"), withDestinationPath: "real.jsonl")
        for _ in 0..<2 {
            let run = try w.keelctl("export", "--data", "g", "--out", "link.jsonl")
            #expect(run.status == 0, "\(run)")
            #expect(kind("link.jsonl") == S_IFLNK, "the link was replaced")
            #expect(try w.read("real.jsonl").split(separator: "\n").count == 9)
        }
        // A named pipe: a reader gets every line, and the pipe is still a pipe (before, the export
        // went to "pipe.partial" and was renamed over it).
        #expect(mkfifo(w.file("pipe"), 0o600) == 0)
        let received = Mutex<String?>(nil)
        let pipe = w.file("pipe")
        let reader = Thread {
            // Plain read(2): Foundation's file reading does not wait on a pipe's writer.
            var bytes: [UInt8] = []
            let fd = open(pipe, O_RDONLY)
            if fd >= 0 {
                var chunk = [UInt8](repeating: 0, count: 65536)
                while case let n = chunk.withUnsafeMutableBytes({ read(fd, $0.baseAddress!, $0.count) }), n > 0 {
                    bytes.append(contentsOf: chunk[..<n])
                }
                close(fd)
            }
            received.withLock { $0 = String(decoding: bytes, as: UTF8.self) }
        }
        reader.start()
        let piped = try w.keelctl("export", "--data", "g", "--out", "pipe")
        #expect(piped.status == 0, "\(piped)")
        var waited = 0
        while received.withLock({ $0 }) == nil, waited < 3000 {
            usleep(10_000)
            waited += 1
        }
        #expect(received.withLock { $0 }?.split(separator: "\n").count == 9)
        #expect(kind("pipe") == S_IFIFO, "the pipe was replaced")
        #expect(!FileManager.default.fileExists(atPath: w.file("pipe.partial")))
        // Standard output, by name: the lines only, the summary on standard error.
        for name in ["/dev/stdout", "-"] {
            let out = try w.keelctl("export", "--data", "g", "--out", name)
            #expect(out.status == 0, "\(out)")
            #expect(out.stdout.split(separator: "\n").count == 9 && out.stdout.hasPrefix("{"), "\(out)")
            #expect(out.stderr.hasSuffix("exported 9 objects to \(name)\n"), "\(out)")
        }
        // A descriptor by name (`/dev/fd/1` of a `>> file`): written after what the file holds,
        // not over it from its start.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "printf 'first\\n' > appended.txt && \"$0\" export --data g --out /dev/fd/1 >> appended.txt", Keelctl.binary]
        shell.currentDirectoryURL = URL(fileURLWithPath: w.path)
        try shell.run()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0)
        let appended = try w.read("appended.txt").split(separator: "\n")
        #expect(appended.first == "first" && appended.count == 10, "\(appended.prefix(2))")
        // A folder is not a place to write to; files that cannot be read say why.
        try FileManager.default.createDirectory(atPath: w.file("folder"), withIntermediateDirectories: false)
        let folder = try w.keelctl("export", "--data", "g", "--out", "folder")
        #expect(folder.status == 1)
        #expect(folder.stderr == "keelctl: cannot write folder: it is a folder; give a file to write the export to\n", "\(folder)")
        let missing = try w.keelctl("import", "--data", "g", "missing.jsonl")
        #expect(missing.status == 1)
        #expect(missing.stderr == "keelctl: cannot read missing.jsonl: No such file or directory\n", "\(missing)")
        let notAFile = try w.keelctl("import", "--data", "g", "folder")
        #expect(notAFile.stderr == "keelctl: cannot read folder: it is a folder; give the file to import\n", "\(notAFile)")
    }
}
