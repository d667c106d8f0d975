// verify reads every key of the object and link trees, not only the ranges of the model's
// entities: a key the walks by entity never reach (an entity the model does not have, another
// tree's entity, a key that is no object key) is a `stray` fault naming the tree and the key,
// the rest of the store still checked; past 10 stray keys in one tree, one fault counts the rest.
// The stray keys are written through the engine directly, below the object layer.

import KeelStorage
import Testing

@testable import KeelModel

@Suite("verify finds keys no walk by entity reaches")
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
}
