// Conflicts and merge policies per property, validation reporting every failure and writing
// nothing, deny, unique constraints and upserts.

import Foundation
import KeelStorage
import Testing

@testable import KeelModel

@Suite("Save rules")
struct SaveRulesTests {
    struct Expected: Sendable, CustomStringConvertible {
        var policy: MergePolicy
        var age: Int64
        var address: String
        var name: String
        /// Which department ends up holding the employee: "store" (d1) or "context" (d2).
        var department: String
        var description: String { policy.rawValue }
    }

    // Snapshot: name Kim, age 30, address A, no department. Another save: age 31, address B,
    // department d1. The context: age 40, name Lee, department d2.
    static let cases: [Expected] = [
        Expected(policy: .storeTrumps, age: 31, address: "B", name: "Lee", department: "store"),
        Expected(policy: .objectTrumps, age: 40, address: "B", name: "Lee", department: "context"),
        Expected(policy: .overwrite, age: 40, address: "A", name: "Lee", department: "context"),
        Expected(policy: .rollback, age: 31, address: "B", name: "Kim", department: "store"),
    ]

    static func scenario() throws -> (StoreFixture, e: ObjectID, d1: ObjectID, d2: ObjectID, ChangeSet) {
        let f = try StoreFixture()
        let d1 = try f.insert("Department", ["name": .string("One")])
        let d2 = try f.insert("Department", ["name": .string("Two")])
        let e = try f.insert("Employee", ["name": .string("Kim"), "age": .int(30), "address": .string("A")])
        let snapshot = try f.original(e)
        _ = try f.store.save(ChangeSet(
            changes: [f.set(e, "age", .int(31)), f.set(e, "address", .string("B")), f.set(e, "department", .object(d1))],
            originals: snapshot))
        let context = ChangeSet(
            changes: [f.set(e, "age", .int(40)), f.set(e, "name", .string("Lee")), f.set(e, "department", .object(d2))],
            originals: snapshot)
        return (f, e, d1, d2, context)
    }

    @Test("each merge policy resolves two overlapping changes exactly per property", arguments: cases)
    func policies(_ expected: Expected) throws {
        let (f, e, d1, d2, context) = try Self.scenario()
        _ = try f.store.save(context, mergePolicy: expected.policy)
        #expect(try f.value(e, "age") == .int(expected.age))
        #expect(try f.value(e, "address") == .string(expected.address))
        #expect(try f.value(e, "name") == .string(expected.name))
        let holder = expected.department == "store" ? d1 : d2
        let other = holder == d1 ? d2 : d1
        #expect(try f.value(e, "department") == .object(holder))
        #expect(try f.members(holder, "employees") == [e])
        #expect(try f.members(other, "employees") == [])
        try f.expectConsistent()
    }

    @Test("policy error: CONFLICT lists the object with both versions and nothing is written")
    func conflictError() throws {
        let (f, e, _, d2, context) = try Self.scenario()
        let last = f.store.lastSaveID
        let error = keelError { _ = try f.store.save(context, mergePolicy: .error) }
        #expect(error?.code == .conflict)
        let first = error?.details?["conflicts"]?.arrayValue?.first
        #expect(first?["object"] == .string(e.text(in: f.model)))
        #expect(first?["snapshotVersion"] == .int(1))
        #expect(first?["storeVersion"] == .int(2))
        #expect(f.store.lastSaveID == last)
        #expect(try f.value(e, "age") == .int(31))
        #expect(try f.members(d2, "employees") == [])
    }

    @Test("a delete of an object the store changed: kept by storeTrumps and rollback, done by objectTrumps and overwrite",
          arguments: [MergePolicy.storeTrumps, .rollback, .objectTrumps, .overwrite])
    func deleteAgainstUpdate(_ policy: MergePolicy) throws {
        let f = try StoreFixture()
        let e = try f.insert("Employee", ["name": .string("Kim")])
        let snapshot = try f.original(e)
        _ = try f.store.save(ChangeSet(changes: [f.set(e, "age", .int(50))], originals: snapshot))
        _ = try f.store.save(ChangeSet(changes: [.delete(e)], originals: snapshot), mergePolicy: policy)
        let survives = policy == .storeTrumps || policy == .rollback
        #expect((try f.object(e) != nil) == survives)
    }

