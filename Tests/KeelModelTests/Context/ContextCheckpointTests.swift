// A context gives its snapshot back as soon as its save has committed, before the save waits for
// durability and runs the automatic checkpoint (ContextStore.save(_:mergePolicy:committed:)): a
// context that reads (an insert with a to-one) and saves in a loop must let those checkpoints
// empty the log. A save that fails before its commit keeps the snapshot.

import KeelStorage
import Testing

@testable import KeelModel

@Suite("Context snapshots and checkpoints")
struct ContextCheckpointTests {
    static let threshold: UInt64 = 256 << 10

    /// A store with a small checkpoint threshold holding one saved team.
    static func fixture(team name: String, background: Bool = false) throws -> (StoreFixture, ObjectID) {
        let fixture = try StoreFixture(model: ModelLoader.load(text: ContextFastInsertTests.modelText)) { options in
            options.storage.checkpointThresholdBytes = threshold
            options.storage.checkpointInBackground = background
        }
        let setup = ObjectContext(store: fixture.store)
        let team = try setup.insert(entity: "Team", typedValues: ["name": .string(name)])
        try setup.save()
        return (fixture, team)
    }

    @Test("a context that reads and saves in a loop lets the save's checkpoint empty the log (inline and on the background checkpointer)",
          arguments: [false, true])
    func loopKeepsLogBounded(background: Bool) throws {
        let (fixture, team) = try Self.fixture(team: "T", background: background)
        let context = ObjectContext(store: fixture.store)
        let filler = String(repeating: "x", count: 3_000)
        var largestGrowth: UInt64 = 0
        var written: UInt64 = 0
        var resets = 0
        var before = try fixture.store.stores[0].statistics().logFrameBytes
        for save in 0..<12 {
            for i in 0..<40 {
                // The to-one reads the team: the context holds a snapshot until it saves.
                try context.insert(entity: "Member", typedValues: ["name": .string("\(save)-\(i)-\(filler)"), "team": .object(team)])
            }
            #expect(context.hasSnapshot)
            try context.save()
            #expect(!context.hasSnapshot)
            if background { try fixture.store.waitForBackgroundCheckpoints() }
            let after = try fixture.store.stores[0].statistics().logFrameBytes
            if after >= before {
                largestGrowth = max(largestGrowth, after - before)
                written += after - before
            } else {
                resets += 1
                written += after
            }
            // Past the threshold, the save's own checkpoint empties the log: it never holds more
            // than the threshold and one save's frames.
            #expect(after <= Self.threshold + largestGrowth, "save \(save): \(after) bytes of log frames")
            before = after
        }
        #expect(written > 3 * Self.threshold, "the loop wrote \(written) bytes of log frames")
        #expect(resets >= 2)
        #expect(try fixture.members(team, "members").count == 12 * 40)
        try fixture.expectConsistent()
    }

    @Test("a save that fails before its commit keeps the context's snapshot")
    func failedSaveKeepsSnapshot() throws {
        let (fixture, team) = try Self.fixture(team: "first")
        let context = ObjectContext(store: fixture.store)
        #expect(try context.count(entity: "Team") == 1)
        // Another client's save after the context's snapshot was taken.
        let other = ObjectContext(store: fixture.store)
        try other.insert(entity: "Team", typedValues: ["name": .string("second")])
        try other.save()
        // `name` is required: the save fails validation and writes nothing.
        let member = try context.insert(entity: "Member", typedValues: ["level": .int(1), "team": .object(team)])
        #expect(throws: KeelError.self) { try context.save() }
        #expect(context.hasSnapshot)
        #expect(try context.count(entity: "Team") == 1)
        try context.update(member, typedValues: ["name": .string("m")])
        try context.save()
        #expect(!context.hasSnapshot)
        #expect(try context.count(entity: "Team") == 2)
        #expect(try fixture.members(team, "members") == [member])
        try fixture.expectConsistent()
    }
}
