// A saved object's to-many lists read together (`ObjectReader.members(of:fields:)`: one engine
// read of the object's store for a snapshot) against the same lists read field by field, on
// the project model's stores; and GET through a context, which reads them together only when
// none of the fields has pending changes: the same lists with and without pending changes.

import Foundation
import Testing

@testable import KeelModel

@Suite("Snapshot: to-many lists read together")
struct SnapshotMembersTests {
    @Test("members(of:fields:) gives each field's members(of:field:), in the order asked (ordered and unordered, empty, repeated); bad fields are refused")
    func togetherAgainstOneByOne() throws {
        let model = try TestModels.projectModel()
        var f = try StoreFixture(model: model)
        let companies = try (0..<2).map { _ in try f.new("Company") }
        let departments = try (0..<3).map { _ in try f.new("Department") }
        let employees = try (0..<5).map { _ in try f.new("Employee") }
        var changes: [Change] = []
        for (i, c) in companies.enumerated() { changes.append(.insert(c, values: f.values("Company", ["name": .string("C\(i)")]))) }
        for (i, d) in departments.enumerated() { changes.append(.insert(d, values: f.values("Department", ["name": .string("D\(i)")]))) }
        for (i, e) in employees.enumerated() {
            changes.append(.insert(e, values: f.values("Employee", ["name": .string("E\(i)"), "salary": .decimal(1), "company": .object(companies[0])])))
        }
        let departmentsField = model.field("Company", "departments"), employeesField = model.field("Department", "employees")
        for d in departments { changes.append(.add(companies[0], field: departmentsField, members: [d], at: nil)) }
        // An ordered list in an order that is not the IDs' order.
        for e in [employees[3], employees[0], employees[4]] { changes.append(.add(departments[0], field: employeesField, members: [e], at: nil)) }
        _ = try f.store.save(ChangeSet(changes: changes))
        try f.reopen()

        let snapshot = try f.store.snapshot()
        defer { snapshot.close() }
        for id in companies + departments {
            let fields = model[id.entity].toManyFields
            #expect(fields.count == 2)
            for asked in [fields, fields.reversed(), [fields[0], fields[0]], [fields[1]], []] {
                var oneByOne: [[ObjectID]] = []
                for field in asked { oneByOne.append(try snapshot.members(of: id, field: field)) }
                #expect(try snapshot.members(of: id, fields: asked) == oneByOne)
            }
        }
        #expect(try snapshot.members(of: departments[0], fields: [employeesField]) == [[employees[3], employees[0], employees[4]]])
        #expect(try snapshot.members(of: companies[0], fields: model[companies[0].entity].toManyFields).map(\.count) == [3, 5])
        let notToMany = try #require(model[companies[0].entity].field(named: "name"))
        #expect(keelError { _ = try snapshot.members(of: companies[0], fields: [departmentsField, notToMany]) }?.code == .noSuchProperty)
    }

    @Test("GET through a context: the lists read together when nothing is pending, field by field when one field has pending changes, the same as the store's")
    func contextGet() throws {
        let model = try TestModels.projectModel()
        let f = try StoreFixture(model: model)
        let company = try f.insert("Company", ["name": .string("Acme")])
        let context = ObjectContext(store: f.store)
        let companies: JSON = [.string(company.text(in: model))]
        let department = try context.insert(entity: "Department", values: ["name": "R&D", "code": 1, "companies": companies])
        let hire = try context.insert(entity: "Employee", values: ["name": "Kim", "salary": "1", "company": .string(company.text(in: model))])
        try context.save()
        let fresh = ObjectContext(store: f.store)
        let saved = try fresh.get(company)
        #expect(saved["departments"] == .objects([department]) && saved["employees"] == .objects([hire]))
        #expect(try fresh.get(department)["companies"] == .objects([company]))
        // Pending on one field: that list shows it, the other is the store's.
        let second = try fresh.insert(entity: "Department", values: ["name": "Ops", "companies": companies])
        let pending = try fresh.get(company)
        #expect(pending["departments"] == .objects([department, second].sorted()) && pending["employees"] == .objects([hire]))
        try fresh.delete(hire)
        #expect(try fresh.get(company)["employees"] == .objects([]))
        fresh.rollback()
        #expect(try fresh.get(company) == saved)
    }

