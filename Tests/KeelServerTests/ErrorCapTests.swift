// Errors that list problems stay small whatever the count (Docs/Protocol.md, "Errors"): a small
// request of 10,000 unknown keys, or a batch of 10,000 invalid objects, is refused with the first
// 100 problems in details, the total count, and a short message — not with a reply line that
// grows with the problems (QA found 40 MB for a 1.1 MB request, 558 MB for 16.7 MB).

import Foundation
import KeelModel
import KeelProtocol
import KeelTestSupport
import Testing

@Suite("Error caps")
struct ErrorCapTests {
    static let lineLimit = 64 * 1024

    @Test("10,000 unknown keys: BAD_REQUEST under 64 KiB with 100 problems, problemCount 10,000 and the accepted keys named once")
    func unknownKeys() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        let keys = (0..<10_000).map { "\"k\($0)\":1" }.joined(separator: ",")
        let reply = try c.fails("t FETCH {\(keys)}", "BAD_REQUEST")
        #expect(reply.finalLine.utf8.count < Self.lineLimit, "\(reply.finalLine.utf8.count) bytes")
        guard case .error(_, _, let message, let details) = reply.final else { return }
        #expect(details?["problems"]?.arrayValue?.count == ProblemReport.detailLimit)
        // 10,000 unknown keys and the missing "entity".
        #expect(details?["problemCount"]?.intValue == 10_001, "\(String(describing: details))")
        #expect(message.utf8.count <= 600, "\(message)")
        #expect(message.hasPrefix(#"FETCH: "k0" is not a key of FETCH (it takes "entity", "#), "\(message)")
        #expect(message.hasSuffix("more"), "\(message)")
        #expect(reply.finalLine.components(separatedBy: "it takes").count == 3, "the accepted keys once in the message, once in details")
        // A small case keeps its shape.
        let one = try c.fails(#"u FETCH {"entity":"Company","colour":1}"#, "BAD_REQUEST")
        guard case .error(_, _, let oneMessage, let oneDetails) = one.final else { return }
        #expect(oneMessage == #"FETCH: "colour" is not a key of FETCH (it takes "entity", "predicate", "args", "vars", "sort", "limit", "offset", "includeSubentities", "result", "properties", "groupBy", "having", "havingArgs", "distinct", "include", "context")"#)
        #expect(oneDetails?["problems"]?.arrayValue?.compactMap(\.stringValue) == [String(oneMessage.dropFirst("FETCH: ".count))])
        #expect(oneDetails?["problemCount"]?.intValue == 1)
        #expect(try c.request("p PING").isOK)
    }

    @Test("BATCH.INSERT of 10,000 invalid objects: VALIDATION under 64 KiB with 100 failures and failureCount 20,000; nothing written")
    func invalidBatch() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        // Each empty Department lacks its required name and its companies (minCount 1).
        let objects = Array(repeating: "{}", count: 10_000).joined(separator: ",")
        let reply = try c.fails(#"bi BATCH.INSERT {"entity":"Department","objects":[\#(objects)]}"#, "VALIDATION")
        #expect(reply.finalLine.utf8.count < Self.lineLimit, "\(reply.finalLine.utf8.count) bytes")
        guard case .error(_, _, let message, let details) = reply.final else { return }
        let failures = details?["failures"]?.arrayValue ?? []
        #expect(failures.count == ProblemReport.detailLimit)
        #expect(details?["failureCount"]?.intValue == 20_000, "\(String(describing: details))")
        #expect(failures.first?["rule"]?.stringValue != nil && failures.first?["object"]?.stringValue != nil)
        #expect(message.hasPrefix("the save fails validation (20000 problems): "), "\(message)")
        #expect(message.hasSuffix("… and 19997 more"), "\(message)")
        #expect(message.utf8.count <= 600, "\(message)")
        #expect(try c.ok(#"n COUNT {"entity":"Department"}"#) == ["count": 0])
        // A small case: every failure listed, the count beside them.
        let small = try c.fails(#"s BATCH.INSERT {"entity":"Department","objects":[{"name":"A"}]}"#, "VALIDATION")
        guard case .error(_, _, let smallMessage, let smallDetails) = small.final else { return }
        #expect(smallMessage.hasPrefix("the save fails validation: Department/"), "\(smallMessage)")
        #expect(smallMessage.hasSuffix(".companies: 0 objects, at least 1 required"), "\(smallMessage)")
        #expect(smallDetails?["failures"]?.arrayValue?.count == 1)
        #expect(smallDetails?["failureCount"]?.intValue == 1)
        #expect(try c.request("p PING").isOK)
    }

    @Test("SAVE meeting 10,000 objects changed since its snapshot: CONFLICT under 64 KiB with 100 conflicts and conflictCount 10,000; nothing written")
    func manyConflicts() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        let other = try keeld.connect()
        let company = try #require(try c.ok(#"co BATCH.INSERT {"entity":"Company","objects":[{"name":"Acme"}]}"#)?["first"]?.stringValue)
        let employees = Array(repeating: #"{"name":"E","salary":"1","company":"\#(company)"}"#, count: 10_000).joined(separator: ",")
        _ = try c.ok(#"e BATCH.INSERT {"entity":"Employee","objects":[\#(employees)]}"#)
        // The context deletes the company and, by cascade, its 10,000 employees; another
        // connection changes every employee meanwhile.
        _ = try c.ok(#"d DELETE {"$id":"\#(company)"}"#)
        #expect(try other.ok(#"u BATCH.UPDATE {"entity":"Employee","values":{"age":30}}"#)?["updated"] == 10_000)
        let reply = try c.fails("s SAVE", "CONFLICT")
        #expect(reply.finalLine.utf8.count < Self.lineLimit, "\(reply.finalLine.utf8.count) bytes")
        guard case .error(_, _, let message, let details) = reply.final else { return }
        let conflicts = details?["conflicts"]?.arrayValue ?? []
        #expect(conflicts.count == ProblemReport.detailLimit)
        #expect(details?["conflictCount"]?.intValue == 10_000, "\(String(describing: details?["conflictCount"]))")
        #expect(conflicts.first?["object"]?.stringValue?.hasPrefix("Employee/") == true)
        #expect(conflicts.first?["snapshotVersion"]?.intValue != nil && conflicts.first?["storeVersion"]?.intValue != nil)
        #expect(message.hasPrefix("10000 objects changed since the snapshot: Employee/"), "\(message)")
        #expect(message.hasSuffix(", … and 9995 more"), "\(message)")
        #expect(message.utf8.count <= 600, "\(message)")
        _ = try c.ok("r ROLLBACK")
        #expect(try c.ok(#"n COUNT {"entity":"Employee"}"#) == ["count": 10_000], "nothing of the failed save was written")
        #expect(try c.request("p PING").isOK)
    }
}
