// Relationship operations at random against a simple in-memory model of the graph (written
// here by hand, independent of GraphRules), with a printed seed (KEEL_SEED replays). After every
// save and every reopen, the store's relationships must equal the model's on both sides, and
// the store's own verify must find nothing.

import Foundation
import KeelStorage
import Testing

@testable import KeelModel

/// The graph as the test expects it.
struct GraphModel {
    var departments: Set<ObjectID> = []
    var employees: Set<ObjectID> = []
    var projects: Set<ObjectID> = []
    var desks: Set<ObjectID> = []
    var department: [ObjectID: ObjectID] = [:]  // employee → department
    var mentor: [ObjectID: ObjectID] = [:]  // employee → mentor
    var members: [ObjectID: [ObjectID]] = [:]  // project → ordered employees
    var owner: [ObjectID: ObjectID] = [:]  // desk → employee (one-to-one)

    mutating func deleteEmployee(_ e: ObjectID) {
        employees.remove(e)
        department[e] = nil
        mentor[e] = nil
        for (x, m) in mentor where m == e { mentor[x] = nil }
        for p in members.keys { members[p]?.removeAll { $0 == e } }
        for (d, o) in owner where o == e { owner[d] = nil }
    }

    mutating func deleteDepartment(_ d: ObjectID) {
        departments.remove(d)
        for (e, x) in department where x == d { deleteEmployee(e) }  // cascade
    }

    mutating func setOwner(_ desk: ObjectID, _ e: ObjectID?) {
        if let e { for (d, o) in owner where o == e { owner[d] = nil } }
        owner[desk] = e
    }
}

@Suite("Relationships, randomized")
struct RelationshipRandomTests {
    @Test("random relates, moves, deletes and cascades agree with a model on both sides after every save and reopen")
    func randomized() throws {
        let seed = SeededRandom.seedFromEnvironment()
        print("RelationshipRandomTests seed \(seed) (KEEL_SEED=\(seed) replays)")
        var r = SeededRandom(seed: seed)
        var f = try StoreFixture()
        let m = f.model
        var g = GraphModel()
        func pick(_ s: Set<ObjectID>) -> ObjectID? { s.isEmpty ? nil : s.sorted()[Int(r.next() % UInt64(s.count))] }
        let fDept = m.field("Employee", "department"), fMentor = m.field("Employee", "mentor")
        let fMembers = m.field("Project", "members"), fOwner = m.field("Desk", "owner")

        for round in 0..<150 {
            var changes: [Change] = []
            var originals: [ObjectID: StoredObject] = [:]
            for _ in 0..<(1 + Int(r.next() % 6)) {
                switch r.next() % 12 {
                case 0:
                    let d = try f.new("Department")
                    changes.append(.insert(d, values: f.values("Department", ["name": .string("D\(d.number)")])))
                    g.departments.insert(d)
                case 1, 2:
                    let e = try f.new(r.next() % 4 == 0 ? "Manager" : "Employee")
                    var values = f.values("Employee", ["name": .string("E\(e.number)")])
                    if let d = pick(g.departments), r.next() % 2 == 0 {
                        values[fDept] = .object(d)
                        g.department[e] = d
                    }
                    changes.append(.insert(e, values: values))
                    g.employees.insert(e)
                case 3:
                    let p = try f.new("Project")
                    changes.append(.insert(p, values: f.values("Project", ["title": .string("P")])))
                    g.projects.insert(p)
                    g.members[p] = []
                case 4:
                    let desk = try f.new("Desk")
                    changes.append(.insert(desk, values: [:]))
                    g.desks.insert(desk)
                case 5, 6:
                    guard let e = pick(g.employees) else { continue }
                    let d = r.next() % 4 == 0 ? nil : pick(g.departments)
                    changes.append(.set(e, field: fDept, value: d.map(Value.object) ?? .null))
                    g.department[e] = d
                case 7:
                    guard let e = pick(g.employees), let mentor = pick(g.employees) else { continue }
                    changes.append(.set(e, field: fMentor, value: .object(mentor)))
                    g.mentor[e] = mentor
                case 8:
                    guard let p = pick(g.projects), let e = pick(g.employees) else { continue }
                    var list = g.members[p] ?? []
                    if let i = list.firstIndex(of: e) {
                        if r.next() % 2 == 0 {
                            changes.append(.remove(p, field: fMembers, members: [e]))
                            list.remove(at: i)
                        } else {
                            let to = Int(r.next() % UInt64(list.count))
                            changes.append(.add(p, field: fMembers, members: [e], at: to))
                            list.remove(at: i)
                            list.insert(e, at: min(to, list.count))
                        }
                    } else if list.count < 5 {
                        let at: Int? = r.next() % 2 == 0 ? nil : Int(r.next() % UInt64(list.count + 1))
                        changes.append(.add(p, field: fMembers, members: [e], at: at))
                        list.insert(e, at: at ?? list.count)
                    }
                    g.members[p] = list
                case 9:
                    guard let desk = pick(g.desks) else { continue }
                    let e = r.next() % 4 == 0 ? nil : pick(g.employees)
                    changes.append(.set(desk, field: fOwner, value: e.map(Value.object) ?? .null))
                    g.setOwner(desk, e)
                case 10:
                    guard let e = pick(g.employees) else { continue }
                    changes.append(.delete(e))
                    g.deleteEmployee(e)
                default:
                    guard let d = pick(g.departments), r.next() % 3 == 0 else { continue }
                    changes.append(.delete(d))
                    g.deleteDepartment(d)
                }
            }
            for c in changes where originals[c.object] == nil {
                if let o = try f.object(c.object) { originals[c.object] = o }
            }
            _ = try f.store.save(ChangeSet(changes: changes, originals: originals))
            if round % 25 == 24 { try f.reopen() }
            try Self.check(f, g, seed: seed, round: round)
            if round % 10 == 9 {
                let faults = try f.store.verify()
                #expect(faults.isEmpty, "seed \(seed) round \(round): \(faults.prefix(5))")
                if !faults.isEmpty { return }
            }
        }
    }

