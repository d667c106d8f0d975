// Group commit (I1): many threads committing durably at once share fdatasyncs, and nobody is
// acknowledged before a sync covers their commit. On real files: 16 threads × 50 commits in sync
// mode full all survive a reopen with fewer than 800 log syncs (no timing is asserted). On the
// crash simulator: while 8 threads commit, power-cut images are taken now and then; every commit
// acknowledged before an image was taken is in it.

import Foundation
import Synchronization
import Testing

@testable import KeelStorage

@Suite("Group commit: concurrent durable commits share fsyncs and are never acknowledged early")
struct GroupCommitTests {
    static func key(thread: Int, commit: Int) -> Bytes { Array("t\(thread)-c\(commit)".utf8) }
    static func value(thread: Int, commit: Int) -> Bytes { taggedValue(key: key(thread: thread, commit: commit), version: 1, length: 64) }

    @Test("I1: 16 threads × 50 durable commits on real files all survive a reopen, with fewer fsyncs than commits")
    func sixteenThreads() throws {
        let (threads, commits) = (16, slowTestsEnabled ? 200 : 50)
        try withTemporaryDirectory { directory in
            let path = directory + "/group.keel"
            let fs = PosixFileSystem()
            try withVerifiedStore(fs, at: path) { store in
                try store.write { txn in _ = try txn.createTree("g") }
                let syncsBefore = try store.statistics().logSyncs
                let failures = ThreadFailures()
                let workers = (0..<threads).map { t in
                    startThread("committer \(t)") {
                        for c in 0..<commits {
                            do {
                                try store.write { txn in try txn.tree("g")!.put(key: Self.key(thread: t, commit: c), value: Self.value(thread: t, commit: c)) }
                                // Acknowledged means published: a new reader sees it at once (I1).
                                let seen = try store.read { txn in try txn.tree("g")!.get(Self.key(thread: t, commit: c)) }
                                if seen != Self.value(thread: t, commit: c) { failures.record("thread \(t) commit \(c): not visible after write returned") }
                            } catch {
                                failures.record("thread \(t) commit \(c): \(error)")
                            }
                        }
                    }
                }
                for worker in workers { #expect(worker.wait(timeout: .now() + 600) == .success, "a committer did not finish") }
                failures.report()
                let syncs = try store.statistics().logSyncs - syncsBefore
                print("[GroupCommitTests] \(threads * commits) durable commits from \(threads) threads took \(syncs) log fsyncs")
                #expect(syncs < UInt64(threads * commits), "commits should share fsyncs (group commit): \(syncs) syncs")
                #expect(syncs > 0)
                try store.close()
                let reopened = try openTestStore(fs, at: path)
                defer { try? reopened.close() }
                let all = try contents(of: reopened)["g"] ?? [:]
                #expect(all.count == threads * commits, "commits after reopen")
                var missing = 0
                for t in 0..<threads {
                    for c in 0..<commits where all[Self.key(thread: t, commit: c)] != Self.value(thread: t, commit: c) { missing += 1 }
                }
                #expect(missing == 0, "\(missing) acknowledged commits missing or wrong after reopen")
            }
        }
    }

    @Test("I1: a power cut at any moment keeps every commit acknowledged before it (8 threads, crash simulator)")
    func acknowledgedBeforeACut() throws {
        let fs = CrashSimulatingFileSystem()
        let (threads, commits) = (8, slowTestsEnabled ? 500 : 120)
        let store = try openTestStore(fs)
        try store.write { txn in _ = try txn.createTree("g") }
        let failures = ThreadFailures()
        let done = SharedCounter()
        var images: [(image: InMemoryFileSystem, acknowledged: Set<Bytes>)] = []
        let box = AcknowledgedKeys()
        do {
            let workers = (0..<threads).map { t in
                startThread("committer \(t)") {
                    for c in 0..<commits {
                        let key = Self.key(thread: t, commit: c)
                        do {
                            try store.write { txn in try txn.tree("g")!.put(key: key, value: Self.value(thread: t, commit: c)) }
                            box.insert(key)
                        } catch {
                            failures.record("thread \(t) commit \(c): \(error)")
                        }
                    }
                    done.add(1)
                }
            }
            // Power cuts "now", while the committers run: acknowledged keys first, then the image.
            while done.current < threads {
                let before = box.snapshot()
                images.append((fs.crashedImage(mode: .drop), before))
                Thread.sleep(forTimeInterval: 0.002)
            }
            for worker in workers { #expect(worker.wait(timeout: .now() + 300) == .success) }
            let before = box.snapshot()
            images.append((fs.crashedImage(mode: .drop), before))
        }
        failures.report()
        try store.close()
        #expect(images.count >= 2)
        for (i, (image, acknowledgedKeys)) in images.enumerated() {
            let recovered = try openTestStore(image)
            let keys = Set((try contents(of: recovered)["g"] ?? [:]).keys)
            let lost = acknowledgedKeys.subtracting(keys)
            #expect(lost.isEmpty, "image \(i): \(lost.count) of \(acknowledgedKeys.count) acknowledged commits lost (I1)")
            try expectVerifies(recovered, "image \(i)")
            try recovered.close()
        }
        print("[GroupCommitTests] \(images.count) power-cut images, the last holding \(images.last?.acknowledged.count ?? 0) acknowledged commits")
    }
}

/// Keys whose commits were acknowledged, shared by committer threads.
final class AcknowledgedKeys: Sendable {
    /// Guards the set.
    let keys = Mutex<Set<Bytes>>([])
    func insert(_ key: Bytes) { _ = keys.withLock { $0.insert(key) } }
    func snapshot() -> Set<Bytes> { keys.withLock { $0 } }
}
