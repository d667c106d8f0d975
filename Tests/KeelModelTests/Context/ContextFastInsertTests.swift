// The fast typed INSERT (ObjectContext+FastInsert.swift) leaves exactly the state the general
// path leaves for the same values — rows, defaults, inverse members, the change set a save hands
// the store — and every value it does not take goes to the general path, which reports the same
// error as before and changes nothing.

import Collections
import Testing

@testable import KeelModel

@Suite("Context fast insert")
struct ContextFastInsertTests {
    static let modelText = """
        { "name": "Fast", "version": 1, "entities": [
          { "name": "Team",
            "attributes": [ { "name": "name", "type": "string" } ],
            "relationships": [ { "name": "members", "destination": "Member", "inverse": "team", "toMany": true },
                               { "name": "lead", "destination": "Member", "inverse": "leads" } ] },
          { "name": "Member",
            "attributes": [
              { "name": "name",  "type": "string", "optional": false },
              { "name": "level", "type": "int16", "defaultValue": 3 },
              { "name": "note",  "type": "string", "defaultValue": "none" },
              { "name": "pay",   "type": "decimal" },
              { "name": "rate",  "type": "double" } ],
            "relationships": [ { "name": "team", "destination": "Team", "inverse": "members" },
                               { "name": "leads", "destination": "Team", "inverse": "lead", "toMany": true } ] }
        ] }
        """

    /// Two contexts on two stores with the same teams; one inserts typed values (fast path), the
    /// other the same values as JSON (the general path).
    static func pair() throws -> (fast: ObjectContext, general: ObjectContext, teams: [ObjectID], model: Model) {
        let model = try ModelLoader.load(text: modelText)
        var contexts: [ObjectContext] = []
        var teams: [ObjectID] = []
        for _ in 0..<2 {
            let store: MemoryStore
            (store, teams, _) = try Self.store(teams: 3, model: model)
            contexts.append(ObjectContext(store: store))
        }
        return (contexts[0], contexts[1], teams, model)
    }

    /// A store holding `n` saved teams.
    static func store(teams n: Int, model given: Model? = nil) throws -> (MemoryStore, [ObjectID], Model) {
        let model = try given ?? ModelLoader.load(text: modelText)
        let store = MemoryStore(model: model)
        let setup = ObjectContext(store: store)
        let teams = try (0..<n).map { i in try setup.insert(entity: "Team", values: ["name": .string("T\(i)")]) }
        try setup.save()
        return (store, teams, model)
    }

    /// A typed (fast) insert of a member named `name` into `team`.
    static func member(_ context: ObjectContext, _ name: String, _ team: ObjectID) throws(KeelError) -> ObjectID {
        try context.insert(entity: "Member", typedValues: ["name": .string(name), "team": .object(team)])
    }

    /// `context` links a member to `team`, `deleter` deletes the team, and the context's next
    /// insert into it must be refused (NOT_FOUND).
    static func expectRefusedAfterDelete(
        _ context: ObjectContext, team: ObjectID, deletedBy deleter: ObjectContext, _ what: String
    ) throws {
        _ = try member(context, "before", team)
        try deleter.delete(team)
        expectError(.notFound, what) { () throws(KeelError) in _ = try member(context, "after", team) }
    }

    /// Runs `body`, which must fail with `code`; `what` names what it tried, for the issue.
    static func expectError(_ code: KeelError.Code, _ what: String, _ body: () throws(KeelError) -> Void) {
        do {
            try body()
            Issue.record("\(what) was accepted")
        } catch {
            #expect(error.code == code, "\(error)")
        }
    }

    /// The two contexts made the same objects with the same IDs and hold the same state: their
    /// changes, the objects as read back, the teams' members (inverses), the change sets.
    private static func expectSameState(
        _ fast: ObjectContext, _ fastIDs: [ObjectID], _ general: ObjectContext, _ generalIDs: [ObjectID],
        teams: [ObjectID], model: Model, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(fastIDs == generalIDs, sourceLocation: sourceLocation)
        #expect(fast.changes() == general.changes(), sourceLocation: sourceLocation)
        for id in fastIDs { #expect(try fast.get(id).json(in: model) == general.get(id).json(in: model), sourceLocation: sourceLocation) }
        for team in teams {
            #expect(
                try fast.get(team, include: ["members"]).json(in: model) == general.get(team, include: ["members"]).json(in: model),
                sourceLocation: sourceLocation)
        }
        let a = try fast.overlay.changeSet()
        let b = try general.overlay.changeSet()
        #expect(a.changes == b.changes, sourceLocation: sourceLocation)
        #expect(a.originals.keys.sorted() == b.originals.keys.sorted(), sourceLocation: sourceLocation)
    }

