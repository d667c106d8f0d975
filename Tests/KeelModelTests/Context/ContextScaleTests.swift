// A context holding many pending inserts: rows are arrays by field, insert values are read from
// the rows at save (not kept twice), to-many edits are sets. KEEL_CONTEXT_SCALE sets the number
// of employees (default 20,000; the figure is 100,000) and turns on the memory bound:
// `KEEL_CONTEXT_SCALE=100000 swift test --filter ContextScale`.

import Foundation
import Testing

@testable import KeelModel

@Suite("Context scale")
struct ContextScaleTests {
    static var scale: Int { ProcessInfo.processInfo.environment["KEEL_CONTEXT_SCALE"].flatMap(Int.init) ?? 20_000 }

    /// Resident and peak resident memory of this process, in bytes (Linux /proc).
    static func memory() -> (resident: Int, peak: Int) {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        func field(_ name: String) -> Int {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return 0 }
            return (Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0) * 1024
        }
        return (field("VmRSS:"), field("VmHWM:"))
    }

    @Test("many pending inserts linked to ten departments stay compact, read back, and build one change set")
    func manyInserts() throws {
        let n = Self.scale
        let fixture = ContextFixture()
        let context = fixture.context()
        var departments: [ObjectID] = []
        for i in 0..<10 { departments.append(try context.insert(entity: "Department", values: ["name": .string("D\(i)")])) }
        let texts = departments.map { JSON.string($0.text(in: fixture.model)) }
        let before = Self.memory()
        let clock = ContinuousClock()
        let start = clock.now
        for i in 0..<n {
            try context.insert(
                entity: "Employee",
                values: [
                    "name": .string("Employee \(i)"), "age": .int(Int64(20 + i % 40)), "salary": "4200.50",
                    "department": texts[i % 10],
                ])
        }
        let elapsed = clock.now - start
        let after = Self.memory()
        #expect(context.pendingObjectCount == n + 10)
        #expect(try context.count(entity: "Employee") == n)
        #expect(try context.get(departments[3])["employees"].map { if case .objects(let ids) = $0 { ids.count } else { -1 } } == n / 10)
        let changes = try context.overlay.changeSet()
        #expect(changes.changes.count == n + 10)
        let perObject = (after.resident - before.resident) / max(n, 1)
        // Measured on Linux x86_64 (debug build): see Docs/Contexts.md, "Memory". The resident
        // size is the whole process's, so other suites running in parallel inflate it: the bound
        // is checked only on an explicit run (KEEL_CONTEXT_SCALE set, this suite alone); the
        // benchmark measures it in a child process (keel-bench, "Context memory").
        if ProcessInfo.processInfo.environment["KEEL_CONTEXT_SCALE"] != nil {
            #expect(perObject < 1_500, "\(perObject) bytes per pending insert")
        }
        Attachment.record(
            "\(n) inserts in \(elapsed); resident +\(after.resident - before.resident) bytes (\(perObject) per object); peak \(after.peak) bytes; strides Value \(MemoryLayout<Value>.stride) PendingRow \(MemoryLayout<PendingRow>.stride) LogEntry \(MemoryLayout<LogEntry>.stride)",
            named: "context-scale.txt")
        try context.save()
        #expect(fixture.store.state.rows.count == n + 10)
    }
}
