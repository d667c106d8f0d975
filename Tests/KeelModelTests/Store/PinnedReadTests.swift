// An object snapshot's pinned reads (`ObjectSnapshot.pinned`): the pin of a read that ended is
// emptied and reused by the next pinned read of its store, which must start with no tree and
// no transaction of the read before; and index reads name their trees from `TreeLayout`'s table.

import Dispatch
import KeelStorage
import Synchronization
import Testing

@testable import KeelModel

@Suite("Pinned reads")
struct PinnedReadTests {
    /// What one pinned read saw of its pin, gathered inside it (the body throws only KeelError).
    struct Seen {
        var pin: PinnedRead?
        var treesAtStart = -1
        var nestedIsPinned = false
        var treeKept = false
        var name: Value?
    }

    /// One pinned read of `id`'s store: its pin, whether a nested read runs on the pinned
    /// transaction, whether a second look-up of the object tree is the kept one, and `id`'s name.
    static func pinnedRead(_ snapshot: ObjectSnapshot, _ id: ObjectID, field: Int, txn: ((ReadTransaction) -> Void)? = nil) throws -> Seen {
        let e = id.entity.index
        let store = snapshot.layout.storeOf[e]
        return try snapshot.pinned(store: store) { () throws(KeelError) -> Seen in
            var seen = Seen()
            guard let pin = snapshot.pins.withLock({ $0.open[store] }), let pinned = pin.txn else { return seen }
            seen.pin = pin
            seen.treesAtStart = pin.trees.count
            txn?(pinned)
            seen.nestedIsPinned = try snapshot.read(store: store) { (t) throws(KeelError) -> Bool in t === pinned }
            let tree = try snapshot.tree(pinned, snapshot.layout.objects[e])
            let again = try snapshot.tree(pinned, snapshot.layout.objects[e])
            seen.treeKept = tree != nil && again === tree
            var key: [UInt8] = []
            seen.name = try TreeReading.row(tree, id, fieldCount: snapshot.layout.fieldCounts[e], key: &key)?.values[field]
            return seen
        }
    }

    @Test("a pinned read's pin is emptied when it ends and reused by the next: no tree, no transaction of the read before, across a save; the next snapshot reads the save")
    func pinReused() throws {
        let fixture = try FetchFixture(employees: 120, students: 10, seed: 14)
        let model = fixture.model
        let target = fixture.employees[7]
        let name = try #require(model[target.entity].field(named: "name"))
        let snapshot = try fixture.store.store.snapshot()
        defer { snapshot.close() }
        let store = snapshot.layout.storeOf[target.entity.index]
        #expect(snapshot.pins.withLock { $0.spare[store] } == nil, "no pinned read yet")
        weak var firstTxn: ReadTransaction?
        let first = try Self.pinnedRead(snapshot, target, field: name) { firstTxn = $0 }
        let pin = try #require(first.pin)
        let before = try #require(first.name)
        #expect(first.treesAtStart == 0 && first.nestedIsPinned && first.treeKept)
        // Ended: out of the open slot, kept as the store's spare with nothing in it.
        #expect(snapshot.pins.withLock { $0.open[store] } == nil)
        #expect(snapshot.pins.withLock { $0.spare[store] } === pin)
        #expect(pin.txn == nil && pin.trees.isEmpty)
        #expect(firstTxn == nil, "the ended read's transaction is let go")
        _ = try fixture.store.store.save(ChangeSet(changes: [.set(target, field: name, value: .string("Renamed \(before)"))]))
        for round in 0..<3 {
            weak var txn: ReadTransaction?
            let again = try Self.pinnedRead(snapshot, target, field: name) { txn = $0 }
            #expect(again.pin === pin, "round \(round): the spare pin reused")
            #expect(again.treesAtStart == 0, "round \(round): no tree of an earlier read (each is bound to its read)")
            #expect(again.nestedIsPinned && again.treeKept, "round \(round)")
            #expect(again.name == before, "round \(round): the snapshot's commit, not the later save")
            #expect(txn == nil && pin.txn == nil && pin.trees.isEmpty, "round \(round)")
        }
        let fresh = try fixture.store.store.snapshot()
        defer { fresh.close() }
        let next = try Self.pinnedRead(fresh, target, field: name)
        #expect(next.name == .string("Renamed \(before)"))
        #expect(next.pin != nil && next.pin !== pin, "each snapshot its own pins")
    }