    @Test("typed inserts leave the state JSON inserts leave: rows, defaults, inverse members, change set")
    func sameState() throws {
        let (fast, general, teams, model) = try Self.pair()
        let members: [[String: Value]] = [
            ["name": .string("a"), "level": .int(7), "pay": .decimal(12.5), "team": .object(teams[0])],
            ["name": .string("b"), "team": .object(teams[1]), "rate": .double(0.25)],
            ["name": .string("c"), "note": .null, "team": .null],
            ["name": .string("d"), "level": .null, "team": .object(teams[0])],
        ]
        var fastIDs: [ObjectID] = []
        var generalIDs: [ObjectID] = []
        for values in members {
            fastIDs.append(try fast.insert(entity: "Member", typedValues: values))
            var json: [String: JSON] = [:]
            for (name, value) in values {
                switch value {
                case .string(let s): json[name] = .string(s)
                case .int(let i): json[name] = .int(i)
                case .double(let d): json[name] = .double(d)
                case .decimal(let d): json[name] = .string("\(d)")
                case .object(let id): json[name] = .string(id.text(in: model))
                default: json[name] = .null
                }
            }
            generalIDs.append(try general.insert(entity: "Member", values: .object(.init(uniqueKeysWithValues: json.map { ($0, $1) }))))
        }
        try Self.expectSameState(fast, fastIDs, general, generalIDs, teams: teams, model: model)
        // Defaults where left out, null where given null.
        let d = try fast.overlay.object(fastIDs[3])!
        let member = model.entity(named: "Member")!
        #expect(d.values[member.field(named: "level")!] == .null)
        #expect(d.values[member.field(named: "note")!] == .string("none"))
        let c = try fast.overlay.object(fastIDs[2])!
        #expect(c.values[member.field(named: "level")!] == .int(3))
        #expect(c.values[member.field(named: "note")!] == .null)
    }