    @Test("changes to an object another save deleted are dropped (it stays deleted) unless the policy is error")
    func updateAgainstDelete() throws {
        let f = try StoreFixture()
        let d = try f.insert("Department", ["name": .string("D")])
        let e = try f.insert("Employee", ["name": .string("Kim")])
        let snapshot = try f.original(e, d)
        _ = try f.store.save(ChangeSet(changes: [.delete(e)], originals: try f.original(e)))
        let context = ChangeSet(changes: [f.set(e, "age", .int(9)), f.set(d, "code", .string("X"))], originals: snapshot)
        #expect(keelError { _ = try f.store.save(context) }?.code == .conflict)
        _ = try f.store.save(context, mergePolicy: .objectTrumps)
        #expect(try f.object(e) == nil)
        #expect(try f.value(d, "code") == .string("X"))
    }

    @Test("a model regex that a value makes backtrack exponentially fails validation at once, under the save lock, and others save")
    func regexBudgetAtSave() throws {
        let model = try ModelLoader.load(text: ModelFixture.model(entities: #"{"name":"Tag","attributes":[{"name":"code","type":"string","regex":"(x+x+)+y"}]}"#))
        let f = try StoreFixture(model: model)
        let bad = try f.new("Tag"), good = try f.new("Tag")
        let error = keelError {
            _ = try f.store.save(ChangeSet(changes: [.insert(bad, values: f.values("Tag", ["code": .string(String(repeating: "x", count: 40))]))]))
        }
        #expect(error?.code == .validation)
        let failure = error?.details?["failures"]?.arrayValue?.first
        #expect(failure?["rule"]?.stringValue == "regex" && failure?["message"]?.stringValue?.contains("backtrack too much") == true, "\(String(describing: error))")
        #expect(try f.object(bad) == nil)
        _ = try f.store.save(ChangeSet(changes: [.insert(good, values: f.values("Tag", ["code": .string("xxy")]))]))
        #expect(try f.value(good, "code") == .string("xxy"))
    }

    @Test("five different validation failures are all reported in one VALIDATION error and nothing is written")
    func fiveFailures() throws {
        let f = try StoreFixture()
        let last = f.store.lastSaveID
        let e = try f.new("Employee"), d = try f.new("Department"), a = try f.new("Archive")
        let error = keelError {
            _ = try f.store.save(ChangeSet(changes: [
                .insert(e, values: f.values("Employee", ["age": .int(200), "email": .string("NOT AN EMAIL")])),  // name required, age max, regex
                .insert(d, values: f.values("Department", ["name": .string("Ops"), "code": .string("FAR TOO LONG")])),  // length
                .insert(a, values: f.values("Archive", ["label": .string("x")])),  // required to-one
            ]))
        }
        #expect(error?.code == .validation)
        let failures = error?.details?["failures"]?.arrayValue ?? []
        let rules = Set(failures.compactMap { f -> String? in
            guard let o = f["object"]?.stringValue, let p = f["property"]?.stringValue, let r = f["rule"]?.stringValue else { return nil }
            return "\(o).\(p):\(r)"
        })
        #expect(rules == [
            "\(e.text(in: f.model)).name:required", "\(e.text(in: f.model)).age:maxValue", "\(e.text(in: f.model)).email:regex",
            "\(d.text(in: f.model)).code:maxValue", "\(a.text(in: f.model)).department:required",
        ], "\(failures)")
        #expect(f.store.lastSaveID == last)
        #expect(try f.object(d) == nil)
        let s = try f.store.snapshot()
        defer { s.close() }
        #expect(try s.count(f.model.id("Person"), includeSubentities: true) == 0)
    }

