// keelctl --socket against a real keeld (KeelTestSupport's Keeld, the sample model): compaction
// while clients save in a loop loses no acknowledged save; stats, checkpoint, verify, backup,
// export, import and query go through the admin commands and FETCH; a failed online import is
// undone; a folder keeld holds is refused offline; nobody on the socket is a failure.

import Foundation
import KeelProtocol
import KeelStorage
import KeelTestSupport
import Testing

@testable import KeelModel

@Suite("keelctl online (--socket)")
struct OnlineTests {
    /// A keeld on a fresh folder, and keelctl run in that folder.
    static func started() throws -> (Keeld, Workspace) {
        let keeld = try Keeld()
        try keeld.start()
        return (keeld, try Workspace())
    }

    /// Waits (20 s at most) until the file at `path` contains `text`.
    private static func await(_ text: String, in path: String) -> Bool {
        let deadline = Date() + 20
        while Date() < deadline {
            if ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").contains(text) { return true }
            usleep(10_000)
        }
        return false
    }

    /// Waits (20 s at most) for `process` to end; kills it if it does not.
    private static func finish(_ process: Process) -> Int32? {
        let deadline = Date() + 20
        while process.isRunning, Date() < deadline { usleep(10_000) }
        guard !process.isRunning else {
            process.terminate()
            return nil
        }
        return process.terminationStatus
    }

