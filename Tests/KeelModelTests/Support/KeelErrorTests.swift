import KeelStorage
import Testing

@testable import KeelModel

@Suite("KeelError read from the engine, and its description")
struct KeelErrorTests {
    struct Other: Error, Sendable, CustomStringConvertible {
        var description: String { "the other error" }
    }

    @Test("an engine error's page and store file are in the message (clients and keelctl print only it) and the details")
    func placesInTheMessage() {
        let error = KeelError(StorageError(.corrupt, "page checksum mismatch", page: PageNumber(73), path: "/srv/data/Feedback.keel"))
        #expect(error.code == .corrupt)
        #expect(error.message == "page checksum mismatch (page 73 of /srv/data/Feedback.keel)")
        #expect(error.details == ["page": 73, "file": "/srv/data/Feedback.keel"])
        // A message that names them already is left as it is.
        let named = KeelError(StorageError(.corrupt, "page 5 of /d/Default.keel is damaged", page: PageNumber(5), path: "/d/Default.keel"))
        #expect(named.message == "page 5 of /d/Default.keel is damaged")
        #expect(KeelError(StorageError(.io, "the store is closed")).message == "the store is closed")
        // Another page whose number starts with this one's is not this page.
        let other = StorageError(.corrupt, "page 73 points at a freed page", page: PageNumber(7))
        #expect(KeelError(other).message == "page 73 points at a freed page (page 7)")
        #expect(other.description == "CORRUPT: page 73 points at a freed page (page 7)")
        #expect(PageNumber(7).isNamed(in: "page 73 and page 7"))
        #expect(PageNumber(7).isNamed(in: "at page 7."))
        #expect(!PageNumber(7).isNamed(in: "page 70, page 71"))
    }

    @Test("printed, an engine error read as a KeelError says its message and places once, then the cause")
    func engineErrorOnce() {
        let storage = StorageError(.io, "fdatasync of the log failed", path: "/data/keel.log", errno: 5, cause: Other())
        let error = KeelError(storage)
        #expect(error.description == #"IO: fdatasync of the log failed (/data/keel.log) {"file":"/data/keel.log"} — caused by: the other error"#)
        #expect(storage.description == "IO: fdatasync of the log failed [/data/keel.log] — caused by: the other error")
    }

    @Test("a cause that says something else is given in full")
    func otherCause() {
        let storage = StorageError(.corrupt, "a bad checksum")
        #expect(
            KeelError(.corrupt, "the store cannot be opened", cause: storage).description
                == "CORRUPT: the store cannot be opened (cause: CORRUPT: a bad checksum)")
        #expect(KeelError(.io, "export failed", cause: Other()).description == "IO: export failed (cause: the other error)")
        #expect(KeelError(.notFound, "no such object", details: ["id": "Employee/9"]).description == #"NOT_FOUND: no such object {"id":"Employee/9"}"#)
    }
}
