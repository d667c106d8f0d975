// Saves from several threads at once, with readers: every snapshot sees each multi-store save
// whole (the snapshot gate), and no save is lost.

import Dispatch
import Foundation
import KeelStorage
import Synchronization
import Testing

@testable import KeelModel

@Suite("Concurrent saves")
struct ConcurrentSaveTests {
    @Test("two writers of two-store saves and a reader: every snapshot sees as many rooms (Sites) as desks (Default)")
    func gate() throws {
        let model = TestModels.company(twoStores: true)
        // Slow syncs (3 ms) widen the moment between a store's commit and its publication at sync,
        // so a gate released too early shows up as torn snapshots every run, not once in a while.
        let f = try StoreFixture(model: model, fs: FaultInjectingFileSystem(wrapping: InMemoryFileSystem(), syncLatency: .milliseconds(3)))
        let store = f.store
        let done = Atomic<Int>(0)
        let torn = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            do {
                if worker == 2 {
                    while done.load(ordering: .acquiring) < 2 {
                        let s = try store.snapshot()
                        let rooms = try s.count(model.id("Room"), includeSubentities: true)
                        let desks = try s.count(model.id("Desk"), includeSubentities: true)
                        s.close()
                        if rooms != desks { torn.add(1, ordering: .relaxed) }
                    }
                    return
                }
                defer { done.add(1, ordering: .releasing) }
                for i in 0..<40 {
                    let room = try store.newObjectID(for: model.id("Room"))
                    let desk = try store.newObjectID(for: model.id("Desk"))
                    _ = try store.save(ChangeSet(changes: [
                        .insert(room, values: [model.field("Room", "number"): .int(Int64(i))]),
                        .insert(desk, values: [model.field("Desk", "number"): .int(Int64(i))]),
                    ]))
                }
            } catch {
                failures.withLock { $0.append("worker \(worker): \(error)") }
                done.add(1, ordering: .releasing)
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(torn.load(ordering: .relaxed) == 0)
        let s = try store.snapshot()
        defer { s.close() }
        #expect(try s.count(model.id("Room"), includeSubentities: true) == 80)
        #expect(store.lastSaveID == SaveID(rawValue: 80))
        #expect(try store.history(after: SaveID(rawValue: 0)).count == 80)
        try f.expectConsistent()
    }
}
