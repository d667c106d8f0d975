// ProblemReport, the one bound on errors that list problems (Docs/Protocol.md, "Errors"): the
// first 100 entries in details with the total count, a message of the first problems that fit
// in a few hundred bytes and "… and N more", nothing built for the problems past both.

import Foundation
import KeelStorage
import Testing

@testable import KeelModel

@Suite("Problem reports")
struct ProblemReportTests {
    @Test("a few problems: all listed, in the message and in details, with the count")
    func small() {
        var report = ProblemReport()
        report.add("a is wrong")
        report.add("b is wrong")
        #expect(report.listing() == "a is wrong; b is wrong")
        #expect(report.details() == ["problems": ["a is wrong", "b is wrong"], "problemCount": 2])
        #expect(report.details("failures", countKey: "failureCount")["failureCount"] == 2)
    }

    @Test("a million problems: 100 entries, the total, a short message; past the caps nothing is built")
    func many() {
        var report = ProblemReport()
        var built = 0
        for i in 0..<1_000_000 {
            report.add {
                built += 1
                return (.string("problem \(i)"), "problem \(i)")
            }
        }
        #expect(report.count == 1_000_000 && report.problemCount == 1_000_000)
        #expect(report.entries.count == ProblemReport.detailLimit)
        #expect(report.entries.last == "problem 99")
        #expect(built == ProblemReport.detailLimit)
        let message = report.listing()
        #expect(message.hasPrefix("problem 0; problem 1; "))
        #expect(message.hasSuffix("; … and 999990 more"), "\(message)")
        #expect(message.utf8.count <= ProblemReport.messageBudget + 40)
        #expect(report.listing(limit: 3) == "problem 0; problem 1; problem 2; … and 999997 more")
    }

    @Test("a long problem is cut in the message; problems that do not fit close the listing")
    func budget() {
        var report = ProblemReport()
        report.add(String(repeating: "é", count: 10_000))
        report.add("short")
        let message = report.listing()
        #expect(message.utf8.count <= ProblemReport.messageBudget + 40, "\(message.utf8.count)")
        #expect(message.hasSuffix("…; … and 1 more"), "\(message.suffix(30))")
        #expect(report.entries.count == 2)
        #expect(ProblemReport.cut("abcdef", to: 6) == "abcdef")
        #expect(ProblemReport.cut("abcdefgh", to: 6) == "abc…")
    }

    @Test("entries of one problem (a unique clash's holders) count once in the message")
    func sameProblem() {
        var report = ProblemReport()
        for i in 0..<500 { report.add(sameProblem: i > 0) { (.int(Int64(i)), "the clash") } }
        report.add("another")
        #expect(report.count == 501 && report.problemCount == 2)
        #expect(report.listing() == "the clash; another")
        #expect(report.entries.count == ProblemReport.detailLimit)
    }

    @Test("a batch whose 5,000 objects share a unique key: one problem, 5,000 failures, 100 in details, a short message")
    func uniqueClashOfMany() throws {
        let f = try StoreFixture()
        let employee = f.model.id("Employee")
        let objects = Array(repeating: f.values("Employee", ["name": .string("E"), "email": .string("a@b.com")]), count: 5_000)
        let error = keelError { _ = try f.store.batchInsert(entity: employee, objects: objects) }
        #expect(error?.code == .constraint)
        #expect(error?.details?["failures"]?.arrayValue?.count == ProblemReport.detailLimit)
        #expect(error?.details?["failureCount"]?.intValue == 5_000)
        let message = error?.message ?? ""
        #expect(message.hasPrefix("the save fails validation: Employee/"), "\(message)")
        #expect(message.hasSuffix(" and 4990 more share the unique key (email) of Employee"), "\(message)")
        #expect(message.utf8.count < 400, "\(message.utf8.count) bytes")
        // Invalid objects besides: every kind counted, VALIDATION for the mix.
        let mixed = objects + Array(repeating: f.values("Employee", ["rank": .int(99)]), count: 3_000)
        let both = keelError { _ = try f.store.batchInsert(entity: employee, objects: mixed) }
        #expect(both?.code == .validation)
        #expect(both?.details?["failureCount"]?.intValue == 11_000)
        #expect(both?.message.hasPrefix("the save fails validation (6001 problems): ") == true, "\(both?.message ?? "")")
        #expect((both?.message.utf8.count ?? .max) < 600)
    }
}
