// A save that touches one store keeps its history record and the save counter in that store
// (its home, Decision 0004): it commits there alone and shares fsyncs with the saves of the same
// store, while save ids stay unique across the folder, history reads merge every store's
// records in save order, observers hear every save once it and every save before it are
// durable, and a power cut keeps every acknowledged save and never lets an id be handed out
// twice. Format 1 folders (history in the primary only) open and are marked format 2.

import Dispatch
import Foundation
import KeelStorage
import Testing

@testable import KeelModel

@Suite("Saves in their home store")
struct HomeStoreSaveTests {
    static let sites = 1  // the Sites configuration's store

    static func insertBuilding(_ store: ObjectStore, _ model: Model, _ name: String) throws -> SaveResult {
        let id = try store.newObjectID(for: model.id("Building"))
        return try store.save(ChangeSet(changes: [.insert(id, values: [model.field("Building", "name"): .string(name)])]))
    }

    static func insertDesk(_ store: ObjectStore, _ model: Model, _ number: Int64) throws -> SaveResult {
        let id = try store.newObjectID(for: model.id("Desk"))
        return try store.save(ChangeSet(changes: [.insert(id, values: [model.field("Desk", "number"): .int(number)])]))
    }

    static func historyKeys(_ store: Store) throws -> [UInt64] {
        try store.read { txn in
            guard let tree = try txn.tree(TreeLayout.history) else { return [] }
            var keys: [UInt64] = []
            var cursor = try tree.cursor()
            var valid = try cursor.seekFirst()
            while valid {
                keys.append(KeyEncoding.readU64(try cursor.key) ?? 0)
                valid = try cursor.next()
            }
            return keys
        }
    }

    @Test("a save of a second store's objects commits in that store only, with its history record and the save counter")
    func secondaryOnly() throws {
        let model = TestModels.company(twoStores: true)
        var f = try StoreFixture(model: model)
        _ = try Self.insertDesk(f.store, model, 1)
        _ = try f.store.newObjectID(for: model.id("Building"))  // the ID block's reservation, before counting
        let primaryBefore = try f.store.stores[0].statistics().lastTransaction
        let sitesBefore = try f.store.stores[Self.sites].statistics().lastTransaction
        let result = try Self.insertBuilding(f.store, model, "HQ")
        #expect(result.saveID == SaveID(rawValue: 2))
        #expect(try f.store.stores[0].statistics().lastTransaction == primaryBefore, "the primary store must not commit")
        #expect(try f.store.stores[Self.sites].statistics().lastTransaction == sitesBefore + 1)
        #expect(try Self.historyKeys(f.store.stores[0]) == [1])
        #expect(try Self.historyKeys(f.store.stores[Self.sites]) == [2])
        #expect(try f.store.history(after: SaveID(rawValue: 0)).map(\.saveID.rawValue) == [1, 2])
        #expect(try f.store.history(after: SaveID(rawValue: 1)).first?.inserted == result.inserted)
        let snapshot = try f.store.snapshot()
        #expect(try snapshot.lastSaveID() == SaveID(rawValue: 2))
        snapshot.close()
        try f.reopen()
        #expect(f.store.lastSaveID == SaveID(rawValue: 2), "the counter is the highest of the stores'")
        #expect(try Self.insertDesk(f.store, model, 2).saveID == SaveID(rawValue: 3))
        #expect(try Self.insertBuilding(f.store, model, "Annex").saveID == SaveID(rawValue: 4))
        #expect(try f.store.history(after: SaveID(rawValue: 0)).map(\.saveID.rawValue) == [1, 2, 3, 4])
        try f.expectConsistent()
    }

    @Test("history reads merge both stores in save order, limits count across them, and pruning reaches every store")
    func historyAcrossStores() throws {
        let model = TestModels.company(twoStores: true)
        let f = try StoreFixture(model: model)
        for i in 0..<6 {
            if i % 3 == 0 { _ = try Self.insertDesk(f.store, model, Int64(i)) } else { _ = try Self.insertBuilding(f.store, model, "B\(i)") }
        }
        #expect(try Self.historyKeys(f.store.stores[0]) == [1, 4])
        #expect(try Self.historyKeys(f.store.stores[Self.sites]) == [2, 3, 5, 6])
        #expect(try f.store.history(after: SaveID(rawValue: 0)).map(\.saveID.rawValue) == [1, 2, 3, 4, 5, 6])
        #expect(try f.store.history(after: SaveID(rawValue: 1), limit: 3).map(\.saveID.rawValue) == [2, 3, 4])
        #expect(try f.store.history(after: SaveID(rawValue: 6)).isEmpty)
        #expect(try f.store.pruneHistory(keeping: 2) == 4)
        #expect(try f.store.history(after: SaveID(rawValue: 4)).map(\.saveID.rawValue) == [5, 6])
        Self.expectExpired(f.store, after: 3, prunedThrough: 4, last: 6)
        #expect(try Self.historyKeys(f.store.stores[0]).isEmpty)
        try f.expectConsistent()
    }

