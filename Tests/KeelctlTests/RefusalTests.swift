// keelctl's refusals and exit codes: a data folder held by keeld (its lock) is refused offline,
// naming the holder; a missing folder, a bad model, bad usage. Exit 0 success, 1 failure, 2
// bad usage (spec/cli.md).

import Foundation
import KeelModel
import Testing

@Suite("keelctl refusals and exit codes")
struct RefusalTests {
    @Test("a data folder held by a daemon is refused offline, naming its pid, for every store command")
    func heldFolder() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        try w.withStore { store in try LibraryModel.fill(store, authors: 1, booksEach: 1) }
        // The lock keeld takes, held here as keeld would (flock is per open file, so this
        // process holding it keeps the child out).
        let lock = try DataFolderLock.acquire(directory: w.file("data"), program: "keeld")
        defer { lock.release() }
        let pid = ProcessInfo.processInfo.processIdentifier
        for command in [["stats"], ["verify"], ["compact"], ["checkpoint"], ["export"], ["backup", "b"], ["query", "Book"], ["import", "x.json"]] {
            try w.write("x.json", "[]")
            let run = try w.keelctl(arguments: command + ["--data", "data"])
            #expect(run.status == 1, "\(command): \(run)")
            #expect(
                run.stderr == "keelctl: the data folder data is in use by another keeld (pid \(pid)): stop it, or work through it with --socket PATH\n",
                "\(command): \(run)")
        }
    }

    @Test("exit codes: 0 success, 1 failure with the reason on standard error, 2 bad usage")
    func exitCodes() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        #expect(try w.keelctl("--help").status == 0)
        #expect(try w.keelctl("model", "check", "model.json").status == 0)
        let missing = try w.keelctl("stats", "--data", "nowhere")
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stderr == "keelctl: no Keel data folder at nowhere (no .keel store files in it); give one with --data\n")
        try w.write("broken.json", #"{"name":"X","version":1,"entities":[{"name":"A","attributes":[{"name":"a","type":"text"}]}]}"#)
        let broken = try w.keelctl("model", "check", "broken.json")
        #expect(broken.status == 1 && broken.stderr.hasPrefix("keelctl: broken.json: "), "\(broken)")
        for usage in [["frobnicate"], ["stats", "--data", "d", "--socket", "s"], ["import"], ["stats", "--bogus"], ["query"],
                      ["import", "--chunk", "0", "f"], ["query", "Book", "--sort", "title:sideways"], ["stats", "--socket", "s", "--model", "m"]] {
            let run = try w.keelctl(arguments: usage)
            #expect(run.status == 2, "\(usage): \(run)")
            #expect(!run.stderr.isEmpty && run.stdout.isEmpty, "\(usage): \(run)")
        }
    }
}

@Suite("keelctl progress")
struct ProgressTests {
    @Test("long work draws progress on a terminal and erases it; on anything else standard error stays empty")
    func progressOnTerminal() throws {
        let w = try Workspace()
        defer { w.cleanUp() }
        try w.withStore { store in try LibraryModel.fill(store, authors: 5, booksEach: 5) }
        for command in [["verify"], ["compact"], ["backup", "b1"], ["export", "--out", "e.jsonl"]] {
            let terminal = try Keelctl.runOnTerminal(command + ["--data", "data"], in: w.path)
            #expect(terminal.status == 0, "\(command): \(terminal)")
            #expect(terminal.terminal.contains("] 100%"), "\(command) draws a bar: \(terminal.terminal.debugDescription)")
            #expect(terminal.terminal.hasSuffix("\r\u{1B}[K"), "\(command) erases it at the end: \(terminal.terminal.debugDescription)")
            let quiet = try w.keelctl(arguments: command.map { $0 == "b1" ? "b2" : $0 == "e.jsonl" ? "f.jsonl" : $0 } + ["--data", "data"])
            #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(command): \(quiet)")
        }
        for command in [["import", "--data", "imported", "--model", "model.json", "e.jsonl"], ["restore", "--data", "restored", "b1"]] {
            let terminal = try Keelctl.runOnTerminal(command, in: w.path)
            #expect(terminal.status == 0, "\(command): \(terminal)")
            #expect(terminal.terminal.contains("] 100%") && terminal.terminal.hasSuffix("\r\u{1B}[K"), "\(command): \(terminal.terminal.debugDescription)")
        }
    }
}