    @Test("pinned reads of one store on several threads: each sees its own pin and transaction, a reused pin empty")
    func pinsAcrossThreads() throws {
        let fixture = try FetchFixture(employees: 120, students: 10, seed: 15)
        let model = fixture.model
        let targets = Array(fixture.employees.prefix(4))
        let name = try #require(model[targets[0].entity].field(named: "name"))
        let snapshot = try fixture.store.store.snapshot()
        defer { snapshot.close() }
        let expected = try targets.map { try #require(try fixture.store.object($0)?.values[name]) }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: targets.count) { t in
            for i in 0..<150 {
                do {
                    let seen = try Self.pinnedRead(snapshot, targets[t], field: name)
                    if seen.pin == nil || seen.treesAtStart != 0 || !seen.nestedIsPinned || !seen.treeKept || seen.name != expected[t] {
                        failures.withLock { $0.append("thread \(t), read \(i): \(seen.treesAtStart) \(seen.nestedIsPinned) \(seen.treeKept) \(String(describing: seen.name))") }
                    }
                } catch {
                    failures.withLock { $0.append("thread \(t), read \(i): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        let store = snapshot.layout.storeOf[targets[0].entity.index]
        #expect(snapshot.pins.withLock { $0.open[store] } == nil)
        #expect(snapshot.pins.withLock { $0.spare[store]?.txn } == nil)
    }

    @Test("TreeLayout.indexTree: every entity's indexes and unique constraints (inherited ones too) named as TreeLayout.index names them; an index the model does not list gets its name built")
    func indexTreeNames() throws {
        let model = try TestModels.projectModel()
        let layout = TreeLayout(model: model)
        var seen: [String: String] = [:]  // tree name → the index it names
        var checked = 0
        for entity in model.entities {
            for index in entity.indexes + entity.uniqueConstraints {
                let name = layout.indexTree(index)
                #expect(name == TreeLayout.index(index), "\(entity.name): \(index.name)")
                let identity = "\(index.isUnique) \(index.name)"
                #expect(seen[name, default: identity] == identity, "\(name) names two indexes")
                seen[name] = identity
                checked += 1
            }
        }
        #expect(seen.count >= 4 && checked > seen.count, "\(seen.count) trees, \(checked) look-ups (inherited ones included)")
        #expect(seen.values.contains { $0.hasPrefix("true") } && seen.values.contains { $0.hasPrefix("false") })
        // Not in the model: the name is built. A listed name with the other uniqueness is another tree.
        let listed = try #require(model.entities.lazy.flatMap(\.indexes).first)
        let flipped = Index(
            name: listed.name, fields: listed.fields, propertyNames: listed.propertyNames, isUnique: !listed.isUnique, declaredIn: listed.declaredIn)
        #expect(layout.indexTree(flipped) == TreeLayout.index(flipped) && layout.indexTree(flipped) != layout.indexTree(listed))
        let unknown = Index(name: listed.name + "x", fields: listed.fields, propertyNames: listed.propertyNames, isUnique: false, declaredIn: listed.declaredIn)
        #expect(layout.indexTree(unknown) == "idx/" + listed.name + "x")
        let elsewhere = Index(
            name: listed.name, fields: listed.fields, propertyNames: listed.propertyNames, isUnique: false,
            declaredIn: EntityID(rawValue: UInt16(model.entities.count + 3)))
        #expect(layout.indexTree(elsewhere) == "idx/" + listed.name)
    }
}
