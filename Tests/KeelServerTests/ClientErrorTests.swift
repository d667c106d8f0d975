// What a client is told about a failure leaves out where keeld keeps its files: the data folder's
// path, as configured and absolute, is taken out of an error's message and details (the store
// file's name within it stays), and keeld's log keeps the whole path.

import Foundation
import KeelModel
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
        // An absolute folder is one prefix; "/" is never one.
        #expect(ServerContext.folderPrefixes("/srv/keel/data") == ["/srv/keel/data/"])
        #expect(ServerContext.folderPrefixes("/").isEmpty)
    }
}
