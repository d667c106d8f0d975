// The embedded backend itself: the data folder's lock (one process at a time, like keeld), the
// store closed, context names, many tasks on one context, a fetch's back-pressure, and calls made
// on a context while one of its fetches is being read (the fetch waits, the calls run).

import Foundation
import KeelClient
import KeelSampleModel
import KeelTestSupport
import Synchronization
import Testing

@testable import KeelClient

@Suite("Embedded backend")
struct EmbeddedBackendTests {
    @Test("a change subscription is an observer of the object store while its stream lives: dropped with the stream, ended by close; an unknown entity is NO_SUCH_ENTITY")
    func subscriptionsAreObservers() async throws {
        let folder = try TestPaths.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try await KeelStore.open(dataFolder: folder + "/data", model: TestPaths.model)
        let backend = try #require(store.mainContext.backend as? EmbeddedContextBackend)
        let unknown = await #expect(throws: KeelError.self) { _ = try await backend.subscribe(entities: ["Nope"]) }
        #expect(unknown?.code == .noSuchEntity)
        do {
            let events = try await store.changes(of: [Company.self])
            #expect(backend.store.subscriptionCount == 1)
            _ = events
        }
        #expect(backend.store.subscriptionCount == 0, "the stream was dropped: its observer is removed")
        let kept = try await store.changes()
        #expect(backend.store.subscriptionCount == 1)
        try await store.close()
        #expect(backend.store.subscriptionCount == 0)
        var iterator = kept.makeAsyncIterator()
        let ended = await #expect(throws: KeelError.self) { _ = try await iterator.next() }
        #expect(ended?.code == .disconnected && ended?.message.contains("was closed") == true)
        let late = await #expect(throws: KeelError.self) { _ = try await store.changes() }
        #expect(late?.code == .readOnly)
    }

    @Test("store-level commands (batch, history, its deletion) run on the store's command thread: a busy main context does not hold them up; closed, they are READ_ONLY")
    func storeCommandsOffTheContextThread() async throws {
        let folder = try TestPaths.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try await KeelStore.open(dataFolder: folder + "/data", model: TestPaths.model)
        let backend = try #require(store.mainContext.backend as? EmbeddedContextBackend)
        // The main context's thread is kept busy until the batch has answered (or 30 s passed).
        let release = DispatchSemaphore(value: 0)
        let busy = DispatchSemaphore(value: 0)
        backend.thread.submit {
            busy.signal()
            _ = release.wait(timeout: .now() + 30)
        }
        busy.wait()
        let batch = Task { try await store.batchInsert([Company(name: "A"), Company(name: "B")]) }
        let answeredFirst = await withTaskGroup(of: Bool.self) { group in
            group.addTask { _ = try? await batch.value; return true }
            group.addTask { try? await Task.sleep(for: .seconds(20)); return false }
            let first = await group.next() ?? false
            if !first { release.signal() }  // let a batch stuck behind the context finish
            group.cancelAll()
            return first
        }
        #expect(answeredFirst, "the batch waited for the main context's thread")
        let txn = try #require(try await batch.value.transaction)
        #expect(try await store.history(after: 0).map(\.txn) == [txn])
        #expect(try await store.deleteHistory(through: txn) == 1)
        release.signal()
        #expect(try await store.mainContext.count(Company.self) == 2)
        try await store.close()
        let late = await #expect(throws: KeelError.self) { _ = try await store.history(after: 0) }
        #expect(late?.code == .readOnly, "\(String(describing: late))")
    }

    @Test("the data folder is locked while open: a second open is BUSY; a bad model is INVALID_MODEL")
    func lock() async throws {
        let folder = try TestPaths.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try await KeelStore.open(dataFolder: folder + "/data", model: TestPaths.model)
        let busy = await #expect(throws: KeelError.self) {
            _ = try await KeelStore.open(dataFolder: folder + "/data", model: TestPaths.model)
        }
        #expect(busy?.code == .busy)
        #expect(busy?.message.contains("is in use by another application (KeelClient, embedded) (pid \(getpid()))") == true)
        try await store.close()
        // Closed: calls fail, and the folder opens again.
        let closed = await #expect(throws: KeelError.self) { _ = try await store.mainContext.count(Student.self) }
        #expect(closed?.code == .readOnly)
        let again = try await KeelStore.open(dataFolder: folder + "/data", model: TestPaths.model)
        try await again.close()

