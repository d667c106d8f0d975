// Issue 3's workloads at a size set by KEEL_PERF_OBJECTS (default 100k; the figure is
// 1M): batch insert of Employees with their department, the same by saves of 10k, fetch by ID,
// cascade delete of a department with 10k employees. Gated by KEEL_PERF=1 (real files under
// /tmp, sync full); prints rates. Meaningful in release builds only.

import Foundation
import KeelStorage
import Testing

@testable import KeelModel

@Suite("Object store performance", .enabled(if: ProcessInfo.processInfo.environment["KEEL_PERF"] == "1"))
struct ObjectStorePerfTests {
    @Test("batch insert, context-style saves, fetch by ID, cascade delete")
    func workloads() throws {
        let n = Int(ProcessInfo.processInfo.environment["KEEL_PERF_OBJECTS"] ?? "") ?? 100_000
        let dir = "/tmp/keel-perf-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let model = TestModels.company()
        let store = try ObjectStore.open(directory: dir, model: model)
        defer { try? store.close() }
        let employee = model.id("Employee")
        let fName = model.field("Employee", "name"), fSalary = model.field("Employee", "salary")
        let fDept = model.field("Employee", "department"), fAge = model.field("Employee", "age")
        var departments: [ObjectID] = []
        for i in 0..<100 {
            let d = try store.newObjectID(for: model.id("Department"))
            _ = try store.save(ChangeSet(changes: [.insert(d, values: [model.field("Department", "name"): .string("D\(i)")])]))
            departments.append(d)
        }
        let clock = ContinuousClock()
        var ids: [ObjectID] = []
        let batch = try clock.measure {
            for start in stride(from: 0, to: n, by: 10_000) {
                let rows = (start..<min(n, start + 10_000)).map { i -> [Int: Value] in
                    [fName: .string("Employee \(i)"), fSalary: .decimal(Decimal(1000 + i % 5000)), fAge: .int(Int64(20 + i % 40)),
                     fDept: .object(departments[i % departments.count])]
                }
                ids += try store.batchInsert(entity: employee, objects: rows).inserted
            }
        }
        let saves = try clock.measure {
            for start in stride(from: 0, to: n, by: 10_000) {
                var changes: [Change] = []
                for i in start..<min(n, start + 10_000) {
                    let id = try store.newObjectID(for: employee)
                    changes.append(.insert(id, values: [fName: .string("Saved \(i)"), fSalary: .decimal(Decimal(i % 7000)),
                                                        fDept: .object(departments[i % departments.count])]))
                }
                _ = try store.save(ChangeSet(changes: changes))
            }
        }
        let snapshot = try store.snapshot()
        var random = SeededRandom(seed: 1)
        let probes = (0..<min(100_000, ids.count)).map { _ in ids[Int(random.next() % UInt64(ids.count))] }
        var found = 0
        let fetch = try clock.measure {
            for id in probes where try snapshot.object(id) != nil { found += 1 }
        }
        snapshot.close()
        #expect(found == probes.count)
        let big = try store.newObjectID(for: model.id("Department"))
        _ = try store.save(ChangeSet(changes: [.insert(big, values: [model.field("Department", "name"): .string("Big")])]))
        _ = try store.batchInsert(entity: employee, objects: (0..<10_000).map { i in [fName: .string("B\(i)"), fDept: .object(big)] })
        let before = try ObjectSnapshot.currentRow(store, big)
        let cascade = try clock.measure {
            _ = try store.save(ChangeSet(changes: [.delete(big)], originals: [big: before]))
        }
        func rate(_ count: Int, _ d: Duration) -> String {
            let s = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
            return String(format: "%.0f/s (%.2f s)", Double(count) / s, s)
        }
        print("perf: batch insert \(n): \(rate(n, batch)); saves of 10k \(n): \(rate(n, saves)); fetch by ID \(probes.count): \(rate(probes.count, fetch)); cascade 10k: \(cascade)")
    }
}

extension ObjectSnapshot {
    static func currentRow(_ store: ObjectStore, _ id: ObjectID) throws -> StoredObject {
        let s = try store.snapshot()
        defer { s.close() }
        guard let o = try s.object(id) else { throw KeelError(.notFound, "no \(id)") }
        return o
    }
}