    @Test("members(of:field:) for many owners: a link tree the snapshot lacks gives empty lists, the other group's tree still read; one entity and sibling sub-entities alike, as one by one")
    func manyOwnersAbsentTrees() throws {
        // Alpha.pets and Beta.toys are both field 1 (after the inherited `name`), in different
        // link trees: a list mixing them is two groups, Alpha's first. Each phase compares the
        // batch with one-by-one reads for lists of one entity, of both (mixed, shuffled,
        // repeated), and checks which link trees exist, so each path is the one meant.
        let model = try TestModels.siblings()
        let f = try StoreFixture(model: model)
        let c = ObjectContext(store: f.store)
        let (alphas, betas) = try Self.savedSiblings(c, 12)
        var random = SystemRandomNumberGenerator()
        let lists: [[ObjectID]] = [
            alphas, betas, [alphas[3], betas[2], alphas[0], betas[7]], Array(zip(betas, alphas).flatMap { [$0, $1] }),
            (alphas + betas).shuffled(using: &random), [betas[5], betas[5], alphas[1], alphas[1], betas[0]], [alphas[4]], [betas[9]],
        ]
        func check(pets hasPets: Bool, toys hasToys: Bool, members: Int, _ phase: String) throws {
            let snapshot = try f.store.snapshot()
            defer { snapshot.close() }
            let pets = try #require(snapshot.layout.links[model.id("Alpha").index][1])
            let toys = try #require(snapshot.layout.links[model.id("Beta").index][1])
            #expect(pets != toys)
            let trees = try snapshot.read(store: snapshot.layout.storeOf[model.id("Alpha").index]) { (txn) throws(KeelError) -> [Bool] in
                [try snapshot.tree(txn, pets) != nil, try snapshot.tree(txn, toys) != nil]
            }
            #expect(trees == [hasPets, hasToys], "\(phase): the link trees present")
            var found = 0
            for ids in lists {
                var oneByOne: [[ObjectID]] = []
                for id in ids { oneByOne.append(try snapshot.members(of: id, field: 1)) }
                let together = try snapshot.members(of: ids, field: 1)
                #expect(together == oneByOne, "\(phase): \(ids.map { $0.text(in: model) })")
                if ids == alphas || ids == betas { found += together.joined().count }
            }
            #expect(found == members, "\(phase): the members of every Alpha and every Beta")
            // A field that is no to-many is refused on either path (one entity, mixed).
            #expect(keelError { _ = try snapshot.members(of: betas, field: 0) }?.code == .noSuchProperty)
            #expect(keelError { _ = try snapshot.members(of: [alphas[0], betas[0]], field: 0) }?.code == .noSuchProperty)
        }
        try check(pets: false, toys: false, members: 0, "no members yet")
        // Toys for every other Beta: Beta's tree exists, Alpha's still not (its group comes first
        // in the mixed lists, and must not end the read).
        for (i, beta) in betas.enumerated() where i % 2 == 1 {
            let toy = try c.insert(entity: "Toy", values: ["name": .string("T\(i)")])
            try c.relate(beta, relationship: "toys", add: [toy, try c.insert(entity: "Toy", values: ["name": .string("U\(i)")])])
        }
        try c.save()
        try check(pets: false, toys: true, members: 12, "toys only")
        for (i, alpha) in alphas.enumerated() where i % 3 == 0 {
            try c.relate(alpha, relationship: "pets", add: [try c.insert(entity: "Pet", values: ["name": .string("P\(i)")])])
        }
        try c.save()
        try check(pets: true, toys: true, members: 16, "pets and toys")
    }