    static func check(_ f: StoreFixture, _ g: GraphModel, seed: UInt64, round: Int) throws {
        let m = f.model
        let s = try f.store.snapshot()
        defer { s.close() }
        let where_ = "seed \(seed) round \(round)"
        #expect(try s.count(m.id("Employee"), includeSubentities: true) == g.employees.count, "\(where_)")
        #expect(try s.count(m.id("Department"), includeSubentities: true) == g.departments.count, "\(where_)")
        for e in g.employees {
            guard let o = try s.object(e) else {
                Issue.record("\(where_): \(e.text(in: m)) missing")
                continue
            }
            #expect(o.values[m.field("Employee", "department")].objectID == g.department[e], "\(where_): \(e.text(in: m)).department")
            #expect(o.values[m.field("Employee", "mentor")].objectID == g.mentor[e], "\(where_): \(e.text(in: m)).mentor")
            let mentees = Set(g.mentor.filter { $0.value == e }.keys)
            #expect(Set(try s.members(of: e, field: m.field("Employee", "mentees"))) == mentees, "\(where_): mentees")
            let projects = Set(g.members.filter { $0.value.contains(e) }.keys)
            #expect(Set(try s.members(of: e, field: m.field("Employee", "projects"))) == projects, "\(where_): projects")
            #expect(o.values[m.field("Employee", "desk")].objectID == g.owner.first { $0.value == e }?.key, "\(where_): desk")
        }
        for d in g.departments {
            let expected = Set(g.department.filter { $0.value == d }.keys)
            #expect(Set(try s.members(of: d, field: m.field("Department", "employees"))) == expected, "\(where_): \(d.text(in: m)).employees")
        }
        for (p, list) in g.members {
            #expect(try s.members(of: p, field: m.field("Project", "members")) == list, "\(where_): \(p.text(in: m)).members order")
        }
        for (desk, e) in g.owner {
            #expect(try s.object(desk)?.values[m.field("Desk", "owner")].objectID == e, "\(where_): desk owner")
        }
    }
}
