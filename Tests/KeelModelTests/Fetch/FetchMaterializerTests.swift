// The materializer's objects against GET's (ObjectContext.managedObject, a separate path), row
// for row: chunks of one entity and of sibling sub-entities with different to-many fields at one
// field number, to-one targets and members deleted in the store (left dangling by noAction) and
// pending in the context, pending nullified references, transients, `include`, the first read's
// chunks and the streamed ones after it.

import Foundation
import Testing

@testable import KeelModel

@Suite("Fetch materializer")
struct FetchMaterializerTests {
    /// Member (abstract) ← Player (boots) and Fan (scarves): both to-many at field 4, after
    /// name, the transient mood, team and coach. Team.members and Member.team are noAction both
    /// ways (a deleted team leaves its members' `team` dangling; a deleted member, the team's
    /// list); Boot.player is noAction (a deleted boot dangles in its player's list).
    static func model() throws -> Model {
        try ModelLoader.load(text: """
            { "name": "Teams", "version": 1, "entities": [
              { "name": "Member", "abstract": true, "attributes": [
                  { "name": "name", "type": "string", "indexed": true },
                  { "name": "mood", "type": "string", "transient": true, "defaultValue": "calm" } ],
                "relationships": [
                  { "name": "team", "destination": "Team", "inverse": "members", "deleteRule": "noAction" },
                  { "name": "coach", "destination": "Coach", "inverse": "trainees" } ] },
              { "name": "Player", "parent": "Member", "relationships": [
                  { "name": "boots", "destination": "Boot", "inverse": "player", "toMany": true } ] },
              { "name": "Fan", "parent": "Member", "relationships": [
                  { "name": "scarves", "destination": "Scarf", "inverse": "fan", "toMany": true } ] },
              { "name": "Team", "attributes": [ { "name": "name", "type": "string" } ], "relationships": [
                  { "name": "members", "destination": "Member", "inverse": "team", "toMany": true, "deleteRule": "noAction" } ] },
              { "name": "Coach", "attributes": [ { "name": "name", "type": "string" } ], "relationships": [
                  { "name": "trainees", "destination": "Member", "inverse": "coach", "toMany": true } ] },
              { "name": "Boot", "attributes": [ { "name": "size", "type": "int32" } ], "relationships": [
                  { "name": "player", "destination": "Player", "inverse": "boots", "deleteRule": "noAction" } ] },
              { "name": "Scarf", "attributes": [ { "name": "colour", "type": "string" } ], "relationships": [
                  { "name": "fan", "destination": "Fan", "inverse": "scarves" } ] } ] }
            """)
    }

