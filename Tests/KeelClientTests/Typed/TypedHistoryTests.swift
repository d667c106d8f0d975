// The typed suite, persistent history: `KeelStore.history(after:limit:)` — the transactions after
// one, oldest first, with typed IDs — the same embedded and against keeld (HISTORY), and EXPIRED
// when a store that prunes its history (`historyRetention`) no longer has what was asked for.

import Foundation
import KeelClient
import KeelSampleModel
import Testing

@Suite("Typed history")
struct TypedHistoryTests {
    @Test("history(after:): every transaction after one, oldest first, typed IDs, limits and paging", arguments: BackendKind.allCases)
    func history(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            let seed = try await CompanySeed.insert(into: context)
            let kim = try await context.get(seed.employees["Kim"]!)
            kim.age = 35
            try await context.update(kim)
            try await context.save()
            _ = try await context.delete(seed.students["Han"]!)
            try await context.save()
            let batch = try await store.batchDelete(Student.self)
            let all = try await store.history(after: 0)
            #expect(all.count == 4)
            #expect(all.map(\.txn) == all.map(\.txn).sorted() && Set(all.map(\.txn)).count == 4)
            #expect(Set(all[0].inserted(of: Employee.self)) == Set(seed.employees.values))
            #expect(all[0].inserted(of: Company.self) == [seed.company] && all[0].updated.isEmpty && all[0].deleted.isEmpty)
            #expect(all[1].updated(of: Employee.self) == [seed.employees["Kim"]!] && all[1].inserted.isEmpty)
            #expect(all[2].deleted(of: Student.self) == [seed.students["Han"]!] && all[2].deleted(of: Employee.self).isEmpty)
            #expect(all[3].txn == batch.transaction && all[3].deleted(of: Person.self) == [seed.students["Yoon"]!.upcast(to: Person.self)!])
            #expect(all.allSatisfy { !$0.time.isEmpty })
            // Paging by the last txn seen.
            let first = try await store.history(after: 0, limit: 2)
            #expect(first == Array(all.prefix(2)))
            let rest = try await store.history(after: first[1].txn)
            #expect(rest == Array(all.suffix(2)))
            #expect(try await store.history(after: all[3].txn).isEmpty)
            #expect(try await store.history(after: 0, limit: 0).isEmpty)
            do throws(KeelError) {
                _ = try await store.history(after: -1)
                Issue.record("a negative transaction was taken")
            } catch {
                #expect(error.code == .badRequest, "\(error)")
            }
        }
    }

    @Test("a store that keeps two transactions of history: EXPIRED after an older one, naming the newest pruned and the last", arguments: BackendKind.allCases)
    func expired(_ kind: BackendKind) async throws {
        var options = EmbeddedStoreOptions()
        options.store.historyRetention = 2
        try await withStore(kind, options: options) { store in
            let context = store.mainContext
            var txns: [Int64] = []
            for name in ["A", "B", "C", "D"] {
                try await context.insert(Company(name: name))
                txns.append(try #require(try await context.save().transaction))
            }
            // The last two are kept; after the second, nothing is missing.
            let kept = try await store.history(after: txns[1])
            #expect(kept.map(\.txn) == [txns[2], txns[3]])
            do throws(KeelError) {
                let entries = try await store.history(after: txns[0])
                Issue.record("history after a pruned transaction gave \(entries.map(\.txn))")
            } catch {
                #expect(error.code == .expired, "\(error)")
                #expect(error.details?["prunedThrough"]?.intValue == txns[1], "\(error)")
                #expect(error.details?["last"]?.intValue == txns[3], "\(error)")
            }
        }
    }

    @Test("deleteHistory(through:): the records through a transaction go, history after it still answers, after an earlier one is EXPIRED", arguments: BackendKind.allCases)
    func deleteHistory(_ kind: BackendKind) async throws {
        try await withStore(kind) { store in
            let context = store.mainContext
            var txns: [Int64] = []
            for name in ["A", "B", "C", "D"] {
                try await context.insert(Company(name: name))
                txns.append(try #require(try await context.save().transaction))
            }
            #expect(try await store.deleteHistory(through: txns[1]) == 2)
            #expect(try await store.history(after: txns[1]).map(\.txn) == [txns[2], txns[3]])
            do throws(KeelError) {
                let entries = try await store.history(after: txns[0])
                Issue.record("history after a deleted transaction gave \(entries.map(\.txn))")
            } catch {
                #expect(error.code == .expired && error.details?["prunedThrough"]?.intValue == txns[1], "\(error)")
            }
            // Through a transaction not made yet: through the last one; the next save's record stays.
            #expect(try await store.deleteHistory(through: txns[3] + 100) == 2)
            try await context.insert(Company(name: "E"))
            let next = try #require(try await context.save().transaction)
            #expect(try await store.history(after: txns[3]).map(\.txn) == [next])
            do throws(KeelError) {
                _ = try await store.deleteHistory(through: -1)
                Issue.record("a negative transaction was taken")
            } catch {
                #expect(error.code == .badRequest, "\(error)")
            }
        }
    }
}
