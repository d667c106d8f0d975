// keel-example runs its flows start to end (the binary, .build/debug/keel-example), against a live
// keeld and embedded, and runs again on the same store (it removes what its last run left first).

import Foundation
import KeelClient
import KeelTestSupport
import Testing

@Suite("keel-example")
struct ExampleTests {
    static let binary = TestPaths.root + "/.build/debug/keel-example"

    /// Runs keel-example in the repository root; its exit status and output (both streams).
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw KeelError(.io, "no keel-example at \(binary): swift build --build-tests")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: TestPaths.root)
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// What every run prints, whichever backend.
    static func expectFlows(_ output: String) {
        for line in [
            "Inserted 19 objects and saved them in one transaction",
            "  Development      4  Kim Minji, Lee Junho, Jung Hayoon, Lim Nari",
            "  (no department)  1",
            "  Lee Junho      41  6100",
            "Where employees over 30 work (only department.name, distinct): Development, Finance, Management, Sales",
            "  Development      4  19200.5   oldest 41",
            "  Sales            2  10150.75  oldest 38",
            "  (no department)  1  3100      oldest 23",
            "Departments with two or more employees: Development, Sales",
            "Employees living in Seoul: 3",
            "How `name BEGINSWITH \"K\"` runs: INDEX Person.name",
            "Batch update, everyone 35 or older is a manager: 4 updated (Choi Dohyun, Kang Jiwoo, Lee Junho, Yoon Seojun)",
            "Moved Lim Nari and Jung Hayoon.",
            "Live results, Design's employees: 1 → 3 (in: Jung Hayoon, Lim Nari)",
            "  Design           3  Park Seoyeon, Lim Nari, Jung Hayoon",
            "nullify:  deleting Choi Dohyun takes him out of Management: 1 employee(s) before, 0 after.",
            "deny:     deleting Sales, which has 2 employees, is refused at save: DENY",
            "  ★★★★★  Exactly what I needed  (Feedback store)",
            "  ★★☆☆☆  Too short  (Feedback store)",
            "Done.",
        ] {
            #expect(output.contains(line), "missing: \(line)")
        }
        #expect(output.range(of: #"cascade:  deleting Kang Jiwoo deletes Employee/\d+, Computer/\d+, Computer/\d+\."#, options: .regularExpression) != nil)
        #expect(output.range(of: #"computers = \["Computer/\d+"\]"#, options: .regularExpression) != nil)
        #expect(output.range(of: #"Change event: transaction \d+ updated 2 employees"#, options: .regularExpression) != nil)
    }

    @Test("against keeld: the flows run, twice on the same daemon, and leave its store consistent")
    func daemon() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let first = try Self.run(["--socket", keeld.socketPath])
        #expect(first.status == 0, "\(first.output)")
        #expect(first.output.hasPrefix("Connecting to keeld at \(keeld.socketPath)\n"))
        Self.expectFlows(first.output)
        let second = try Self.run(["--socket", keeld.socketPath])
        #expect(second.status == 0, "\(second.output)")
        Self.expectFlows(second.output)
        #expect(second.output.contains("Removed 22 objects an earlier run left."))
        #expect(keeld.stop() == 0)
        let opened = try DataFolder.open(directory: keeld.dataPath, modelPath: TestPaths.model)
        #expect(try opened.store.verify().isEmpty)
        try opened.close()
    }

    @Test("no keeld at the socket: a clear error with a hint, exit 1")
    func noDaemon() throws {
        let result = try Self.run(["--socket", "/tmp/keel-example-no-such.sock"])
        #expect(result.status != 0)
        #expect(result.status == 1)
        #expect(result.output.contains("cannot open the store:"), "\(result.output)")
        #expect(result.output.contains("is keeld running?"), "\(result.output)")
    }

    @Test("embedded: the flows run, twice on the same data folder, and leave it consistent")
    func embedded() throws {
        let folder = try TestPaths.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try Self.run(["--embedded", folder + "/data"])
        #expect(first.status == 0, "\(first.output)")
        Self.expectFlows(first.output)
        #expect(!first.output.contains("an earlier run left"))
        let second = try Self.run(["--embedded", folder + "/data"])
        #expect(second.status == 0, "\(second.output)")
        Self.expectFlows(second.output)
        #expect(second.output.contains("Removed 22 objects an earlier run left."))
        let opened = try DataFolder.open(directory: folder + "/data", modelPath: TestPaths.model)
        #expect(try opened.store.verify().isEmpty)
        try opened.close()
    }

    @Test("a data file that cannot be read: a clear error, exit 1")
    func badDataFile() throws {
        let result = try Self.run(["--embedded", "/tmp/keel-example-never", "--data-file", "/no/such/file.json"])
        #expect(result.status == 1)
        #expect(result.output.contains("cannot read the data file /no/such/file.json"))
    }
}
