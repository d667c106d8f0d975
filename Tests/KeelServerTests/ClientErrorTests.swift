// What a client is told about a failure leaves out where keeld keeps its files: the data and
// backup folders' paths, as configured and absolute, are taken out of an error's message and
// details (the store file's name within the data folder, the backup's within its folder, stay),
// and keeld's log keeps the whole path.

import Foundation
import KeelModel
import KeelTestSupport
import Testing

@testable import KeelServer

@Suite("Errors as clients see them")
struct ClientErrorTests {
    @Test("the data folder's path, relative or absolute, is taken out of message and details; other paths and texts stay")
    func folderLeftOut() throws {
        let cwd = FileManager.default.currentDirectoryPath
        let prefixes = ServerContext.folderPrefixes(".keel/data/")
        #expect(prefixes == ["\(cwd)/.keel/data/", ".keel/data/"])
        let error = KeelError(
            .corrupt,
            "CORRUPT: page 7 fails its checksum [\(cwd)/.keel/data/Default.keel] — caused by: the log .keel/data/Default.keel-log",
            details: ["faults": [["store": .string("\(cwd)/.keel/data/Feedback.keel"), "page": 3]], "backup": "/srv/backups/b1"])
        let facing = ServerContext.clientFacing(error, prefixes: prefixes)
        #expect(facing.code == .corrupt)
        #expect(facing.message == "CORRUPT: page 7 fails its checksum [Default.keel] — caused by: the log Default.keel-log")
        #expect(facing.details == ["faults": [["store": "Feedback.keel", "page": 3]], "backup": "/srv/backups/b1"])
        // An error without the folder in it is handed on as it is.
        let plain = KeelError(.notFound, "no object Employee/9", details: ["id": "Employee/9"])
        let same = ServerContext.clientFacing(plain, prefixes: prefixes)
        #expect(same.message == plain.message && same.details == plain.details)
        // An absolute folder is one prefix; "/" is never one; a folder inside another comes first.
        #expect(ServerContext.folderPrefixes("/srv/keel/data") == ["/srv/keel/data/"])
        #expect(ServerContext.folderPrefixes("/").isEmpty)
        #expect(ServerContext.folderPrefixes("/srv/keel", "/srv/keel/backups/") == ["/srv/keel/backups/", "/srv/keel/"])
        let backup = KeelError(.badRequest, "BACKUP: /srv/keel/backups/nightly/b1 already exists; a backup never overwrites")
        #expect(
            ServerContext.clientFacing(backup, prefixes: ServerContext.folderPrefixes("/srv/keel", "/srv/keel/backups")).message
                == "BACKUP: nightly/b1 already exists; a backup never overwrites")
    }

    @Test("end to end: a page damaged under a running keeld is ERR CORRUPT naming Default.keel, not the data folder; a BACKUP refusal names the backup, not its folder; the log has the whole path; keeld stays up")
    func endToEnd() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        // The smallest page cache (16 pages), so a fetch over the store reads pages from the file.
        try keeld.configure(["syncMode": "off", "pageCacheBytes": 65536])
        try keeld.start()
        let client = try keeld.connect()
        let name = String(repeating: "n", count: 100)
        let objects = (0..<3000).map { #"{"name":"\#(name) \#($0)"}"# }.joined(separator: ",")
        try client.ok(#"b BATCH.INSERT {"entity":"Company","objects":[\#(objects)]}"#)
        try client.ok("c CHECKPOINT")
        // Damage every page past the first few on disk: the checkpoint put them all there.
        let file = keeld.dataPath + "/Default.keel"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        #expect(size / 4096 > 40, "the store spans many more pages than the cache holds")
        let handle = try #require(FileHandle(forUpdatingAtPath: file))
        for page in 8..<(size / 4096) {
            try handle.seek(toOffset: UInt64(page * 4096 + 300))
            handle.write(Data(repeating: 0xA5, count: 16))
        }
        try handle.close()
        let fetch = try client.request(#"f FETCH {"entity":"Company","predicate":"name ENDSWITH %@","args":["x"]}"#)
        #expect(fetch.errorCode == "CORRUPT", "\(fetch.finalLine)")
        #expect(!fetch.finalLine.contains(keeld.dataPath) && !fetch.finalLine.contains(keeld.folder), "\(fetch.finalLine)")
        #expect(fetch.errorMessage?.contains("of Default.keel)") == true, "\(fetch.finalLine)")
        if case .error(_, _, _, let details) = fetch.final { #expect(details?["file"] == "Default.keel", "\(fetch.finalLine)") }
        // A backup that exists already: named within the backup folder.
        try FileManager.default.createDirectory(atPath: keeld.folder + "/backups/nightly", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: keeld.folder + "/backups/nightly/b1", contents: Data()))
        let backup = try client.request(#"k BACKUP {"path":"nightly/b1"}"#)
        #expect(backup.errorCode == "BAD_REQUEST")
        #expect(backup.errorMessage == "BACKUP: nightly/b1 already exists; a backup never overwrites", "\(backup.finalLine)")
        // keeld is up, and its log names the file in full.
        #expect(try client.request("p PING").isOK)
        #expect(keeld.stderr.contains(file), "\(keeld.stderr.suffix(2000))")
    }
}