    @Test("fetched objects equal GET's row for row, in order, with their inclusions: one entity and mixed chunks, dangling and pending deletes, transients, the first read and the streamed rows")
    func objectsAsGet() throws {
        let model = try Self.model()
        let store = try StoreFixture(model: model)
        let c = ObjectContext(store: store.store)
        func text(_ id: ObjectID) -> JSON { .string(id.text(in: model)) }
        let teams = try (0..<4).map { i in try c.insert(entity: "Team", values: ["name": .string("T\(i)")]) }
        let coaches = try (0..<2).map { i in try c.insert(entity: "Coach", values: ["name": .string("C\(i)")]) }
        // More members than the first read holds (ObjectContext.pinnedRows), so rows stream after it.
        let count = ObjectContext.pinnedRows + 150
        var members: [ObjectID] = []
        var boots: [ObjectID] = []
        for i in 0..<count {
            let fan = i % 3 == 0
            var values: JSON = ["name": .string(String(format: "M%05d", i))]
            if case .object(var o) = values {
                if i % 5 != 4 { o["team"] = text(teams[i % 4]) }
                if i % 7 != 0 { o["coach"] = text(coaches[i % 2]) }
                values = .object(o)
            }
            let member = try c.insert(entity: fan ? "Fan" : "Player", values: values)
            members.append(member)
            if fan, i % 2 == 0 {
                _ = try c.insert(entity: "Scarf", values: ["colour": "red", "fan": text(member)])
            } else if !fan, i % 4 == 1 {
                for size in 40..<(40 + i % 3 + 1) { boots.append(try c.insert(entity: "Boot", values: ["size": .int(Int64(size)), "player": text(member)])) }
            }
        }
        try c.save()
        // Saved deletes left dangling (noAction): team 1 in its members' rows, a boot in its
        // player's list.
        _ = try c.delete(teams[1])
        _ = try c.delete(boots[3])
        try c.save()

        let reader = ObjectContext(store: store.store)
        // Pending in the reader: a team deleted (its members' references dangle over the
        // snapshot: read as null), a boot deleted (left out of its player's list), a coach
        // deleted (nullified: its trainees are pending rows), moods set, a new player.
        _ = try reader.delete(teams[2])
        _ = try reader.delete(boots[10])
        _ = try reader.delete(coaches[1])
        try reader.update(members[4], values: ["mood": "glad"])
        try reader.update(members[9], values: ["mood": "cross"])
        let newcomer = try reader.insert(entity: "Player", values: ["name": "M00007a", "team": text(teams[0])])

        func check(_ request: FetchRequest, include: [String], expected: [ObjectID], _ what: String) throws {
            var request = request
            request.include = include
            var seen: [ObjectID] = []
            _ = try reader.fetch(request) { row in
                seen.append(row.id)
                guard let object = row.object else {
                    Issue.record("\(what): no object for \(row.id)")
                    return true
                }
                let got = (try? reader.get(row.id, include: include))
                #expect(object.id == row.id && object.entity.id == row.id.entity, "\(what): \(object.idText)")
                #expect(object.values == got?.values, "\(what): \(object.idText)")
                for name in include {
                    #expect(object.included[name]?.map(\.id) == got?.included[name]?.map(\.id), "\(what): \(object.idText).\(name)")
                    #expect(object.included[name]?.map(\.values) == got?.included[name]?.map(\.values), "\(what): \(object.idText).\(name)")
                }
                return true
            }
            #expect(seen == expected, "\(what): the rows in name order")
        }
        var byName = members
        byName.insert(newcomer, at: 8)  // "M00007a" sorts after "M00007"
        let byNameRequest = FetchRequest(entity: "Member", sort: [KeelSortDescriptor(key: "name")])
        try check(byNameRequest, include: [], expected: byName, "members")
        // The first 300 names (several chunks, each row's inclusions checked).
        let first = FetchRequest(entity: "Member", predicate: "name < 'M00300'", sort: [KeelSortDescriptor(key: "name")])
        try check(first, include: ["team", "coach"], expected: Array(byName.prefix(301)), "members with team and coach")
        var firstPlayers = first
        firstPlayers.entity = "Player"
        try check(firstPlayers, include: ["boots", "team"], expected: byName.prefix(301).filter { $0.entity == model.id("Player") }, "players")
        try check(FetchRequest(entity: "Fan", sort: [KeelSortDescriptor(key: "name")]), include: [], expected: byName.filter { $0.entity == model.id("Fan") }, "fans")
        try check(FetchRequest(entity: "Member", sort: [KeelSortDescriptor(key: "name")], limit: 7, offset: 3), include: ["coach"], expected: Array(byName[3..<10]), "a page")
        // The cases the store's state was built for are there to be read.
        let objects = try reader.fetch(byNameRequest).compactMap(\.object)
        let team = model.field("Member", "team"), coach = model.field("Member", "coach"), mood = model.field("Member", "mood")
        #expect(objects[4].values[mood] == .string("glad") && objects[5].values[mood] == .string("calm"))
        #expect(objects.contains { $0.values[team] == .object(teams[0]) } && !objects.contains { $0.values[team] == .object(teams[1]) || $0.values[team] == .object(teams[2]) })
        #expect(!objects.contains { $0.values[coach] == .object(coaches[1]) } && objects.contains { $0.values[coach] == .object(coaches[0]) })
        let bootsField = model.field("Player", "boots")
        #expect(bootsField == model.field("Fan", "scarves"))
        let bootLists = objects.compactMap { o -> [ObjectID]? in if case .objects(let l) = o.values[bootsField], o.entity.name == "Player" { l } else { nil } }
        #expect(!bootLists.joined().contains(boots[3]) && !bootLists.joined().contains(boots[10]) && bootLists.joined().contains(boots[11]))
    }
}