        try "{\"name\": \"Bad\", \"entities\": [{\"name\": \"lower\"}]}".write(toFile: folder + "/bad.json", atomically: true, encoding: .utf8)
        let invalid = await #expect(throws: KeelError.self) {
            _ = try await KeelStore.open(dataFolder: folder + "/other", model: folder + "/bad.json")
        }
        #expect(invalid?.code == .invalidModel)
        #expect(invalid?.message.hasPrefix("the model cannot be loaded: ") == true)
        // The failed open released the folder's lock.
        let fine = try await KeelStore.open(dataFolder: folder + "/other", model: TestPaths.model)
        try await fine.close()
    }

    @Test("one data folder, one holder: embedded is refused while keeld serves it, keeld while embedded holds it")
    func keeldAndEmbedded() async throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let refused = await #expect(throws: KeelError.self) {
            _ = try await KeelStore.open(dataFolder: keeld.dataPath, model: TestPaths.model)
        }
        #expect(refused?.code == .busy)
        #expect(refused?.message.contains("is in use by another keeld (pid \(keeld.pid))") == true)
        #expect(keeld.stop() == 0)
        let store = try await KeelStore.open(dataFolder: keeld.dataPath, model: TestPaths.model)
        let second = Keeld(sharing: keeld)
        let refusal = try second.runExpectingRefusal()
        #expect(refusal.status == 1)
        #expect(refusal.stderr.contains("is in use by another application (KeelClient, embedded) (pid \(getpid()))"))
        try await store.close()
    }

    @Test("a store dropped without close() closes itself: the folder is not left locked")
    func droppedStore() async throws {
        let folder = try TestPaths.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        do {
            let store = try await KeelStore.open(dataFolder: folder + "/data", model: TestPaths.model)
            try await store.mainContext.insert(Student(name: "Han"))
            try await store.mainContext.save()
        }
        let again = try await KeelStore.open(dataFolder: folder + "/data", model: TestPaths.model)
        #expect(try await again.mainContext.count(Student.self) == 1)
        try await again.close()
    }

    @Test("context names are unique while open; a closed context answers NO_SUCH_CONTEXT")
    func names() async throws {
        try await withStore(.embedded) { store in
            let a = try await store.newContext(name: "worker")
            let dup = await #expect(throws: KeelError.self) { _ = try await store.newContext(name: "worker") }
            #expect(dup?.code == .badRequest)
            let main = await #expect(throws: KeelError.self) { _ = try await store.newContext(name: "main") }
            #expect(main?.code == .badRequest)
            await a.close()
            let gone = await #expect(throws: KeelError.self) { _ = try await a.count(Student.self) }
            #expect(gone?.code == .noSuchContext)
            let b = try await store.newContext(name: "worker")
            #expect(try await b.count(Student.self) == 0)
            let policy = await #expect(throws: KeelError.self) {
                _ = try await store.mainContext.backend.openContext(name: "x", child: false, mergePolicy: "nope")
            }
            #expect(policy?.code == .badRequest)
            await b.close()
        }
    }

    @Test("many tasks on one context: every call runs, one at a time, on the context's thread")
    func manyTasks() async throws {
        try await withStore(.embedded) { store in
            let context = store.mainContext
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<200 {
                    group.addTask { try await context.insert(Student(name: "s\(i)", grade: Int32(i % 12 + 1))) }
                }
                try await group.waitForAll()
            }
            try await context.save()
            #expect(try await context.count(Student.self) == 200)
            #expect(try await context.count(Student.self, where: Student.grade == 1) == 17)
        }
    }

    @Test("a fetch hands at most its buffer ahead of a slow reader")
    func backPressure() async throws {
        let thread = ContextThread(name: "test.backpressure")
        defer { thread.stop() }
        let channel = RowChannel(capacity: 8, thread: thread)
        let stream = channel.stream()
        thread.submit {
            for i in 0..<500 {
                guard channel.push(.int(Int64(i))) else { break }
            }
            channel.finish(nil)
        }
        var received: [Int64] = []
        for try await row in stream {
            received.append(row.intValue ?? -1)
            if received.count % 50 == 0 { try await Task.sleep(for: .milliseconds(1)) }
            #expect(channel.highWater <= 8)
        }
        #expect(received == (0..<500).map(Int64.init))
        #expect(channel.highWater == 8, "the reader was slower than the fetch at some point")
    }

    @Test("calls on a context while its fetch is read run at once (the fetch waits, serving them); a dropped fetch stops")
    func callsDuringFetch() async throws {
        var options = EmbeddedStoreOptions()
        options.fetchBufferRows = 16
        try await withStore(.embedded, options: options) { store in
            let context = store.mainContext
            for i in 0..<2000 { try await context.insert(Student(name: String(format: "s%04d", i), grade: 1)) }
            try await context.save()
            var seen = 0
            for try await student in context.fetch(Student.self, sortedBy: .ascending(\.name)) {
                seen += 1
                if seen % 400 == 0 {
                    // A write and a read on the same context, mid-fetch.
                    student.grade = 2
                    try await context.update(student)
                    #expect(try await context.get(student.objectID!).grade == 2)
                    // A save mid-fetch: the fetch reads on from the snapshot it started on.
                    try await context.save()
                }
            }
            #expect(seen == 2000)
            #expect(try await context.count(Student.self, where: Student.grade == 2) == 5)
            try await context.save()
            // A fetch whose stream is dropped unread ends; the context goes on.
            do { _ = context.fetch(Student.self).makeAsyncIterator() }
            #expect(try await context.count(Student.self) == 2000)
        }
    }
}
