import KeelStorage
import Testing

@testable import KeelModel

@Suite("KeelError's description")
struct KeelErrorTests {
    struct Other: Error, Sendable, CustomStringConvertible {
        var description: String { "the other error" }
    }

    @Test("an engine error read as a KeelError says its message once, then where it happened")
    func engineErrorOnce() {
        let storage = StorageError(.io, "fdatasync of the log failed", path: "/data/keel.log", errno: 5, cause: Other())
        let error = KeelError(storage)
        #expect(error.code == .io)
        #expect(error.description == "IO: fdatasync of the log failed [/data/keel.log] — caused by: the other error")
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