    @Test("deleteHistory(through:) deletes through a transaction in every store (inclusive), never past the last save; HISTORY before it is EXPIRED, after it answers; ids go on")
    func deleteHistoryThrough() throws {
        let model = TestModels.company(twoStores: true)
        var f = try StoreFixture(model: model)
        for i in 0..<6 {
            if i % 3 == 0 { _ = try Self.insertDesk(f.store, model, Int64(i)) } else { _ = try Self.insertBuilding(f.store, model, "B\(i)") }
        }
        // Saves 1 and 4 are the primary's, 2, 3, 5, 6 the sites store's.
        let (deleted, through) = try f.store.deleteHistory(through: SaveID(rawValue: 4))
        #expect(deleted == 4 && through == SaveID(rawValue: 4))
        #expect(try Self.historyKeys(f.store.stores[0]).isEmpty && Self.historyKeys(f.store.stores[Self.sites]) == [5, 6])
        #expect(try f.store.history(after: SaveID(rawValue: 4)).map(\.saveID.rawValue) == [5, 6])
        Self.expectExpired(f.store, after: 3, prunedThrough: 4, last: 6)
        // Again through the same or an earlier one: nothing more goes.
        #expect(try f.store.deleteHistory(through: SaveID(rawValue: 2)) == (0, SaveID(rawValue: 2)))
        // Past the last save: through the last one only, so the next save's history is whole.
        let past = try f.store.deleteHistory(through: SaveID(rawValue: 1000))
        #expect(past.deleted == 2 && past.through == SaveID(rawValue: 6))
        #expect(try f.store.history(after: SaveID(rawValue: 6)).isEmpty)
        #expect(try Self.insertBuilding(f.store, model, "Depot").saveID == SaveID(rawValue: 7))
        #expect(try f.store.history(after: SaveID(rawValue: 6)).map(\.saveID.rawValue) == [7])
        Self.expectExpired(f.store, after: 5, prunedThrough: 6, last: 7)
        try f.reopen()
        #expect(try f.store.history(after: SaveID(rawValue: 6)).map(\.saveID.rawValue) == [7])
        Self.expectExpired(f.store, after: 5, prunedThrough: 6, last: 7)
        #expect(try Self.insertDesk(f.store, model, 9).saveID == SaveID(rawValue: 8))
        try f.expectConsistent()
    }

    @Test("the counter is the newest history key: saves write no `$meta save`; pruning every record keeps it there, and ids go on after a reopen")
    func counterSurvivesPruning() throws {
        let model = TestModels.company(twoStores: true)
        var f = try StoreFixture(model: model)
        func metaSave(_ s: Int) throws -> UInt64? {
            try f.store.stores[s].read { txn in try txn.tree(TreeLayout.meta)?.get(Array(MetaKey.save.utf8)) }.flatMap(KeyEncoding.readU64)
        }
        _ = try Self.insertDesk(f.store, model, 1)
        _ = try Self.insertBuilding(f.store, model, "HQ")
        _ = try Self.insertBuilding(f.store, model, "Annex")
        #expect(try metaSave(0) == nil && metaSave(Self.sites) == nil, "a save writes only its history record for the counter")
        #expect(try f.store.pruneHistory(keeping: 0) == 3)
        #expect(try metaSave(0) == 1 && metaSave(Self.sites) == 3)
        try f.reopen()
        #expect(f.store.lastSaveID == SaveID(rawValue: 3))
        #expect(try Self.insertDesk(f.store, model, 2).saveID == SaveID(rawValue: 4))
        try f.store.close()
        // Retention 0 prunes each save's own record in the save.
        var options = f.options
        options.historyRetention = 0
        var g = f
        g.options = options
        try g.reopen(afterClose: true)
        #expect(try Self.insertBuilding(g.store, model, "Depot").saveID == SaveID(rawValue: 5))
        // Save 4's record, in the primary, goes at the primary's next save; history after 4 is
        // incomplete already (5's went), so only after 5 is answered.
        #expect(try g.store.history(after: SaveID(rawValue: 5)).isEmpty)
        Self.expectExpired(g.store, after: 4, prunedThrough: 5, last: 5)
        try g.reopen()
        #expect(g.store.lastSaveID == SaveID(rawValue: 5))
        #expect(try Self.insertDesk(g.store, model, 3).saveID == SaveID(rawValue: 6))
        #expect(try g.store.history(after: SaveID(rawValue: 6)).isEmpty)
        Self.expectExpired(g.store, after: 0, prunedThrough: 6, last: 6)
        try g.expectConsistent()
    }

