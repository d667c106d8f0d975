// Index and unique trees agree with the rows after random inserts, updates and deletes
// (KEEL_SEED replays); a save that would break a unique key fails with CONSTRAINT and changes
// nothing.

import KeelStorage
import Testing

@testable import KeelModel

@Suite("Indexes, randomized")
struct IndexRandomTests {
    /// One of 26 addresses that match the model's email pattern.
    static func email(_ n: UInt64) -> String { "e" + String(Character(Unicode.Scalar(UInt8(97 + n % 26)))) + "@x.com" }

    @Test("index and unique entries match the rows after random operations; clashes are refused")
    func randomized() throws {
        let seed = SeededRandom.seedFromEnvironment()
        print("IndexRandomTests seed \(seed) (KEEL_SEED=\(seed) replays)")
        var r = SeededRandom(seed: seed)
        var f = try StoreFixture()
        let m = f.model
        var names: [ObjectID: String] = [:]  // department → unique name
        var emails: [ObjectID: String] = [:]  // employee → unique email
        var employees: Set<ObjectID> = []
        let unique = m[m.id("Department")].uniqueConstraints[0]
        let emailKey = m[m.id("Employee")].uniqueConstraints[0]
        func pick(_ s: some Collection<ObjectID>) -> ObjectID? { s.isEmpty ? nil : s.sorted()[Int(r.next() % UInt64(s.count))] }
        var refused = 0
        for round in 0..<300 {
            var changes: [Change] = []
            var newNames = names, newEmails = emails, newEmployees = employees
            for _ in 0..<(1 + Int(r.next() % 4)) {
                let name = "N\(r.next() % 40)"
                switch r.next() % 8 {
                case 0, 1:
                    let d = try f.new("Department")
                    changes.append(.insert(d, values: f.values("Department", [
                        "name": .string(name), "budget": r.next() % 3 == 0 ? .null : .double(Double(r.next() % 100) / 4),
                        "code": .string("C\(r.next() % 5)"),
                    ])))
                    newNames[d] = name
                case 2:
                    guard let d = pick(newNames.keys) else { continue }
                    changes.append(.set(d, field: m.field("Department", "name"), value: .string(name)))
                    newNames[d] = name
                case 3:
                    guard let d = pick(newNames.keys) else { continue }
                    changes.append(.set(d, field: m.field("Department", "budget"), value: .double(Double(r.next() % 10))))
                case 4:
                    guard let d = pick(newNames.keys), r.next() % 2 == 0 else { continue }
                    changes.append(.delete(d))  // cascades to its (here: no) employees
                    newNames[d] = nil
                case 5:
                    let e = try f.new(r.next() % 2 == 0 ? "Manager" : "Employee")
                    let email = Self.email(r.next())
                    changes.append(.insert(e, values: f.values("Employee", ["name": .string(name), "email": .string(email)])))
                    newEmails[e] = email
                    newEmployees.insert(e)
                case 6:
                    guard let e = pick(newEmployees) else { continue }
                    let email: String? = r.next() % 4 == 0 ? nil : Self.email(r.next())
                    changes.append(.set(e, field: m.field("Employee", "email"), value: email.map(Value.string) ?? .null))
                    newEmails[e] = email
                default:
                    guard let e = pick(newEmployees) else { continue }
                    changes.append(.set(e, field: m.field("Employee", "name"), value: .string(name)))
                }
            }
            let clash = Set(newNames.values).count != newNames.count
                || Set(newEmails.values).count != newEmails.count
            var originals: [ObjectID: StoredObject] = [:]
            for c in changes where originals[c.object] == nil { if let o = try f.object(c.object) { originals[c.object] = o } }
            let error = keelError { _ = try f.store.save(ChangeSet(changes: changes, originals: originals)) }
            if clash {
                #expect(error?.code == .constraint, "seed \(seed) round \(round): \(String(describing: error))")
                refused += 1
            } else {
                #expect(error == nil, "seed \(seed) round \(round): \(String(describing: error))")
                names = newNames
                emails = newEmails
                employees = newEmployees
            }
            if round % 50 == 49 { try f.reopen() }
            if round % 20 == 19 {
                let faults = try f.store.verify()
                #expect(faults.isEmpty, "seed \(seed) round \(round): \(faults.prefix(5))")
                if !faults.isEmpty { return }
                let s = try f.store.snapshot()
                defer { s.close() }
                for (d, name) in names { #expect(try s.holder(of: unique, values: [.string(name)]) == d, "seed \(seed)") }
                for (e, email) in emails { #expect(try s.holder(of: emailKey, values: [.string(email)]) == e, "seed \(seed)") }
                #expect(try s.count(m.id("Department"), includeSubentities: true) == names.count)
            }
        }
        #expect(refused > 0, "seed \(seed): no clash was tried")
    }
}
