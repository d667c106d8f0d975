// verify reads every key of the object and link trees, not only the ranges of the model's
// entities: a key the walks by entity never reach (an entity the model does not have, another
// tree's entity, a key that is no object key) is a `stray` fault naming the tree and the key,
// the rest of the store still checked; past 10 stray keys in one tree, one fault counts the rest.
// A whole tree the model does not keep in a store file is a `stray` fault too. The trees are
// walked in chunks: damage past the first chunks of a large index or link tree is still found.
// The stray keys and trees are written through the engine directly, below the object layer.

import KeelStorage
import Testing

@testable import KeelModel

@Suite("verify finds keys and trees no walk by entity reaches, and damage deep in large trees")
struct VerifyStrayKeyTests {
    /// A store of one employee and one department, and the name of Person's object tree.
    static func fixture() throws -> (StoreFixture, ObjectID, String) {
        let f = try StoreFixture()
        let kim = try f.insert("Employee", ["name": .string("Kim")])
        _ = try f.insert("Department", ["name": .string("Sales")])
        return (f, kim, TreeLayout(model: f.model).objects[f.model.id("Employee").index])
    }

    @Test("a row of an unknown entity, another tree's entity, object number 0 and a short key: a stray fault each, the other checks go on")
    func strayKeys() throws {
        let (f, kim, persons) = try Self.fixture()
        let building = f.model.id("Building")
        let layout = TreeLayout(model: f.model)
        let departments = layout.objects[f.model.id("Department").index]
        let nameIndex = try #require(f.model[f.model.id("Person")].indexes.first)
        try f.store.stores[0].write { txn in
            let tree = try txn.openTree(persons)
            // Entity #99 (the model has 9) after every Person-family key; a Building's before it.
            try tree.put(key: KeyEncoding.objectKey(ObjectID(entity: EntityID(99), number: 1)), value: [1, 2, 3])
            try tree.put(key: KeyEncoding.objectKey(ObjectID(entity: building, number: 4)), value: [1, 2, 3])
            let other = try txn.openTree(departments)
            try other.put(key: KeyEncoding.entityPrefix(f.model.id("Department")) + KeyEncoding.u64(0), value: [1])
            try other.put(key: [0x00, 0x03, 0x01], value: [1])
            // And damage the stray walk must not hide: Kim's name index entry removed.
            var key = KeyEncoding.valuesKey([.string("Kim")])
            KeyEncoding.appendObjectKey(kim, to: &key)
            #expect(try txn.openTree(TreeLayout.index(nameIndex)).delete(key: key))
        }
        let faults = try f.store.verifyAll()
        let stray = faults.filter { $0.kind == "stray" }
        #expect(stray.map(\.description) == [
            "stray (Default.keel, tree \(persons), object Building/4): \(persons) holds key 0007:0000000000000004, Building/4: Building objects are kept in obj/Building",
            "stray (Default.keel, tree \(persons)): \(persons) holds key 0063:0000000000000001, object 1 of entity #99: the model has no entity #99 (it has 9)",
            "stray (Default.keel, tree \(departments)): \(departments) holds key 0003:0000000000000000: object number 0, which no object has",
            "stray (Default.keel, tree \(departments)): \(departments) holds key 00 03 01: 3 bytes, not an object key (2 bytes of entity, 8 of object number)",
        ], "\(faults)")
        #expect(faults.contains { $0.kind == "index" && $0.object == "Employee/\(kim.number)" }, "the index check still ran: \(faults)")
        #expect(faults.count == 5, "\(faults.map(\.description))")
        // Wire form: the tree and the key readable there too.
        #expect(stray[0].json["tree"] == .string(persons))
        #expect(stray[0].json["store"] == "Default")
    }

    /// A store of one department, Sales, and `count` employees in it named e1000000, e1000001, …
    /// (in one save), consistent.
    static func department(of count: Int) throws -> (StoreFixture, ObjectID, [ObjectID]) {
        let f = try StoreFixture()
        let sales = try f.insert("Department", ["name": .string("Sales")])
        var changes: [Change] = []
        var ids: [ObjectID] = []
        for n in 0..<count {
            let id = try f.new("Employee")
            ids.append(id)
            changes.append(.insert(id, values: f.values("Employee", ["name": .string("e\(1_000_000 + n)"), "department": .object(sales)])))
        }
        _ = try f.store.save(ChangeSet(changes: changes))
        try f.expectConsistent()
        return (f, sales, ids)
    }

    @Test("10,000 stray keys in one tree: 10 faults naming a key each and one counting the rest")
    func manyStrayKeys() throws {
        let (f, _, persons) = try Self.fixture()
        try f.store.stores[0].write { txn in
            let tree = try txn.openTree(persons)
            for n in 1...10_000 as ClosedRange<UInt64> {
                try tree.put(key: KeyEncoding.objectKey(ObjectID(entity: EntityID(500), number: n)), value: [0])
            }
        }
        let faults = try f.store.verify()
        #expect(faults.count == ObjectSnapshot.strayKeysListed + 1, "\(faults.count)")
        #expect(faults.allSatisfy { $0.kind == "stray" && $0.tree == persons })
        #expect(faults.first?.message.hasPrefix("\(persons) holds key 01f4:0000000000000001, object 1 of entity #500") == true, "\(faults)")
        #expect(faults.last?.message == "\(persons) holds 9990 more stray keys (10000 in all), the last 01f4:0000000000002710", "\(faults)")
    }

    @Test("a link tree's key that is no link entry, or of an unknown entity: stray, not a stopped check")
    func strayLinkKeys() throws {
        let (f, kim, _) = try Self.fixture()
        let employee = f.model.id("Employee")
        let mentees = try #require(f.model[employee].field(named: "mentees"))
        let links = try #require(TreeLayout(model: f.model).links[employee.index][mentees])
        try f.store.stores[0].write { txn in
            let tree = try txn.openTree(links)
            try tree.put(key: [0x00, 0x01, 0x02], value: [])
            try tree.put(key: KeyEncoding.objectKey(ObjectID(entity: EntityID(77), number: 2)) + KeyEncoding.objectKey(kim), value: [])
        }
        let faults = try f.store.verify()
        #expect(faults.map(\.kind) == ["stray", "stray"], "\(faults)")
        #expect(faults.allSatisfy { $0.tree == links })
        #expect(faults.first?.message == "\(links) holds key 00 01 02, which is no link entry of an object of the model", "\(faults)")
        #expect(faults.last?.message.contains("\(links) holds key 00 4d 00 00 00 00 00 00 00 02 00 01") == true, "\(faults)")
    }

    @Test("a tree the model does not keep in a store file — unknown, or kept in the other file — is a stray fault counting its entries; a consistent two-file store has none")
    func unknownTrees() throws {
        let f = try StoreFixture(model: TestModels.company(twoStores: true))
        let hq = try f.insert("Building", ["name": .string("HQ")])
        _ = try f.insert("Room", ["number": .int(101), "building": .object(hq)])
        _ = try f.insert("Employee", ["name": .string("Kim")])
        try f.expectConsistent()
        let roomIndex = TreeLayout.index(try #require(f.model[f.model.id("Room")].indexes.first))
        try f.store.stores[0].write { txn in
            let nothing = try txn.openTree("obj/Nothing")
            for n in 1...3 as ClosedRange<UInt64> { try nothing.put(key: KeyEncoding.u64(n), value: [1]) }
            try txn.openTree(roomIndex).put(key: [1, 2], value: [])
            _ = try txn.openTree("link/Gone.things")
        }
        let faults = try f.store.verify()
        #expect(faults.map(\.description).sorted() == [
            "stray (Default.keel, tree \(roomIndex)): Default.keel holds tree \(roomIndex) (1 entry), which the model does not keep there (the model keeps it in Sites.keel)",
            "stray (Default.keel, tree link/Gone.things): Default.keel holds tree link/Gone.things (0 entries), which the model does not keep there",
            "stray (Default.keel, tree obj/Nothing): Default.keel holds tree obj/Nothing (3 entries), which the model does not keep there",
        ], "\(faults)")
    }

    @Test("damage past the first chunks of large index and link trees is found: a missing and a stale index entry, a stray link key, nothing else")
    func damageDeepInLargeTrees() throws {
        let (f, sales, ids) = try Self.department(of: 2_500)
        let nameIndex = TreeLayout.index(try #require(f.model[f.model.id("Person")].indexes.first))
        let links = try #require(TreeLayout(model: f.model).links[f.model.id("Department").index][f.model.field("Department", "employees")])
        let (missing, stale) = (ids[2_000], ids[2_400])
        try f.store.stores[0].write { txn in
            let index = try txn.openTree(nameIndex)
            var key = KeyEncoding.valuesKey([.string("e1002000")])
            KeyEncoding.appendObjectKey(missing, to: &key)
            #expect(try index.delete(key: key))
            var wrong = KeyEncoding.valuesKey([.string("zz")])
            KeyEncoding.appendObjectKey(stale, to: &wrong)
            try index.put(key: wrong, value: [])
            try txn.openTree(links).put(key: KeyEncoding.objectKey(sales) + [9], value: [])
        }
        let faults = try f.store.verify()
        #expect(faults.count == 3, "\(faults.map(\.description))")
        #expect(faults.contains { $0.kind == "index" && $0.object == missing.text(in: f.model) && $0.message.contains("has no entry") }, "\(faults)")
        #expect(faults.contains { $0.kind == "index" && $0.object == stale.text(in: f.model) && $0.message.contains("stale entry") }, "\(faults)")
        #expect(faults.contains { $0.kind == "stray" && $0.tree == links }, "\(faults)")
    }

    @Test("link entries of missing owners, an owner's entries across chunks: one link fault per missing owner, in key order")
    func linkEntriesOfMissingOwners() throws {
        let (f, _, ids) = try Self.department(of: 2_500)
        let department = f.model.id("Department")
        let links = try #require(TreeLayout(model: f.model).links[department.index][f.model.field("Department", "employees")])
        let missing = [9_001, 9_002, 9_003].map { ObjectID(entity: department, number: UInt64($0)) }
        try f.store.stores[0].write { txn in
            let tree = try txn.openTree(links)
            for (owner, count) in zip(missing, [1_500, 3, 1_200]) {
                for member in ids.prefix(count) { try tree.put(key: KeyEncoding.objectKey(owner) + KeyEncoding.objectKey(member), value: []) }
            }
        }
        let faults = try f.store.verify()
        #expect(faults.map(\.description) == missing.map { owner in
            "link (Default.keel, tree \(links), object \(owner.text(in: f.model))): \(links) holds entries of missing \(owner.text(in: f.model))"
        }, "\(faults.map(\.description))")
    }

    @Test("an inverse missing from a large to-many is found by a look-up, ordered or not: one inverse fault naming both objects each")
    func inverseMissingFromLargeToMany() throws {
        let (f, sales, ids) = try Self.department(of: 1_500)
        let project = try f.insert("Project", ["title": .string("Atlas")])
        // Project.members is ordered (maxCount 5): three members, its inverse Employee.projects.
        _ = try f.store.save(ChangeSet(changes: [.add(project, field: f.model.field("Project", "members"), members: Array(ids[0..<3]), at: nil)]))
        try f.expectConsistent()
        let layout = TreeLayout(model: f.model)
        let employees = try #require(layout.links[f.model.id("Department").index][f.model.field("Department", "employees")])
        let members = try #require(layout.links[f.model.id("Project").index][f.model.field("Project", "members")])
        try f.store.stores[0].write { txn in
            #expect(try txn.openTree(employees).delete(key: KeyEncoding.objectKey(sales) + KeyEncoding.objectKey(ids[1_234])))
            // The ordered entry of ids[1]: the key is the owner and a position, the value the member.
            let tree = try txn.openTree(members)
            var cursor = try tree.cursor()
            var valid = try cursor.seekFirst()
            var doomed: [UInt8]?
            while valid {
                if try cursor.value() == KeyEncoding.objectKey(ids[1]) { doomed = try cursor.key }
                valid = try cursor.next()
            }
            #expect(try tree.delete(key: try #require(doomed)))
        }
        let faults = try f.store.verify()
        #expect(faults.map(\.description).sorted() == [
            "inverse (Default.keel, object \(ids[1].text(in: f.model))): \(ids[1].text(in: f.model)).projects holds \(project.text(in: f.model)), but \(project.text(in: f.model)).members does not hold \(ids[1].text(in: f.model))",
            "inverse (Default.keel, object \(ids[1_234].text(in: f.model))): \(ids[1_234].text(in: f.model)).department holds \(sales.text(in: f.model)), but \(sales.text(in: f.model)).employees does not hold \(ids[1_234].text(in: f.model))",
        ].sorted(), "\(faults)")
    }
}