    @Test("history prints the transactions after one, online and offline alike; --limit, --json; a pruned history fails naming what was pruned")
    func history() throws {
        let (keeld, w) = try Self.started()
        defer {
            keeld.cleanUp()
            w.cleanUp()
        }
        let client = try keeld.connect()
        func txn(_ line: String) throws -> Int64 {
            let response = try client.request(line)
            #expect(response.isOK, "\(line): \(response)")
            return try #require(response.payload?["txn"]?.intValue)
        }
        let first = try txn(#"b BATCH.INSERT {"entity":"Company","objects":[{"name":"A"},{"name":"B"}]}"#)
        let second = try txn(#"u BATCH.UPDATE {"entity":"Company","predicate":"name == 'A'","values":{"name":"Z"}}"#)
        let third = try txn(#"d BATCH.DELETE {"entity":"Company","predicate":"name == 'B'"}"#)
        let online = try w.keelctl("history", "--socket", keeld.socketPath)
        #expect(online.status == 0, "\(online)")
        let lines = online.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(online.stdout)")
        let pattern = #"^txn (\d+) \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z: (.*)$"#
        let bodies = lines.compactMap { line -> String? in
            guard let match = line.firstMatch(of: try! Regex(pattern)) else { return nil }
            return "\(match.output[1].substring ?? "") \(match.output[2].substring ?? "")"
        }
        #expect(bodies == ["\(first) inserted Company/1, Company/2", "\(second) updated Company/1", "\(third) deleted Company/2"], "\(online.stdout)")
        let page = try w.keelctl("history", "--socket", keeld.socketPath, "--after", "\(first)", "--limit", "1", "--json")
        #expect(page.status == 0, "\(page)")
        let row = try JSON.parse(page.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(row["txn"]?.intValue == second && row["updated"] == ["Company/1"] && row["inserted"] == [], "\(page.stdout)")
        // Offline, from the data folder keeld leaves: the same lines.
        #expect(keeld.stop() == 0)
        let offline = try w.keelctl("history", "--data", keeld.dataPath, "--model", Keeld.model)
        #expect(offline.status == 0 && offline.stdout == online.stdout, "\(offline)")
        let bad = try w.keelctl("history", "--data", keeld.dataPath, "--after", "-1")
        #expect(bad.status == 2, "\(bad)")

        // A keeld keeping one transaction of history: after an older one is EXPIRED.
        let pruning = try Keeld()
        defer { pruning.cleanUp() }
        try pruning.configure(["historyRetention": 1])
        try pruning.start()
        let other = try pruning.connect()
        for name in ["P", "Q", "R"] {
            #expect(try other.request(#"b BATCH.INSERT {"entity":"Company","objects":[{"name":"\#(name)"}]}"#).isOK)
        }
        let expired = try w.keelctl("history", "--socket", pruning.socketPath)
        #expect(expired.status == 1 && expired.stderr.contains("records through 2 were pruned"), "\(expired)")
        let kept = try w.keelctl("history", "--socket", pruning.socketPath, "--after", "2")
        #expect(kept.status == 0 && kept.stdout.hasPrefix("txn 3 "), "\(kept)")
        #expect(pruning.stop() == 0)
    }

    @Test("history --delete-through deletes the records through a transaction, online and offline; past the last means the last; bad usage refused")
    func historyDelete() throws {
        let (keeld, w) = try Self.started()
        defer {
            keeld.cleanUp()
            w.cleanUp()
        }
        let client = try keeld.connect()
        for name in ["A", "B", "C", "D"] {
            #expect(try client.request(#"b BATCH.INSERT {"entity":"Company","objects":[{"name":"\#(name)"}]}"#).isOK)
        }
        let online = try w.keelctl("history", "--socket", keeld.socketPath, "--delete-through", "2")
        #expect(online.status == 0 && online.stdout == "deleted 2 history records, through transaction 2\n", "\(online)")
        let rest = try w.keelctl("history", "--socket", keeld.socketPath, "--after", "2")
        #expect(rest.status == 0 && rest.stdout.split(separator: "\n").map { $0.prefix(6) } == ["txn 3 ", "txn 4 "], "\(rest)")
        let expired = try w.keelctl("history", "--socket", keeld.socketPath)
        #expect(expired.status == 1 && expired.stderr.contains("records through 2 were pruned"), "\(expired)")
        #expect(keeld.stop() == 0)
        // Offline, past the last transaction: through the last one; --json prints the reply.
        let offline = try w.keelctl("history", "--data", keeld.dataPath, "--model", Keeld.model, "--delete-through", "99", "--json")
        #expect(offline.status == 0 && offline.stdout == #"{"deleted":2,"prunedThrough":4}"# + "\n", "\(offline)")
        let none = try w.keelctl("history", "--data", keeld.dataPath, "--model", Keeld.model, "--after", "4")
        #expect(none.status == 0 && none.stdout.isEmpty, "\(none)")
        for usage in [["--delete-through", "-1"], ["--delete-through", "2", "--after", "1"], ["--delete-through", "2", "--limit", "1"]] {
            let bad = try w.keelctl(arguments: ["history", "--data", keeld.dataPath] + usage)
            #expect(bad.status == 2, "\(usage): \(bad)")
        }
    }

    @Test("history reads a long history in pages: every transaction once, in order, --limit across pages")
    func historyPages() throws {
        let (keeld, w) = try Self.started()
        defer {
            keeld.cleanUp()
            w.cleanUp()
        }
        let client = try keeld.connect()
        let count = 1_100  // more than two of keelctl's pages of 512
        for i in 0..<count { try client.send("b\(i) BATCH.INSERT {\"entity\":\"Company\",\"objects\":[{\"name\":\"C\(i)\"}]}\n") }
        for _ in 0..<count { #expect(try client.line().contains(" OK ")) }
        let all = try w.keelctl("history", "--socket", keeld.socketPath)
        #expect(all.status == 0, "\(all.stderr)")
        let txns = all.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } }
        #expect(txns == Array(1...count))
        let window = try w.keelctl("history", "--socket", keeld.socketPath, "--after", "5", "--limit", "600")
        let windowTxns = window.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } }
        #expect(windowTxns == Array(6...605))
        #expect(keeld.stop() == 0)
    }

    @Test("watch prints each committed transaction on the entities followed, as it happens; --count ends it, --json prints the events' JSON, keeld going away fails it; offline is bad usage")
    func watch() throws {
        let (keeld, w) = try Self.started()
        defer {
            keeld.cleanUp()
            w.cleanUp()
        }
        let (process, out, err) = try Keelctl.start(["watch", "--socket", keeld.socketPath, "--entity", "Company", "--count", "2"], in: w.path)
        #expect(Self.await("keelctl: watching keeld at \(keeld.socketPath) for changes to Company", in: err))
        let client = try keeld.connect()
        func ok(_ line: String) throws -> JSON? {
            let response = try client.request(line)
            #expect(response.isOK, "\(line): \(response)")
            return response.payload
        }
        let inserted = try #require(try ok(#"b BATCH.INSERT {"entity":"Company","objects":[{"name":"A"}]}"#)?["txn"]?.intValue)
        // A transaction on another entity prints nothing.
        _ = try ok(#"c BATCH.INSERT {"entity":"Book","objects":[{"uuid":"9b2f0c1e-4a7d-4a51-9a52-0c0b6f1d2e3f","title":"T"}]}"#)
        _ = try ok(#"u UPDATE {"$id":"Company/1","values":{"name":"B"}}"#)
        let updated = try #require(try ok("s SAVE")?["txn"]?.intValue)
        #expect(Self.finish(process) == 0)
        #expect((try? String(contentsOfFile: out, encoding: .utf8)) == "txn \(inserted): inserted Company/1\ntxn \(updated): updated Company/1\n")

        let unknown = try w.keelctl("watch", "--socket", keeld.socketPath, "--entity", "Nope")
        #expect(unknown.status == 1 && unknown.stderr.contains("no entity Nope"), "\(unknown)")

        let (jsonProcess, jsonOut, jsonErr) = try Keelctl.start(["watch", "--socket", keeld.socketPath, "--json"], in: w.path)
        #expect(Self.await("for changes to every entity", in: jsonErr))
        let second = try #require(try ok(#"d BATCH.INSERT {"entity":"Company","objects":[{"name":"C"}]}"#)?["txn"]?.intValue)
        #expect(Self.await("\n", in: jsonOut))
        #expect(keeld.stop() == 0)
        #expect(Self.finish(jsonProcess) == 1)
        #expect((try? String(contentsOfFile: jsonOut, encoding: .utf8)) == #"{"txn":\#(second),"inserted":["Company/2"],"updated":[],"deleted":[]}"# + "\n")
        let stderr = (try? String(contentsOfFile: jsonErr, encoding: .utf8)) ?? ""
        #expect(stderr.contains("keelctl: keeld at \(keeld.socketPath) went away: "), "\(stderr)")

        let offline = try w.keelctl("watch", "--data", "data")
        #expect(offline.status == 2 && offline.stderr.contains("watch follows a running keeld: give --socket PATH"), "\(offline)")
        let gone = try w.keelctl("watch", "--socket", keeld.socketPath)
        #expect(gone.status == 1 && gone.stderr.contains("cannot work through keeld at"), "\(gone)")
    }

    @Test("compaction while clients save in a loop: every acknowledged save is there afterwards, and verify is clean")
    func compactUnderLoad() throws {
        let (keeld, w) = try Self.started()
        defer {
            keeld.cleanUp()
            w.cleanUp()
        }
        let record = LoadRecord()
        let group = LoadClients.start(socket: keeld.socketPath, writers: 2, prefix: "k", record: record, deadline: Date() + 5)
        var compactions = 0
        let end = Date() + 4
        while Date() < end {
            let run = try w.keelctl("compact", "--socket", keeld.socketPath)
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout.hasPrefix("bytes before: ") && run.stdout.contains("\nbytes after:  "), "\(run)")
            compactions += 1
        }
        group.wait()
        #expect(record.violations.isEmpty, "\(record.violations)")
        #expect(compactions >= 2 && record.acknowledged.count > 0, "\(compactions) compactions, \(record.acknowledged.count) saves")
        let stored = try LoadClients.storedNames(socket: keeld.socketPath)
        let missing = Set(record.acknowledged).subtracting(stored.companies)
        #expect(missing.isEmpty, "acknowledged saves missing after online compaction: \(missing.sorted().prefix(5))")
        let verify = try w.keelctl("verify", "--socket", keeld.socketPath)
        #expect(verify.status == 0 && verify.stdout.hasPrefix("clean: 2 store files, "), "\(verify)")
        // On a terminal, what is awaited and for how long (keeld reports no progress), then erased.
        let terminal = try Keelctl.runOnTerminal(["compact", "--socket", keeld.socketPath], in: w.path)
        #expect(terminal.status == 0 && terminal.terminal.contains("compacting (0 s)") && terminal.terminal.hasSuffix("\r\u{1B}[K"),
                "\(terminal.terminal.debugDescription)")
        print("OnlineTests: \(compactions) compactions through keelctl while \(record.acknowledged.count) saves were acknowledged")
    }

    @Test("stats, checkpoint, backup, export, import and query online; the backup restores offline to the same objects")
    func commands() throws {
        let (keeld, w) = try Self.started()
        defer {
            keeld.cleanUp()
            w.cleanUp()
        }
        let socket = keeld.socketPath
        try w.write("company.jsonl", """
            {"$entity":"Company","$id":"acme","name":"Acme","founded":"1990-01-01T00:00:00.000Z"}
            {"$entity":"Department","$id":"d1","name":"Sales","code":1,"companies":["acme"],"employees":["e2","e1"]}
            {"$entity":"Employee","$id":"e1","name":"Kim","age":41,"salary":"5200.00","company":"acme"}
            {"$entity":"Employee","$id":"e2","name":"Lee","age":35,"salary":"4100.50","company":"acme","department":"d1"}
            {"$entity":"Computer","$id":"c1","id":"6f1c2a3e-0000-4000-8000-000000000001","model":"X1","owner":"e1"}
            {"$entity":"Feedback","$id":"f1","bookUUID":"00000000-0000-0000-0000-000000000001","rating":4}

            """)
        let imported = try w.keelctl("import", "--socket", socket, "--chunk", "2", "company.jsonl")
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stdout.hasPrefix("imported 6 objects in "), "\(imported)")
        let stats = try w.keelctl("stats", "--socket", socket, "--json")
        let figures = try JSON.parse(stats.stdout.trimmingCharacters(in: .newlines))
        #expect(figures["totalObjects"] == 6 && figures["connections"] != nil && figures["compressionRatio"] != nil, "\(stats)")
        let text = try w.keelctl("stats", "--socket", socket)
        #expect(text.stdout.contains("Default.keel") && text.stdout.contains("Feedback.keel") && text.stdout.contains("connections: "), "\(text)")
        #expect(text.stdout.contains("(refused: 0 at limits.maxConnections, 0 for want of descriptors)"), "\(text)")
        #expect(try w.keelctl("checkpoint", "--socket", socket).status == 0)
        let query = try w.keelctl("query", "Employee", "--socket", socket, "--sort", "name", "--properties", "name,age")
        #expect(query.stdout == """
            $id         name  age
            Employee/1  Kim    41
            Employee/2  Lee    35
            (2 objects)

            """, "\(query)")
        let exported = try w.keelctl("export", "--socket", socket)
        #expect(exported.status == 0 && exported.stdout.split(separator: "\n").count == 6, "\(exported)")
        #expect(exported.stdout.contains(#""employees":["Employee/2","Employee/1"]"#), "the ordered list as written: \(exported.stdout)")

        let backup = try w.keelctl("backup", "--socket", socket, "daily/one")
        #expect(backup.status == 0, "\(backup)")
        #expect(backup.stdout.hasPrefix("backup written to \(keeld.folder)/backups/daily/one\n"), "\(backup)")
        let restore = try w.keelctl("restore", "--data", "restored", "\(keeld.folder)/backups/daily/one")
        #expect(restore.status == 0, "\(restore)")
        let offline = try w.keelctl("export", "--data", "restored")
        #expect(offline.stdout == exported.stdout, "the restored backup holds what keeld served")
    }

    @Test("an online import that fails part-way is undone; nobody on the socket and a folder keeld holds are refused")
    func failures() throws {
        let (keeld, w) = try Self.started()
        defer {
            keeld.cleanUp()
            w.cleanUp()
        }
        let socket = keeld.socketPath
        // Company names are unique: line 5 repeats line 1, and fails the third save.
        var lines: [String] = []
        for i in 0..<4 { lines.append(#"{"$entity":"Company","$id":"c\#(i)","name":"Company \#(i)"}"#) }
        lines.append(#"{"$entity":"Company","$id":"again","name":"Company 0"}"#)
        try w.write("companies.jsonl", lines.joined(separator: "\n") + "\n")
        let run = try w.keelctl("import", "--socket", socket, "--chunk", "2", "companies.jsonl")
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("(line 5)") || run.stderr.contains("(line 1)"), "\(run)")
        #expect(run.stderr.hasSuffix("(nothing was imported)\n"), "\(run)")
        let count = try w.keelctl("query", "Company", "--socket", socket, "--json")
        #expect(count.status == 0 && count.stdout.isEmpty, "no company left: \(count)")

        let nobody = try w.keelctl("stats", "--socket", w.file("none.sock"))
        #expect(nobody.status == 1 && nobody.stderr.hasPrefix("keelctl: cannot work through keeld at "), "\(nobody)")
        let held = try w.keelctl("stats", "--data", keeld.dataPath)
        #expect(held.status == 1, "\(held)")
        #expect(held.stderr == "keelctl: the data folder \(keeld.dataPath) is in use by another keeld (pid \(keeld.pid)): stop it, or work through it with --socket PATH\n", "\(held)")
    }

    @Test("verify through keeld names a fault keeld's store has (an index entry removed before it started); exit 1")
    func verifyFindsDamage() throws {
        let keeld = try Keeld()
        let w = try Workspace()
        defer {
            keeld.cleanUp()
            w.cleanUp()
        }
        try w.write("people.jsonl", """
            {"$entity":"Company","$id":"c","name":"Acme"}
            {"$entity":"Employee","$id":"e1","name":"Kim","salary":"1","company":"c"}
            {"$entity":"Employee","$id":"e2","name":"Lee","salary":"2","company":"c"}

            """)
        let imported = try w.keelctl("import", "--data", keeld.dataPath, "--model", Keeld.model, "people.jsonl")
        #expect(imported.status == 0, "\(imported)")
        let model = try ModelLoader.load(path: Keeld.model)
        let person = try #require(model.entity(named: "Person"))
        let index = try #require(person.indexes.first { $0.propertyNames == ["name"] })
        let store = try ObjectStore.open(directory: keeld.dataPath, model: model)
        try store.stores[0].write { txn in
            let tree = try #require(try txn.tree(TreeLayout.index(index)))
            var cursor = try tree.cursor()
            #expect(try cursor.seekFirst())
            #expect(try tree.delete(key: try cursor.key))
        }
        try store.close()
        try keeld.start()
        let run = try w.keelctl("verify", "--socket", keeld.socketPath)
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.hasPrefix("index (Default.keel, tree \(TreeLayout.index(index)), object Employee/"), "\(run)")
        #expect(run.stderr == "keelctl: verification found 1 fault\n", "\(run)")
    }

    @Test("300 faults: VERIFY's reply lists 100 and counts 300; keelctl verify online prints those and counts the rest, --json is bounded; offline prints each")
    func verifyManyFaults() throws {
        let keeld = try Keeld()
        let w = try Workspace()
        defer {
            keeld.cleanUp()
            w.cleanUp()
        }
        var lines = [#"{"$entity":"Company","$id":"c","name":"Acme"}"#]
        for i in 0..<300 { lines.append(#"{"$entity":"Employee","$id":"e\#(i)","name":"E\#(i)","salary":"1","company":"c"}"#) }
        try w.write("people.jsonl", lines.joined(separator: "\n") + "\n")
        let imported = try w.keelctl("import", "--data", keeld.dataPath, "--model", Keeld.model, "people.jsonl")
        #expect(imported.status == 0, "\(imported)")
        // Every entry of the name index removed (300 index faults), and a row of an entity the
        // model does not have (a stray key).
        let model = try ModelLoader.load(path: Keeld.model)
        let person = try #require(model.entity(named: "Person"))
        let index = try #require(person.indexes.first { $0.propertyNames == ["name"] })
        let store = try ObjectStore.open(directory: keeld.dataPath, model: model)
        try store.stores[0].write { txn in
            let tree = try #require(try txn.tree(TreeLayout.index(index)))
            var keys: [[UInt8]] = []
            var cursor = try tree.cursor()
            var valid = try cursor.seekFirst()
            while valid {
                keys.append(try cursor.key)
                valid = try cursor.next()
            }
            for key in keys { #expect(try tree.delete(key: key)) }
            try txn.openTree(TreeLayout(model: model).objects[person.id.index])
                .put(key: KeyEncoding.objectKey(ObjectID(entity: EntityID(999), number: 1)), value: [0])
        }
        try store.close()

        let offline = try w.keelctl("verify", "--data", keeld.dataPath, "--model", Keeld.model)
        #expect(offline.status == 1, "\(offline)")
        #expect(offline.stdout.split(separator: "\n").count == 301, "offline, every fault has its line")
        #expect(offline.stdout.contains("stray (Default.keel, tree obj/Person): obj/Person holds key 03e7:0000000000000001, object 1 of entity #999"), "\(offline.stdout.suffix(400))")
        #expect(offline.stderr == "keelctl: verification found 301 faults\n", "\(offline)")
        let offlineJSON = try w.keelctl("verify", "--data", keeld.dataPath, "--model", Keeld.model, "--json")
        #expect(offlineJSON.status == 1, "\(offlineJSON)")
        let parsed = try JSON.parse(offlineJSON.stdout)
        #expect(parsed["ok"] == false && parsed["faultCount"] == 301, "\(offlineJSON.stdout.prefix(300))")
        #expect(parsed["faults"]?.arrayValue?.count == 100)

        try keeld.start()
        let reply = try keeld.connect().request("v VERIFY")
        #expect(reply.finalLine.utf8.count < 64 * 1024, "\(reply.finalLine.utf8.count) bytes")
        guard case .error(_, let code, let message, let details) = reply.final else {
            Issue.record("VERIFY answered \(reply.finalLine.prefix(300))")
            return
        }
        #expect(code == .corrupt)
        #expect(details?["faults"]?.arrayValue?.count == 100)
        #expect(details?["faultCount"] == 301)
        #expect(details?["checked"]?.arrayValue?.isEmpty == false)
        #expect(message.hasPrefix("verification found 301 faults: index (Default.keel, tree \(TreeLayout.index(index)), object Employee/"), "\(message)")
        #expect(message.hasSuffix("; … and 298 more"), "\(message)")

        let online = try w.keelctl("verify", "--socket", keeld.socketPath)
        #expect(online.status == 1, "\(online)")
        let onlineLines = online.stdout.split(separator: "\n")
        #expect(onlineLines.count == 101, "the 100 faults of the reply and one line for the rest")
        #expect(onlineLines.last?.hasPrefix("… and 201 more faults (keeld's reply lists the first 100;") == true, "\(String(describing: onlineLines.last))")
        #expect(online.stderr == "keelctl: verification found 301 faults\n", "\(online)")
        let onlineJSON = try w.keelctl("verify", "--socket", keeld.socketPath, "--json")
        let parsedOnline = try JSON.parse(onlineJSON.stdout)
        #expect(parsedOnline["faultCount"] == 301 && parsedOnline["faults"]?.arrayValue?.count == 100, "\(onlineJSON.stdout.prefix(300))")
    }

    @Test("a user keeld does not allow is refused at connect: the client surfaces keeld's PERMISSION line (as root, with setpriv)")
    func refusedUser() throws {
        guard getuid() == 0, Keelctl.setpriv != nil else { return }  // cannot run as another user here
        let keeld = try Keeld()
        let w = try Workspace()
        defer {
            keeld.cleanUp()
            w.cleanUp()
        }
        // A socket everyone can reach, so that only the peer's uid (SO_PEERCRED) stands in the way.
        try FileManager.default.createDirectory(atPath: keeld.folder + "/run", withIntermediateDirectories: true)
        chmod(keeld.folder, 0o755)
        chmod(keeld.folder + "/run", 0o755)
        chmod(w.path, 0o755)
        try keeld.configure(["socketMode": "0666", "allowedUIDs": [65533]])
        try keeld.start()
        let refused = try Keelctl.run(["stats", "--socket", keeld.socketPath], in: w.path, as: 65534)
        #expect(refused.status == 1, "\(refused)")
        #expect(
            refused.stderr == "keelctl: cannot work through keeld at \(keeld.socketPath): uid 65534 may not connect to this daemon\n",
            "\(refused)")
        let allowed = try Keelctl.run(["stats", "--socket", keeld.socketPath], in: w.path, as: 65533)
        #expect(allowed.status == 0, "\(allowed)")
        #expect(allowed.stdout.contains("objects"), "\(allowed)")
    }
}