    @Test("deny: deleting a department that still holds archives fails with DENY and writes nothing; mixed kinds report VALIDATION with all")
    func deny() throws {
        let f = try StoreFixture()
        let d = try f.insert("Department", ["name": .string("Legal")])
        let a = try f.insert("Archive", ["label": .string("2019"), "department": .object(d)])
        let error = keelError { _ = try f.store.save(ChangeSet(changes: [.delete(d)], originals: try f.original(d))) }
        #expect(error?.code == .deny)
        #expect(try f.object(d) != nil)
        #expect(try f.members(d, "archive") == [a])
        // Deny plus a required value missing: VALIDATION, both listed.
        let e = try f.new("Employee")
        let mixed = keelError {
            _ = try f.store.save(ChangeSet(changes: [.delete(d), .insert(e, values: [:])], originals: try f.original(d)))
        }
        #expect(mixed?.code == .validation)
        let codes = Set(mixed?.details?["failures"]?.arrayValue?.compactMap { $0["code"]?.stringValue } ?? [])
        #expect(codes == ["DENY", "VALIDATION"])
        // Deleting the archive in the same save lets the department go, in either order: a deny
        // is judged at the end of the save.
        let d2 = try f.insert("Department", ["name": .string("Audit")])
        let a2 = try f.insert("Archive", ["label": .string("2020"), "department": .object(d2)])
        _ = try f.store.save(ChangeSet(changes: [.delete(d2), .delete(a2)], originals: try f.original(d2, a2)))
        #expect(try f.object(d2) == nil)
        _ = try f.store.save(ChangeSet(changes: [.delete(a), .delete(d)], originals: try f.original(a, d)))
        #expect(try f.object(d) == nil)
        try f.expectConsistent()
    }

    @Test("unique: a clash is CONSTRAINT under error; objectTrumps and storeTrumps upsert into the holder and redirect relationships",
          arguments: [MergePolicy.error, .objectTrumps, .storeTrumps])
    func uniqueAndUpsert(_ policy: MergePolicy) throws {
        let f = try StoreFixture()
        let existing = try f.insert("Department", ["name": .string("Sales"), "code": .string("S1"), "budget": .double(10)])
        let fresh = try f.new("Department"), e = try f.new("Employee")
        let changes = ChangeSet(changes: [
            .insert(fresh, values: f.values("Department", ["name": .string("Sales"), "code": .string("S2")])),
            .insert(e, values: f.values("Employee", ["name": .string("Kim"), "department": .object(fresh)])),
        ])
        if policy == .error {
            let error = keelError { _ = try f.store.save(changes, mergePolicy: policy) }
            #expect(error?.code == .constraint)
            #expect(try f.object(e) == nil)
            // One failure per holder in the details; the message names the clash once.
            guard case .array(let failures)? = error?.details?["failures"] else {
                Issue.record("no failures in \(String(describing: error))")
                return
            }
            let holders = failures.compactMap { failure -> String? in if case .string(let s)? = failure["object"] { s } else { nil } }
            #expect(Set(holders) == [existing.text(in: f.model), fresh.text(in: f.model)])
            let message = error?.message ?? ""
            #expect(message.hasPrefix("the save fails validation: "), "\(message)")
            #expect(message.components(separatedBy: "share the unique key (name) of Department").count == 2, "\(message)")
            return
        }
        let result = try f.store.save(changes, mergePolicy: policy)
        #expect(result.merged == [fresh: existing])
        #expect(!result.inserted.contains(fresh))
        #expect(try f.object(fresh) == nil)
        #expect(try f.value(existing, "code") == .string(policy == .objectTrumps ? "S2" : "S1"))
        #expect(try f.value(existing, "budget") == .double(10))
        #expect(try f.value(e, "department") == .object(existing))
        #expect(try f.members(existing, "employees") == [e])
        try f.expectConsistent()
    }

    @Test("unique: two existing objects cannot take one key; a key given up in the same save can be taken")
    func uniqueSwap() throws {
        let f = try StoreFixture()
        let a = try f.insert("Department", ["name": .string("A")])
        let b = try f.insert("Department", ["name": .string("B")])
        let clash = keelError {
            _ = try f.store.save(ChangeSet(changes: [f.set(b, "name", .string("A"))], originals: try f.original(b)), mergePolicy: .objectTrumps)
        }
        #expect(clash?.code == .constraint)
        _ = try f.store.save(ChangeSet(
            changes: [f.set(a, "name", .string("tmp")), f.set(b, "name", .string("A")), f.set(a, "name", .string("B"))],
            originals: try f.original(a, b)))
        #expect(try f.value(a, "name") == .string("B"))
        #expect(try f.value(b, "name") == .string("A"))
        let s = try f.store.snapshot()
        defer { s.close() }
        let u = f.model[f.model.id("Department")].uniqueConstraints[0]
        #expect(try s.holder(of: u, values: [.string("A")]) == b)
        #expect(try s.holder(of: u, values: [.string("B")]) == a)
        try f.expectConsistent()
    }