    @Test("retention prunes the home store of each save")
    func retention() throws {
        let model = TestModels.company(twoStores: true)
        let f = try StoreFixture(model: model) { $0.historyRetention = 2 }
        for i in 0..<4 { _ = try Self.insertBuilding(f.store, model, "B\(i)") }
        #expect(try Self.historyKeys(f.store.stores[Self.sites]) == [3, 4])
        _ = try Self.insertDesk(f.store, model, 1)
        #expect(try Self.historyKeys(f.store.stores[0]) == [5])
        #expect(try Self.historyKeys(f.store.stores[Self.sites]) == [3, 4], "pruned at that store's next save")
        _ = try Self.insertBuilding(f.store, model, "B4")
        #expect(try f.store.history(after: SaveID(rawValue: 4)).map(\.saveID.rawValue) == [5, 6])
        Self.expectExpired(f.store, after: 3, prunedThrough: 4, last: 6)
    }

    /// HISTORY after `after` is refused with EXPIRED, naming the newest pruned and the last save.
    static func expectExpired(_ store: ObjectStore, after: UInt64, prunedThrough: UInt64, last: UInt64, sourceLocation: SourceLocation = #_sourceLocation) {
        do throws(KeelError) {
            let records = try store.history(after: SaveID(rawValue: after))
            Issue.record("history after \(after) gave \(records.map(\.saveID.rawValue)) with a gap", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .expired, "\(error)", sourceLocation: sourceLocation)
            #expect(error.details?["prunedThrough"]?.intValue == Int64(prunedThrough), "\(error)", sourceLocation: sourceLocation)
            #expect(error.details?["last"]?.intValue == Int64(last), "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("I1: 8 threads saving to both stores share each store's fsyncs; observers hear every save once, in save order, and all survive a reopen")
    func groupCommitInEachStore() throws {
        let model = TestModels.company(twoStores: true)
        let fs = FaultInjectingFileSystem(wrapping: InMemoryFileSystem(), syncLatency: .milliseconds(10))
        var f = try StoreFixture(model: model, fs: fs)
        let store = f.store
        _ = try store.newObjectID(for: model.id("Desk"))  // the ID blocks' durable reservations, before counting
        _ = try store.newObjectID(for: model.id("Building"))
        let heard = SharedState<[UInt64]>([])
        let token = store.addObserver { record in heard.withLock { $0.append(record.saveID.rawValue) } }
        let syncsBefore = try store.stores.map { try $0.statistics().logSyncs }
        let acknowledged = SharedState<Set<String>>([])
        let failures = SharedState<[String]>([])
        let perThread = 20
        let done = DispatchGroup()
        for t in 0..<8 {
            done.enter()
            Thread {
                defer { done.leave() }
                for i in 0..<perThread {
                    do {
                        // Even threads save buildings (Sites), odd ones desks (the primary).
                        if t % 2 == 0 {
                            _ = try Self.insertBuilding(store, model, "t\(t)-\(i)")
                            _ = acknowledged.withLock { $0.insert("t\(t)-\(i)") }
                        } else {
                            _ = try Self.insertDesk(store, model, Int64(t * 1_000 + i))
                            _ = acknowledged.withLock { $0.insert("\(t * 1_000 + i)") }
                        }
                    } catch {
                        failures.withLock { $0.append("thread \(t) save \(i): \(error)") }
                    }
                }
            }.start()
        }
        done.wait()
        store.removeObserver(token)
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
        let saves = 8 * perThread
        let syncs = try zip(store.stores, syncsBefore).map { try $0.statistics().logSyncs - $1 }
        print("[HomeStoreSaveTests] \(saves) saves (half per store) took \(syncs) log fsyncs (primary, Sites)")
        // One store per save: a two-store save would sync Sites and the primary for every building
        // (160 primary syncs), and saves that share nothing make 80 per store. With four savers per
        // store and 10 ms syncs a quiet machine shares ~4 saves per sync (~20); the bound leaves
        // room for a loaded CI machine's late arrivals (42 seen at load 5) and still fails both.
        let bound = UInt64(saves * 3 / 8)
        #expect(syncs[0] <= bound, "desk saves should share the primary's fsyncs: \(syncs)")
        #expect(syncs[1] <= bound, "building saves should share Sites' fsyncs: \(syncs)")
        #expect(heard.withLock { $0 } == Array(1...UInt64(saves)), "observers heard saves out of order or twice")
        try f.reopen()
        #expect(f.store.lastSaveID == SaveID(rawValue: UInt64(saves)))
        let s = try f.store.snapshot()
        var present: Set<String> = []
        try s.scan(model.id("Building"), includeSubentities: true) { o in
            if case .string(let name) = o.values[model.field("Building", "name")] { present.insert(name) }
            return true
        }
        try s.scan(model.id("Desk"), includeSubentities: true) { o in
            if case .int(let n) = o.values[model.field("Desk", "number")] { present.insert("\(n)") }
            return true
        }
        s.close()
        #expect(present == acknowledged.withLock { $0 })
        try f.expectConsistent()
    }

    @Test("a power cut during saves to both stores keeps every acknowledged save, and no save id is handed out twice after recovery")
    func crashKeepsAcknowledgedAndIDsUnique() throws {
        let model = TestModels.company(twoStores: true)
        let fs = CrashSimulatingFileSystem()
        let f = try StoreFixture(model: model, fs: fs)
        let store = f.store
        let acknowledged = SharedState<[UInt64: String]>([:])  // save id → what it saved
        try checkPowerCuts(fs, f, acknowledged: acknowledged) {
            let done = DispatchGroup()
            for t in 0..<4 {
                done.enter()
                Thread {
                    defer { done.leave() }
                    for i in 0..<25 {
                        let name = "t\(t)-\(i)"
                        guard let result = try? (t % 2 == 0 ? Self.insertBuilding(store, model, name) : Self.insertDesk(store, model, Int64(t * 1_000 + i))),
                            let id = result.saveID
                        else { continue }
                        acknowledged.withLock { $0[id.rawValue] = name }
                    }
                }.start()
            }
            done.wait()
        } check: { i, recovered, before in
            let history = try recovered.history(after: SaveID(rawValue: 0)).map(\.saveID.rawValue)
            let missing = Set(before.keys).subtracting(history)
            #expect(missing.isEmpty, "image \(i): acknowledged saves \(missing.sorted().prefix(5)) lost")
            #expect(recovered.lastSaveID.rawValue == history.max() ?? 0, "image \(i)")
            // The next saves of either store get ids above every id any store recorded.
            let next = try Self.insertBuilding(recovered, model, "after").saveID?.rawValue ?? 0
            let nextDesk = try Self.insertDesk(recovered, model, 99_999).saveID?.rawValue ?? 0
            #expect(next > history.max() ?? 0 && nextDesk > next, "image \(i): ids \(next), \(nextDesk) after \(history.max() ?? 0)")
        }
    }

    @Test("format 1 and 2 folders open and are marked format 3; a folder of a newer format is refused with CORRUPT")
    func formatVersions() throws {
        let model = TestModels.company(twoStores: true)
        var f = try StoreFixture(model: model)
        _ = try Self.insertDesk(f.store, model, 1)
        func setFormat(_ v: UInt64) throws {
            try f.store.stores[0].write { txn in
                try txn.openTree(TreeLayout.meta).put(key: Array(MetaKey.format.utf8), value: KeyEncoding.u64(v))
            }
        }
        func format() throws -> UInt64? {
            try f.store.stores[0].read { txn in try txn.tree(TreeLayout.meta)?.get(Array(MetaKey.format.utf8)) }.flatMap(KeyEncoding.readU64)
        }
        #expect(try format() == 3)
        for older in [1, 2] as [UInt64] {
            try setFormat(older)
            try f.reopen()
            #expect(try format() == 3)
            #expect(f.store.lastSaveID == SaveID(rawValue: 1))
        }
        try setFormat(4)
        try f.store.close()
        do {
            _ = try ObjectStore.open(directory: f.directory, model: model, options: f.options)
            Issue.record("a format 4 folder opened")
        } catch {
            #expect(error.code == .corrupt)
            #expect(error.message.contains("format 4") && error.message.contains("formats 1 to 3"))
        }
    }
}
