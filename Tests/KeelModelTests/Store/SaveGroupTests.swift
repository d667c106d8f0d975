// Save groups (ObjectStore+SaveGroup.swift): single-store saves queued behind the save lock share
// one engine transaction and one commit, yet each stays atomic, fails on its own, sees the saves
// before it in its group as if they had run one after another, and is acknowledged only once
// durable.

import Dispatch
import Foundation
import KeelStorage
import Testing

@testable import KeelModel

@Suite("Save groups")
struct SaveGroupTests {
    /// Runs `saves` (each from a thread of its own) as one group of store 0, in this order: the
    /// test holds the save lock while they queue, each thread started once the one before it is
    /// queued, then lets the leader (the first) take them all. Also gives how many times each
    /// save's `committed` hook ran.
    static func runAsOneGroup(_ store: ObjectStore, _ saves: [ChangeSet]) -> (results: [Result<SaveResult, KeelError>], hooks: [Int]) {
        let results = SharedState<[Int: Result<SaveResult, KeelError>]>([:])
        let hooks = SharedState<[Int]>(Array(repeating: 0, count: saves.count))
        let done = DispatchGroup()
        store.saveLock.withLock { _ in
            for (i, changes) in saves.enumerated() {
                done.enter()
                Thread {
                    defer { done.leave() }
                    let result: Result<SaveResult, KeelError>
                    do throws(KeelError) {
                        result = .success(try store.save(changes, mergePolicy: .error, committed: { hooks.withLock { $0[i] += 1 } }))
                    } catch {
                        result = .failure(error)
                    }
                    results.withLock { $0[i] = result }
                }.start()
                while store.saveQueues[0].waiting < i + 1 { Thread.sleep(forTimeInterval: 0.0005) }
            }
        }
        done.wait()
        let all = results.withLock { $0 }
        return (saves.indices.map { all[$0] ?? .failure(KeelError(.internal, "no result")) }, hooks.withLock { $0 })
    }

    static func code(_ r: Result<SaveResult, KeelError>) -> KeelError.Code? {
        if case .failure(let e) = r { return e.code }
        return nil
    }

    /// A Project with six members: its ordered link entries are written while the save applies,
    /// then validation fails it (maxCount 5) — a save that fails after writing.
    static func doomedProject(_ store: ObjectStore, members: [ObjectID]) throws(KeelError) -> Change {
        let model = store.model
        return .insert(try store.newObjectID(for: model.id("Project")), values: [model.field("Project", "members"): .objects(members)])
    }

    static func object(_ store: ObjectStore, _ id: ObjectID) throws -> StoredObject? {
        let s = try store.snapshot()
        defer { s.close() }
        return try s.object(id)
    }

    static func employees(_ f: StoreFixture, count: Int) throws -> [ObjectID] {
        var ids: [ObjectID] = []
        var changes: [Change] = []
        for i in 0..<count {
            let id = try f.new("Employee")
            ids.append(id)
            changes.append(.insert(id, values: f.values("Employee", ["name": .string("E\(i)")])))
        }
        _ = try f.store.save(ChangeSet(changes: changes))
        return ids
    }

