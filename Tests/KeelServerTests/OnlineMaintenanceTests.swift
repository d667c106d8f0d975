// COMPACT and BACKUP online: while other connections save in a loop (LoadClients), against a
// real keeld. Every save acknowledged is present after the compactions; the backup file restores
// into a data folder that opens with a consistent state (each save whole, every save acknowledged before the
// BACKUP was sent present) and verifies clean.

import Foundation
import KeelModel
import KeelTestSupport
import Testing

@Suite("Online maintenance")
struct OnlineMaintenanceTests {
    @Test("COMPACT while other connections save in a loop: saves wait and go on, every acknowledged save is there afterwards")
    func compactUnderLoad() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let admin = try keeld.connect()
        let record = LoadRecord()
        let group = LoadClients.start(socket: keeld.socketPath, writers: 2, prefix: "c", record: record, deadline: Date() + 4)
        var compactions = 0
        var reads = 0
        let reader = try keeld.connect()
        let end = Date() + 3
        while Date() < end {
            let reply = try admin.request("co\(compactions) COMPACT")
            #expect(reply.isOK, "\(reply.finalLine)")
            compactions += 1
            // Reads go on between (and during) compactions.
            let read = try reader.request(#"r\#(reads) COUNT {"entity":"Company"}"#)
            #expect(read.isOK, "\(read.finalLine)")
            reads += 1
        }
        group.wait()
        #expect(record.violations.isEmpty, "\(record.violations)")
        #expect(compactions >= 2 && record.acknowledged.count > 0, "\(compactions) compactions, \(record.acknowledged.count) saves")
        let stored = try LoadClients.storedNames(socket: keeld.socketPath)
        let missing = Set(record.acknowledged).subtracting(stored.companies)
        #expect(missing.isEmpty, "acknowledged saves missing after COMPACT: \(missing.sorted().prefix(5))")
        for name in record.acknowledged {
            #expect(stored.departments["dept-" + name] == [name], "\(name)'s department")
        }
        #expect(try admin.ok("v VERIFY")?["ok"] == true)

        // A context whose snapshot COMPACT cut off: without pending changes it reads on from a
        // new snapshot; with pending changes it is told to REFRESH, and keeps them.
        let pending = try keeld.connect()
        try pending.ok(#"p1 INSERT {"entity":"Company","values":{"name":"pending"}}"#)
        let seen = try #require(try pending.ok(#"p2 COUNT {"entity":"Company"}"#)?["count"]?.intValue)
        try reader.ok(#"r COUNT {"entity":"Company"}"#)
        try admin.ok(#"n BATCH.INSERT {"entity":"Company","objects":[{"name":"newer"}]}"#)
        try admin.ok("co COMPACT")
        // Whether a snapshot is cut off depends on what the engine still had to read from the log
        // (a page already cached reads on): either the old view or a renewed one, never an error.
        let renewed = try #require(try reader.ok(#"r2 COUNT {"entity":"Company","predicate":"name == 'newer'"}"#)?["count"])
        #expect(renewed == 0 || renewed == 1)
        let stale = try pending.request(#"p3 COUNT {"entity":"Company"}"#)
        #expect(stale.isOK || (stale.errorCode == "BUSY" && stale.errorMessage?.contains("REFRESH") == true), "\(stale.finalLine)")
        try pending.ok("p4 REFRESH")
        #expect(try pending.ok(#"p5 COUNT {"entity":"Company"}"#)?["count"]?.intValue == seen + 1)
        // And across a restart.
        #expect(keeld.stop() == 0)
        try keeld.start()
        #expect(Set(record.acknowledged).isSubset(of: try LoadClients.storedNames(socket: keeld.socketPath).companies))
    }

    @Test("BACKUP while saves continue: the copy opens with a consistent state and verifies")
    func backupUnderLoad() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let admin = try keeld.connect()
        // Objects in both store files.
        try admin.ok(#"f BATCH.INSERT {"entity":"Feedback","objects":[{"bookUUID":"00000000-0000-0000-0000-000000000001","rating":4}]}"#)
        let record = LoadRecord()
        let group = LoadClients.start(socket: keeld.socketPath, writers: 2, prefix: "b", record: record, deadline: Date() + 3)
        Thread.sleep(forTimeInterval: 1)
        let acknowledgedBefore = record.acknowledged
        let reply = try admin.request(#"bk BACKUP {"path":"under-load"}"#)
        #expect(reply.isOK && (reply.payload?["bytes"]?.intValue ?? 0) > 0, "\(reply.finalLine)")
        group.wait()
        #expect(record.violations.isEmpty, "\(record.violations)")

        // The backup file restores (every block checked, every check run) into a data folder.
        let model = try ModelLoader.load(path: Keeld.model)
        let restored = keeld.folder + "/restored"
        _ = try ObjectStore.restore(backup: keeld.folder + "/backups/under-load", into: restored, model: model)
        let copy = try ObjectStore.open(directory: restored, model: model)
        defer { try? copy.close() }
        #expect(try copy.verifyAll().isEmpty)
        let snapshot = try copy.snapshot()
        defer { snapshot.close() }
        var companies: [String: ObjectID] = [:]
        var departments: [String: [ObjectID]] = [:]
        let company = try #require(model.entity(named: "Company"))
        let department = try #require(model.entity(named: "Department"))
        let feedback = try #require(model.entity(named: "Feedback"))
        let companyName = try #require(company.field(named: "name"))
        let departmentName = try #require(department.field(named: "name"))
        let departmentCompanies = try #require(department.field(named: "companies"))
        try snapshot.scan(company.id, includeSubentities: false) { (object) throws(KeelError) -> Bool in
            if case .string(let name) = object.values[companyName] { companies[name] = object.id }
            return true
        }
        var departmentIDs: [String: ObjectID] = [:]
        try snapshot.scan(department.id, includeSubentities: false) { (object) throws(KeelError) -> Bool in
            if case .string(let name) = object.values[departmentName] { departmentIDs[name] = object.id }
            return true
        }
        for (name, id) in departmentIDs {
            departments[name] = try snapshot.members(of: id, field: departmentCompanies)
        }
        #expect(try snapshot.count(feedback.id, includeSubentities: false) == 1)
        #expect(Set(acknowledgedBefore).isSubset(of: Set(companies.keys)), "every save acknowledged before BACKUP is in it")
        #expect(companies.count == departments.count, "each save is in the backup whole or not at all")
        for (name, id) in companies {
            #expect(departments["dept-" + name] == [id], "\(name)'s department in the backup")
        }
        #expect(try snapshot.lastSaveID().rawValue >= UInt64(acknowledgedBefore.count))
    }
}