    @Test("wire (JSON) inserts through the fast path leave the state the general path leaves: decoded values, conversions, defaults, inverse members, change set")
    func wireSameState() throws {
        let (fast, general, teams, model) = try Self.pair()
        let team = { (i: Int) -> JSON in .string(teams[i].text(in: model)) }
        let members: [OrderedDictionary<String, JSON>] = [
            ["name": "a", "level": 7, "pay": "12.5", "team": team(0)],
            // An int into a double and into a decimal: converted by the decoding, as the general path converts.
            ["name": "b", "team": team(1), "rate": 2, "pay": 5],
            ["name": "c", "note": .null, "team": .null],
            ["name": "d", "level": .null, "team": team(0), "rate": "Infinity"],
        ]
        var fastIDs: [ObjectID] = []
        var generalIDs: [ObjectID] = []
        for values in members {
            fastIDs.append(try fast.insert(entity: "Member", values: .object(values)))
            generalIDs.append(try general.insert(entity: "Member", values: .object(values), fast: false))
        }
        // The fast path ran (it makes the entity's plan), the forced general path did not.
        let memberIndex = model.entity(named: "Member")!.id.index
        #expect(fast.insertPlans.count > memberIndex && fast.insertPlans[memberIndex] != nil)
        #expect(general.insertPlans.allSatisfy { $0 == nil })
        try Self.expectSameState(fast, fastIDs, general, generalIDs, teams: teams, model: model)
        let member = model.entity(named: "Member")!
        let row = try fast.overlay.object(fastIDs[1])!
        #expect(row.values[member.field(named: "rate")!] == .double(2))
        #expect(row.values[member.field(named: "level")!] == .int(3))
        try fast.save()
        try general.save()
        for id in fastIDs { #expect(try fast.get(id).json(in: model) == general.get(id).json(in: model)) }
    }

    @Test("wire values the fast path does not take get the general path's errors and change nothing",
          arguments: [
            (#"{"name":"x","level":70000}"#, KeelError.Code.type),
            (#"{"name":"x","nickname":"y"}"#, .noSuchProperty),
            (#"{"name":3}"#, .type),
            (#"{"name":"x","rate":"fast"}"#, .type),
            (#"{"name":"x","team":"Member/1"}"#, .type),
            (#"{"name":"x","team":"Team/99"}"#, .notFound),
            (#"{"name":"x","team":"Team-1"}"#, .type),
            (#"{"name":"x","team":["Team/1"]}"#, .type),
            (#"{"name":"x","members":"Member/1"}"#, .noSuchProperty),
          ])
    func wireRefused(text: String, code: KeelError.Code) throws {
        let (fast, general, _, _) = try Self.pair()
        let values = try JSON.parse(Array(text.utf8))
        for context in [fast, general] {
            _ = try context.insert(entity: "Member", values: ["name": "first"])
            let before = context.changes()
            do {
                _ = try context.insert(entity: "Member", values: values, fast: context === fast)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error.code == code, "\(error)")
            }
            #expect(context.changes() == before)
        }
    }

    @Test("values the fast path does not take get the general path's errors and change nothing",
          arguments: [
            (["name": Value.string("x"), "level": .int(70_000)], KeelError.Code.type),
            (["name": .string("x"), "nickname": .string("y")], .noSuchProperty),
            (["name": .int(3)], .type),
            (["name": .string("x"), "team": .object(ObjectID(entity: EntityID(1), number: 1))], .type),
            (["name": .string("x"), "team": .object(ObjectID(entity: EntityID(0), number: 99))], .notFound),
            (["name": .string("x"), "team": .objects([])], .type),
          ])
    func refused(values: [String: Value], code: KeelError.Code) throws {
        let (fast, _, _, _) = try Self.pair()
        _ = try fast.insert(entity: "Member", typedValues: ["name": .string("first")])
        let before = fast.changes()
        #expect(throws: KeelError.self) { try fast.insert(entity: "Member", typedValues: values) }
        do { try fast.insert(entity: "Member", typedValues: values) } catch { #expect(error.code == code, "\(error)") }
        #expect(fast.changes() == before)
    }

    @Test("conversions and relationships the fast path leaves alone still work")
    func generalCases() throws {
        let (fast, _, teams, model) = try Self.pair()
        // An int into a double and a decimal: converted by the general path.
        let id = try fast.insert(entity: "Member", typedValues: ["name": .string("x"), "rate": .int(2), "pay": .int(5)])
        let row = try fast.overlay.object(id)!
        let member = model.entity(named: "Member")!
        #expect(row.values[member.field(named: "rate")!] == .double(2))
        // A to-many in the insert (the general path), and a one-to-many's other side.
        let lead = try fast.insert(entity: "Member", typedValues: ["name": .string("lead"), "leads": .objects([teams[2]])])
        #expect(try fast.overlay.value(of: teams[2], field: model.entity(named: "Team")!.field(named: "lead")!) == .object(lead))
    }

    @Test("a team's original, found again from insert to insert without a lookup, is dropped by an undone command and taken again by the next")
    func originalAfterUndo() throws {
        let (fast, _, teams, _) = try Self.pair()
        // Two inserts into the same team: the second finds the original without looking it up.
        _ = try Self.member(fast, "a", teams[0])
        _ = try Self.member(fast, "b", teams[0])
        #expect(fast.overlay.originals[teams[0]] != nil)
        // A command that touches another team's original (twice: the second finds it remembered)
        // and then fails: undone, original and all.
        #expect(throws: KeelError.self) {
            try fast.perform { (o) throws(KeelError) in
                try o.touchOriginal(teams[1])
                try o.touchOriginal(teams[1])
                throw KeelError(.type, "fails after the touch")
            }
        }
        #expect(fast.overlay.originals[teams[1]] == nil)
        // The undo forgot the remembered object too: touching it again records its original again.
        try fast.perform { (o) throws(KeelError) in try o.touchOriginal(teams[1]) }
        #expect(fast.overlay.originals[teams[1]] != nil)
        // A failed command right after a remembered touch: team 0's original (from an earlier,
        // committed command) stays, and the next insert into team 0 still links it.
        #expect(throws: KeelError.self) {
            try fast.perform { (o) throws(KeelError) in
                try o.touchOriginal(teams[0])
                throw KeelError(.type, "fails after the touch")
            }
        }
        #expect(fast.overlay.originals[teams[0]] != nil)
        // After a save every original is gone, and the next insert into team 0 records it anew.
        try fast.save()
        #expect(fast.overlay.originals.isEmpty)
        _ = try Self.member(fast, "c", teams[0])
        #expect(fast.overlay.originals[teams[0]] != nil)
        try fast.save()
        #expect(try fast.count(entity: "Member") == 3)
    }

    @Test("a remembered to-one target stops counting once the context deletes it or its new snapshot has lost it")
    func rememberedTargetGone() throws {
        let (store, teams, _) = try Self.store(teams: 2)
        let context = ObjectContext(store: store)
        _ = try Self.member(context, "a", teams[0])
        _ = try Self.member(context, "b", teams[0])
        // Another client deletes team 0; after a refresh the context reads a snapshot without it.
        let other = ObjectContext(store: store)
        try other.delete(teams[0])
        try other.save()
        context.refresh()
        Self.expectError(.notFound, "an insert into a team the snapshot no longer has") { () throws(KeelError) in
            _ = try Self.member(context, "c", teams[0])
        }
        // The context itself deletes team 1 after linking to it: the next link is refused too.
        try Self.expectRefusedAfterDelete(context, team: teams[1], deletedBy: context, "an insert into a team the context deleted")
    }

    @Test("targets spread over many teams are remembered one by one: a deleted one is refused, the others still link, every original is recorded once")
    func manyRememberedTargets() throws {
        let (store, teams, model) = try Self.store(teams: 5)
        let context = ObjectContext(store: store)
        var inserted: [ObjectID: [ObjectID]] = [:]
        for i in 0..<20 {
            let team = teams[(i * 3) % teams.count]
            inserted[team, default: []].append(
                try Self.member(context, "m\(i)", team))
        }
        #expect(context.changes().updated == teams)
        #expect(Set(context.overlay.originals.keys) == Set(teams))
        try context.delete(teams[2])
        Self.expectError(.notFound, "an insert into a remembered team the context deleted") { () throws(KeelError) in
            _ = try Self.member(context, "late", teams[2])
        }
        inserted[teams[4], default: []].append(
            try Self.member(context, "last", teams[4]))
        try context.save()
        let reader = try ObjectContext(store: store).readState()
        let membersField = try #require(model.entity(named: "Team")?.field(named: "members"))
        for team in teams where team != teams[2] {
            #expect(try reader.members(of: team, field: membersField) == inserted[team, default: []].sorted())
        }
        // Team 2's members went with it (nullify leaves them, so they exist without a team).
        #expect(try ObjectContext(store: store).count(entity: "Member") == 21)
    }

    @Test("a remembered team whose original an undone insert recorded has it recorded again by the next insert")
    func rememberedOriginalAfterUndo() throws {
        let (fast, _, teams, _) = try Self.pair()
        _ = try Self.member(fast, "a", teams[0])
        // Team 1 is remembered, and its original recorded, by an insert that then fails the
        // pending-object limit: undone, original and all.
        fast.pendingObjectLimit = 2
        Self.expectError(.limit, "the insert over the limit") { () throws(KeelError) in
            _ = try Self.member(fast, "b", teams[1])
        }
        #expect(fast.overlay.originals[teams[1]] == nil)
        fast.pendingObjectLimit = nil
        // The next insert into team 1 must record its original again (not trust the undone one).
        _ = try Self.member(fast, "c", teams[1])
        _ = try Self.member(fast, "d", teams[1])
        #expect(fast.overlay.originals[teams[1]] != nil)
        #expect(fast.changes().updated == [teams[0], teams[1]])
    }

    @Test("a child context does not remember its parent's objects as targets: one the parent deletes is refused")
    func childDoesNotRemember() throws {
        let (parent, _, teams, _) = try Self.pair()
        let child = ObjectContext(parent: parent)
        try Self.expectRefusedAfterDelete(child, team: teams[0], deletedBy: parent, "an insert into a team the parent deleted")
    }

    @Test("a fast insert changed later in the same context saves its insert-time values and then the change, as the general path does")
    func fastInsertThenUpdate() throws {
        let (fast, general, teams, model) = try Self.pair()
        for context in [fast, general] {
            let id: ObjectID
            if context === fast {
                id = try Self.member(context, "a", teams[0])
            } else {
                id = try context.insert(entity: "Member", values: ["name": "a", "team": .string(teams[0].text(in: model))])
            }
            try context.update(id, typedValues: ["name": .string("b"), "team": .object(teams[1])])
        }
        let a = try fast.overlay.changeSet()
        let b = try general.overlay.changeSet()
        #expect(a.changes == b.changes)
        let member = model.entity(named: "Member")!
        guard case .insertRow(_, let row) = a.changes.first else {
            Issue.record("the first change is not the insert: \(a.changes)")
            return
        }
        #expect(row[member.field(named: "name")!] == .string("a"))
        let id = try #require(fast.changes().inserted.first)
        #expect(try fast.overlay.object(id)!.values[member.field(named: "name")!] == .string("b"))
        try fast.save()
        try general.save()
        #expect(try fast.get(id).json(in: model) == general.get(id).json(in: model))
    }

    @Test("members a fast insert appended without hashing read, unlink, relink and undo like any other member")
    func freshMembers() throws {
        let (fast, general, teams, model) = try Self.pair()
        let membersField = try #require(model.entity(named: "Team")?.field(named: "members"))
        for context in [fast, general] {
            var ids: [ObjectID] = []
            for i in 0..<4 {
                if context === fast {
                    ids.append(try Self.member(context, "m\(i)", teams[0]))
                } else {
                    ids.append(try context.insert(entity: "Member", values: ["name": .string("m\(i)"), "team": .string(teams[0].text(in: model))]))
                }
            }
            #expect(try context.readState().members(of: teams[0], field: membersField) == ids)
            // Deleting a member unlinks it (nullify), moving one to another team unlinks and links.
            try context.delete(ids[1])
            try context.update(ids[2], typedValues: ["team": .object(teams[1])])
            #expect(try context.readState().members(of: teams[0], field: membersField) == [ids[0], ids[3]])
            #expect(try context.readState().members(of: teams[1], field: membersField) == [ids[2]])
            // Back to team 0; a failed insert (over the limit) leaves the members as they were.
            try context.update(ids[2], typedValues: ["team": .object(teams[0])])
            context.pendingObjectLimit = context.pendingObjectCount
            // The limit is checked after the insert linked its member: the undo is what restores.
            Self.expectError(.limit, "an insert over the limit") { () throws(KeelError) in
                _ = try Self.member(context, "over", teams[0])
            }
            context.pendingObjectLimit = nil
            #expect(try context.readState().members(of: teams[0], field: membersField) == [ids[0], ids[2], ids[3]])
            let late = try Self.member(context, "late", teams[0])
            #expect(try context.readState().members(of: teams[0], field: membersField) == [ids[0], ids[2], ids[3], late])
        }
        #expect(fast.changes() == general.changes())
        let a = try fast.overlay.changeSet()
        let b = try general.overlay.changeSet()
        #expect(a.changes == b.changes)
        try fast.save()
        try general.save()
        for team in teams {
            #expect(try fast.get(team, include: ["members"]).json(in: model) == general.get(team, include: ["members"]).json(in: model))
        }
    }

    @Test("a fast insert over the limit into a team with no pending members leaves no members entry behind")
    func freshMemberUndoFirst() throws {
        let (fast, _, teams, model) = try Self.pair()
        let membersField = try #require(model.entity(named: "Team")?.field(named: "members"))
        fast.pendingObjectLimit = 0
        Self.expectError(.limit, "an insert over the limit") { () throws(KeelError) in
            _ = try Self.member(fast, "x", teams[2])
        }
        fast.pendingObjectLimit = nil
        #expect(try fast.readState().members(of: teams[2], field: membersField) == [])
        #expect(fast.overlay.members.isEmpty)
        #expect(!fast.changes().hasChanges)
    }
}