    @Test("A group with failing members: the others commit in one transaction, in order; the failed ones leave nothing")
    func failingMembers() throws {
        let f = try StoreFixture()
        let m = f.model, store = f.store
        let staff = try Self.employees(f, count: 6)
        let desk = try f.new("Desk")
        _ = try f.store.save(ChangeSet(changes: [.insert(desk, values: f.values("Desk", ["number": .int(1)]))]))
        let deskRow = try #require(try f.object(desk))
        let heard = SharedState<[UInt64]>([])
        let token = f.store.addObserver { record in heard.withLock { $0.append(record.saveID.rawValue) } }
        defer { f.store.removeObserver(token) }
        let sales = try f.new("Department"), again = try f.new("Department"), support = try f.new("Department")
        let saves = [
            ChangeSet(changes: [.insert(sales, values: f.values("Department", ["name": .string("Sales")]))]),
            // Sees the first save's unique entry: CONSTRAINT, before writing anything.
            ChangeSet(changes: [.insert(again, values: f.values("Department", ["name": .string("Sales")]))]),
            // Writes its link entries, then fails validation: the group's transaction is abandoned.
            ChangeSet(changes: [try Self.doomedProject(store, members: staff)]),
            ChangeSet(changes: [.set(desk, field: m.field("Desk", "number"), value: .int(2))], originals: [desk: deskRow]),
            // Read the desk at the same version as the save before: CONFLICT against it.
            ChangeSet(changes: [.set(desk, field: m.field("Desk", "number"), value: .int(3))], originals: [desk: deskRow]),
            ChangeSet(changes: [.insert(support, values: f.values("Department", ["name": .string("Support")]))]),
        ]
        let before = f.store.lastSaveID.rawValue
        let transactionsBefore = try f.store.stores[0].statistics().lastTransaction
        let statsBefore = f.store.saveQueues[0].statistics
        let (results, hooks) = Self.runAsOneGroup(f.store, saves)
        // The hook runs once for each save the commit holds, never for a failed one, rerun or not.
        #expect(hooks == [1, 0, 0, 1, 0, 1])

        #expect(Self.code(results[1]) == .constraint)
        #expect(Self.code(results[2]) == .validation)
        #expect(Self.code(results[4]) == .conflict)
        let ids = [0, 3, 5].map { (try? results[$0].get())?.saveID?.rawValue }
        #expect(ids == [before + 1, before + 2, before + 3], "\(results)")
        let stats = f.store.saveQueues[0].statistics
        #expect(stats.groups == statsBefore.groups + 1 && stats.saves == statsBefore.saves + saves.count)
        #expect(stats.abandoned == statsBefore.abandoned + 1)
        // One commit for the whole group.
        #expect(try f.store.stores[0].statistics().lastTransaction == transactionsBefore + 1)
        #expect(heard.withLock { $0 } == [before + 1, before + 2, before + 3])

        #expect(try f.object(sales) != nil && f.object(support) != nil)
        #expect(try f.object(again) == nil)
        #expect(try f.value(desk, "number") == .int(2))
        #expect(try f.object(desk)?.version == deskRow.version + 1)
        let s = try f.store.snapshot()
        var projects = 0
        try s.scan(m.id("Project"), includeSubentities: true) { _ in
            projects += 1
            return true
        }
        s.close()
        #expect(projects == 0)
        for e in staff { #expect(try f.members(e, "projects").isEmpty) }
        let history = try f.store.history(after: SaveID(rawValue: before))
        #expect(history.map(\.saveID.rawValue) == [before + 1, before + 2, before + 3])
        #expect(history.map(\.inserted) == [[sales], [], [support]])
        #expect(history[1].updated.keys.sorted() == [desk])
        try f.expectConsistent()
    }

    @Test("A group whose log write fails: every save of it fails, nothing of it is written, its save IDs are not handed out again, the store goes on")
    func failedLogWrite() throws {
        let fs = FaultInjectingFileSystem(wrapping: InMemoryFileSystem())
        let f = try StoreFixture(fs: fs)
        let ids = try (0..<3).map { _ in try f.new("Department") }
        let saves = ids.enumerated().map { i, id in
            ChangeSet(changes: [.insert(id, values: f.values("Department", ["name": .string("D\(i)")]))])
        }
        let before = f.store.lastSaveID.rawValue
        fs.fail(.write, at: fs.operationCount(of: .write, pathSuffix: "-wal") + 1, with: .diskFull, pathSuffix: "-wal")
        let (results, hooks) = Self.runAsOneGroup(f.store, saves)
        #expect(fs.triggeredFaults == 1)
        for r in results { #expect(Self.code(r) != nil, "\(r)") }
        #expect(hooks == [0, 0, 0])
        for id in ids { #expect(try f.object(id) == nil) }
        // The disk has room again: the same names save, under save IDs the failed group did not use.
        let again = try f.new("Department")
        let result = try f.store.save(ChangeSet(changes: [.insert(again, values: f.values("Department", ["name": .string("D0")]))]))
        #expect((result.saveID?.rawValue ?? 0) > before + UInt64(saves.count))
        #expect(try f.object(again) != nil)
        try f.expectConsistent()
    }

    @Test("Concurrent savers with random conflicts and failures match a serial model of the outcome")
    func concurrentAgainstSerialModel() throws {
        var (rng, seed) = SeededGenerator.fromEnvironment("SaveGroupTests")
        let f = try StoreFixture()
        let m = f.model, store = f.store
        let number = m.field("Desk", "number")
        let staff = try Self.employees(f, count: 6)
        let desks = try (0..<4).map { _ in try f.new("Desk") }
        _ = try f.store.save(ChangeSet(changes: desks.map { .insert($0, values: [number: .int(0)]) }))
        let threads = 8, perThread = 30
        let seeds = (0..<threads).map { _ in rng.next() }
        // A success: the desk, the version and number it read, its save ID.
        let successes = SharedState<[(desk: Int, read: UInt64, number: Int64, save: UInt64)]>([])
        let problems = SharedState<[String]>([])
        let failedSaves = SharedState<Int>(0)
        // Doomed saves that got past the conflict check: each wrote, then failed validation.
        let failedAfterWriting = SharedState<Int>(0)
        let heard = SharedState<[UInt64]>([])
        let token = f.store.addObserver { record in heard.withLock { $0.append(record.saveID.rawValue) } }
        let before = f.store.lastSaveID.rawValue
        let statsBefore = f.store.saveQueues[0].statistics
        onThreads(threads, perThread: perThread) { t, i in
            var rng = SeededGenerator(seed: seeds[t] &+ UInt64(i))
            let d = Int.random(in: 0..<desks.count, using: &rng)
            let doomed = Int.random(in: 0..<6, using: &rng) == 0
            do {
                guard let row = try Self.object(store, desks[d]), case .int(let n) = row.values[number] else {
                    problems.withLock { $0.append("thread \(t): desk \(d) unreadable") }
                    return
                }
                var changes: [Change] = [.set(desks[d], field: number, value: .int(n + 1))]
                if doomed { changes.append(try Self.doomedProject(store, members: staff)) }
                do throws(KeelError) {
                    let result = try store.save(ChangeSet(changes: changes, originals: [desks[d]: row]))
                    if doomed { problems.withLock { $0.append("thread \(t) save \(i): a doomed save succeeded") } }
                    successes.withLock { $0.append((d, row.version, n, result.saveID?.rawValue ?? 0)) }
                } catch {
                    failedSaves.withLock { $0 += 1 }
                    if error.code == .validation { failedAfterWriting.withLock { $0 += 1 } }
                    let expected: Set<KeelError.Code> = doomed ? [.conflict, .validation] : [.conflict]
                    if !expected.contains(error.code) { problems.withLock { $0.append("thread \(t) save \(i): \(error)") } }
                }
            } catch {
                problems.withLock { $0.append("thread \(t) save \(i): \(error)") }
            }
        }
        f.store.removeObserver(token)
        #expect(problems.withLock { $0 }.isEmpty, "seed \(seed): \(problems.withLock { $0 }.prefix(5))")
        let won = successes.withLock { $0 }
        #expect(won.count + failedSaves.withLock { $0 } == threads * perThread)
        // Save IDs: exactly the successes, consecutive, heard by observers in that order.
        let saveIDs = won.map(\.save).sorted()
        #expect(saveIDs == Array((before + 1)...(before + UInt64(won.count))), "seed \(seed)")
        #expect(heard.withLock { $0 } == saveIDs, "seed \(seed)")
        // The serial model: the k-th successful save of a desk (in save order) read its k-th
        // version and left number k.
        for d in desks.indices {
            let mine = won.filter { $0.desk == d }.sorted { $0.save < $1.save }
            for (k, s) in mine.enumerated() {
                #expect(s.read == UInt64(k + 1) && s.number == Int64(k), "seed \(seed): desk \(d) save \(s.save) read v\(s.read) n\(s.number) as its #\(k)")
            }
            let row = try #require(try f.object(desks[d]))
            #expect(row.version == UInt64(mine.count + 1) && row.values[number] == .int(Int64(mine.count)), "seed \(seed): desk \(d)")
        }
        let history = try f.store.history(after: SaveID(rawValue: before))
        #expect(history.map(\.saveID.rawValue) == saveIDs)
        for s in won {
            #expect(history.first { $0.saveID.rawValue == s.save }?.updated.keys.sorted() == [desks[s.desk]])
        }
        for e in staff { #expect(try f.members(e, "projects").isEmpty) }
        // Savers met in groups (eight threads on one save lock).
        let stats = f.store.saveQueues[0].statistics
        #expect(stats.saves - statsBefore.saves == threads * perThread)
        #expect(stats.groups - statsBefore.groups < threads * perThread, "no save ever shared a group")
        // Every save that failed after writing abandoned its group's transaction once (the group
        // was run again without it); a save failing before writing abandoned nothing.
        #expect(stats.abandoned - statsBefore.abandoned == failedAfterWriting.withLock { $0 }, "seed \(seed)")
        try f.expectConsistent()
    }

    @Test("A power cut in the middle of groups recovers to the acknowledged saves: each one whole, no failed one")
    func powerCutMidGroup() throws {
        let model = TestModels.company()
        let crash = CrashSimulatingFileSystem()
        // Slow syncs: a group's commit sits in the log unsynced while the images are taken.
        let fs = FaultInjectingFileSystem(wrapping: crash, syncLatency: .milliseconds(2))
        let f = try StoreFixture(model: model, fs: fs)
        let store = f.store
        let staff = try Self.employees(f, count: 6)
        let deskNumber = model.field("Desk", "number"), departmentName = model.field("Department", "name")
        let acknowledged = SharedState<Set<Int64>>([])
        let failures = SharedState<[String]>([])
        let threads = 6, perThread = 20
        try checkPowerCuts(crash, f, acknowledged: acknowledged) {
            onThreads(threads, perThread: perThread) { t, i in
                let n = Int64(t * 1_000 + i)
                // Every fifth save fails after writing (a project over its maxCount).
                let doomed = i % 5 == 4
                do throws(KeelError) {
                    let desk = try store.newObjectID(for: model.id("Desk"))
                    let department = try store.newObjectID(for: model.id("Department"))
                    var changes: [Change] = [
                        .insert(desk, values: [deskNumber: .int(n)]),
                        .insert(department, values: [departmentName: .string("D\(n)")]),
                    ]
                    if doomed { changes.append(try Self.doomedProject(store, members: staff)) }
                    _ = try store.save(ChangeSet(changes: changes))
                    if doomed { failures.withLock { $0.append("save \(n) succeeded") } }
                    _ = acknowledged.withLock { $0.insert(n) }
                } catch {
                    if !doomed || error.code != .validation { failures.withLock { $0.append("save \(n): \(error)") } }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(3))")
        } check: { i, recovered, before in
            let s = try recovered.snapshot()
            defer { s.close() }
            var desks: Set<Int64> = [], departments: Set<Int64> = []
            var projects = 0
            try s.scan(model.id("Desk"), includeSubentities: true) { o in
                if case .int(let n) = o.values[deskNumber] { desks.insert(n) }
                return true
            }
            try s.scan(model.id("Department"), includeSubentities: true) { o in
                if case .string(let name) = o.values[departmentName], let n = Int64(name.dropFirst()) { departments.insert(n) }
                return true
            }
            try s.scan(model.id("Project"), includeSubentities: true) { _ in
                projects += 1
                return true
            }
            let all = acknowledged.withLock { $0 }
            #expect(before.isSubset(of: desks), "image \(i): \(before.subtracting(desks).count) acknowledged saves lost")
            #expect(desks == departments, "image \(i): a save recovered in part")
            #expect(desks.isSubset(of: all), "image \(i): a save that failed is in the store")
            #expect(projects == 0, "image \(i): a failed save's project is in the store")
        }
        #expect(store.saveQueues[0].statistics.abandoned > 0)
    }
}

/// A follower's reply path (round `savepath`): `durable` runs on the leader's thread before the
/// follower goes on, and a follower whose `durable` asks for it sleeps on its thread's own
/// wake-up until someone else posts it.
@Suite("Save groups: followers left asleep")
struct SaveGroupWakeUpTests {
    /// Leader and follower queued as one group; the follower passes `wakeUp` and its `durable`
    /// answers true (leave it asleep). `before` runs while the test holds the save lock, after both
    /// are queued. Returns the follower's state as the test saw it.
    static func run(
        _ f: StoreFixture, wakeUp: ThreadWakeUp, before: () -> Void = {}, check: (_ returned: () -> Bool) throws -> Void
    ) throws {
        let durableThread = SharedState<String?>(nil)
        let returned = SharedState<Result<SaveResult, KeelError>?>(nil)
        let leaderDone = DispatchSemaphore(value: 0)
        let followerDone = DispatchSemaphore(value: 0)
        let a = try f.new("Department"), b = try f.new("Department")
        let store = f.store
        let first = ChangeSet(changes: [.insert(a, values: f.values("Department", ["name": .string("A")]))])
        let second = ChangeSet(changes: [.insert(b, values: f.values("Department", ["name": .string("B")]))])
        store.saveLock.withLock { _ in
            Thread {
                _ = try? store.save(first)
                leaderDone.signal()
            }.start()
            while store.saveQueues[0].waiting < 1 { Thread.sleep(forTimeInterval: 0.0005) }
            Thread {
                Thread.current.name = "follower"
                let result: Result<SaveResult, KeelError>
                do throws(KeelError) {
                    result = .success(try store.save(second, mergePolicy: .error, committed: {}, wakeUp: wakeUp) { _ in
                        durableThread.withLock { $0 = Thread.current.name ?? "" }
                        return true
                    })
                } catch {
                    result = .failure(error)
                }
                returned.withLock { $0 = result }
                followerDone.signal()
            }.start()
            while store.saveQueues[0].waiting < 2 { Thread.sleep(forTimeInterval: 0.0005) }
            before()
        }
        #expect(leaderDone.wait(timeout: .now() + 10) == .success)
        // The leader ran the follower's `durable` (on its own thread) before it returned.
        #expect(durableThread.withLock { $0 } != nil && durableThread.withLock { $0 } != "follower")
        try check { returned.withLock { $0 != nil } }
        #expect(followerDone.wait(timeout: .now() + 10) == .success, "the follower never went on")
        #expect((try? returned.withLock { $0 }?.get())?.saveID != nil)
        #expect(try f.object(b) != nil)
    }

    @Test("Left asleep: the follower goes on only when its wake-up is posted, and gives the post back")
    func leftAsleep() throws {
        let f = try StoreFixture()
        let wakeUp = ThreadWakeUp()
        try Self.run(f, wakeUp: wakeUp) { returned in
            Thread.sleep(forTimeInterval: 0.2)
            #expect(!returned(), "the leader woke a follower whose durable asked to be left asleep")
            wakeUp.post()  // its thread's next job
        }
        // The post was the thread's next job's: given back once the save went on.
        let given = DispatchSemaphore(value: 0)
        Thread {
            wakeUp.wait()
            given.signal()
        }.start()
        #expect(given.wait(timeout: .now() + 10) == .success, "the wake-up taken by the save was not given back")
    }

    @Test("Woken before its save is settled: the leader wakes it after all")
    func wokenEarly() throws {
        let f = try StoreFixture()
        let wakeUp = ThreadWakeUp()
        // A job comes while the save waits for its group (the test holds the save lock): the
        // follower wakes, finds it unsettled and sleeps again; the leader, though told to leave it
        // asleep, must wake it, or it would sleep on with its job queued.
        try Self.run(f, wakeUp: wakeUp, before: {
            wakeUp.post()
            Thread.sleep(forTimeInterval: 0.05)
        }) { _ in }
        let given = DispatchSemaphore(value: 0)
        Thread {
            wakeUp.wait()
            given.signal()
        }.start()
        #expect(given.wait(timeout: .now() + 10) == .success, "the early wake-up was not given back")
    }
}