    @Test("members(of:field:) for many owners: a link tree a snapshot found missing is known so without a read — per snapshot (a later commit creating it is seen by the next snapshot only), per store, pinned or not, forgotten at close")
    func knownAbsentTrees() throws {
        let model = try TestModels.siblings()
        let f = try StoreFixture(model: model)
        let c = ObjectContext(store: f.store)
        let (alphas, betas) = try Self.savedSiblings(c, 10)
        let old = try f.store.snapshot()
        defer { old.close() }
        let store = old.layout.storeOf[model.id("Alpha").index]
        let pets = try #require(old.layout.links[model.id("Alpha").index][1])
        let toys = try #require(old.layout.links[model.id("Beta").index][1])
        let mixed = Array(zip(alphas, betas).flatMap { [$0, $1] })
        let none = [[ObjectID]](repeating: [], count: 10)
        // Not looked up yet: not known, so the first batch reads (and finds them missing).
        #expect(!old.snapshots[store].knowsNoTree(pets) && !old.snapshots[store].knowsNoTree(toys))
        #expect(try old.members(of: alphas, field: 1) == none)
        #expect(old.snapshots[store].knowsNoTree(pets) && !old.snapshots[store].knowsNoTree(toys))
        #expect(try old.members(of: mixed, field: 1) == none + none)
        #expect(old.snapshots[store].knowsNoTree(toys))
        // A later commit creates both trees (every other Alpha has a pet, every third Beta toys).
        for (i, alpha) in alphas.enumerated() where i % 2 == 0 {
            try c.relate(alpha, relationship: "pets", add: [try c.insert(entity: "Pet", values: ["name": .string("P\(i)")])])
        }
        for (i, beta) in betas.enumerated() where i % 3 == 0 {
            try c.relate(beta, relationship: "toys", add: [try c.insert(entity: "Toy", values: ["name": .string("T\(i)")])])
        }
        try c.save()
        let new = try f.store.snapshot()
        defer { new.close() }
        let lists: [[ObjectID]] = [alphas, betas, mixed, [betas[3], alphas[0], alphas[0], betas[1]]]
        for ids in lists {
            // The old snapshot still sees its commit (no members), pinned or not; the new one
            // reads the trees (found, so never known missing), the same as one by one.
            let oldPinned = try old.pinned(store: store) { () throws(KeelError) in try old.members(of: ids, field: 1) }
            #expect(try old.members(of: ids, field: 1) == [[ObjectID]](repeating: [], count: ids.count))
            #expect(oldPinned == [[ObjectID]](repeating: [], count: ids.count))
            var oneByOne: [[ObjectID]] = []
            for id in ids { oneByOne.append(try new.members(of: id, field: 1)) }
            #expect(oneByOne.joined().count > 0)
            #expect(try new.members(of: ids, field: 1) == oneByOne)
            #expect(try new.pinned(store: store) { () throws(KeelError) in try new.members(of: ids, field: 1) } == oneByOne)
        }
        #expect(!new.snapshots[store].knowsNoTree(pets) && !new.snapshots[store].knowsNoTree(toys))
        // Closed: nothing is known, and the batch throws as every read of a closed snapshot.
        old.close()
        #expect(!old.snapshots[store].knowsNoTree(pets))
        #expect(keelError { _ = try old.members(of: alphas, field: 1) } != nil)
        #expect(keelError { _ = try old.members(of: mixed, field: 1) } != nil)
    }

    @Test("members(of:field:) in a store of two: a link tree missing in one store answers from that store's snapshot, the other store's tree still read")
    func knownAbsentTreesTwoStores() throws {
        let model = TestModels.company(twoStores: true)
        let f = try StoreFixture(model: model)
        let c = ObjectContext(store: f.store)
        // Departments with no employees (Default has no link/Department.employees); buildings
        // with rooms (Sites has link/Building.rooms).
        var departments: [ObjectID] = [], buildings: [ObjectID] = []
        for i in 0..<6 {
            departments.append(try c.insert(entity: "Department", values: ["name": .string("D\(i)")]))
            let b = try c.insert(entity: "Building", values: ["name": .string("B\(i)")])
            var room: [ObjectID] = []
            for n in 0..<i { room.append(try c.insert(entity: "Room", values: ["number": .int(Int64(n))])) }
            if i > 0 { try c.relate(b, relationship: "rooms", add: room) }
            buildings.append(b)
        }
        try c.save()
        let snapshot = try f.store.snapshot()
        defer { snapshot.close() }
        let employees = model.field("Department", "employees"), rooms = model.field("Building", "rooms")
        let defaultStore = snapshot.layout.storeOf[model.id("Department").index]
        let sites = snapshot.layout.storeOf[model.id("Building").index]
        #expect(defaultStore != sites)
        let employeeTree = try #require(snapshot.layout.links[model.id("Department").index][employees])
        let roomTree = try #require(snapshot.layout.links[model.id("Building").index][rooms])
        for round in 0..<2 {  // the second round with the missing tree known
            #expect(try snapshot.members(of: departments, field: employees) == [[ObjectID]](repeating: [], count: 6), "round \(round)")
            let counts = try snapshot.members(of: buildings, field: rooms).map(\.count)
            #expect(counts == Array(0..<6), "round \(round)")
        }
        #expect(snapshot.snapshots[defaultStore].knowsNoTree(employeeTree) && !snapshot.snapshots[sites].knowsNoTree(employeeTree))
        #expect(!snapshot.snapshots[sites].knowsNoTree(roomTree) && !snapshot.snapshots[defaultStore].knowsNoTree(roomTree))
    }

    /// `count` Alphas and `count` Betas (named A0…, B0…), inserted in turn and saved.
    static func savedSiblings(_ c: ObjectContext, _ count: Int) throws -> (alphas: [ObjectID], betas: [ObjectID]) {
        var alphas: [ObjectID] = [], betas: [ObjectID] = []
        for i in 0..<count {
            alphas.append(try c.insert(entity: "Alpha", values: ["name": .string("A\(i)")]))
            betas.append(try c.insert(entity: "Beta", values: ["name": .string("B\(i)")]))
        }
        try c.save()
        return (alphas, betas)
    }
}