    @Test("to-many maxCount and the ordered relationship's order")
    func countsAndOrder() throws {
        let f = try StoreFixture()
        let p = try f.insert("Project", ["title": .string("X")])
        var people: [ObjectID] = []
        for i in 0..<6 { people.append(try f.insert("Employee", ["name": .string("E\(i)")])) }
        let members = f.model.field("Project", "members")
        let error = keelError { _ = try f.store.save(ChangeSet(changes: [.add(p, field: members, members: people, at: nil)])) }
        #expect(error?.code == .validation)
        #expect(error?.details?["failures"]?.arrayValue?.first?["rule"] == .string("maxCount"))
        _ = try f.store.save(ChangeSet(changes: [
            .add(p, field: members, members: [people[0], people[1], people[2]], at: nil),
            .add(p, field: members, members: [people[3]], at: 0),
            .add(p, field: members, members: [people[4]], at: 2),
            .add(p, field: members, members: [people[2]], at: 1),  // a move
        ]))
        #expect(try f.members(p, "members") == [people[3], people[2], people[0], people[4], people[1]])
        #expect(try f.members(people[4], "projects") == [p])
        try f.expectConsistent()
    }
}

/// An ordered to-many edited many times in one save: the save keeps the owner's list once read
/// (`SaveSession.orderedLists`) and must keep it in step with the tree through appends, inserts
/// at an index, moves, removals and a renumbering (30 inserts at the front use up the gaps).
@Suite("Ordered to-many: many edits in one save")
struct OrderedListSaveTests {
    static let modelText = """
        { "name": "Lists", "version": 1, "entities": [
          { "name": "List", "attributes": [ { "name": "name", "type": "string" } ],
            "relationships": [ { "name": "items", "destination": "Item", "inverse": "list", "toMany": true, "ordered": true } ] },
          { "name": "Item", "attributes": [ { "name": "name", "type": "string" } ],
            "relationships": [ { "name": "list", "destination": "List", "inverse": "items" } ] }
        ] }
        """

    @Test("appends, inserts at an index, moves, removals and a renumbering in one save give the expected order")
    func manyEditsInOneSave() throws {
        let f = try StoreFixture(model: ModelLoader.load(text: Self.modelText))
        let list = try f.insert("List", ["name": .string("L")])
        let items = f.model.field("List", "items")
        var expected: [ObjectID] = []
        var changes: [Change] = []
        var fresh: [ObjectID] = []
        for i in 0..<60 {
            let item = try f.new("Item")
            fresh.append(item)
            changes.append(.insert(item, values: f.values("Item", ["name": .string("I\(i)")])))
        }
        for item in fresh[0..<10] {  // appends
            changes.append(.add(list, field: items, members: [item], at: nil))
            expected.append(item)
        }
        for item in fresh[10..<40] {  // at the front: the gaps run out, the list is renumbered
            changes.append(.add(list, field: items, members: [item], at: 0))
            expected.insert(item, at: 0)
        }
        for (n, item) in fresh[40..<50].enumerated() {  // into the middle
            let at = 5 + 3 * n
            changes.append(.add(list, field: items, members: [item], at: at))
            expected.insert(item, at: at)
        }
        // A move, an add of a member already there (nothing happens), removals, then appends.
        let moved = expected[7]
        changes.append(.add(list, field: items, members: [moved], at: 1))
        expected.remove(at: 7)
        expected.insert(moved, at: 1)
        changes.append(.add(list, field: items, members: [expected[3]], at: nil))
        let removed = [expected[0], expected[20], expected[expected.count - 1]]
        changes.append(.remove(list, field: items, members: removed))
        expected.removeAll { removed.contains($0) }
        for item in fresh[50..<60] {
            changes.append(.add(list, field: items, members: [item], at: nil))
            expected.append(item)
        }
        _ = try f.store.save(ChangeSet(changes: changes))
        #expect(try f.members(list, "items") == expected)
        // The next save reads the list from the tree again and continues it.
        let last = try f.insert("Item", ["name": .string("last")])
        _ = try f.store.save(ChangeSet(changes: [.add(list, field: items, members: [last], at: 2)]))
        expected.insert(last, at: 2)
        #expect(try f.members(list, "items") == expected)
        try f.expectConsistent()
    }
}
