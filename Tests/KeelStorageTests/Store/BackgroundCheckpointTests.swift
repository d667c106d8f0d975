// The background checkpointer (StoreOptions.checkpointInBackground, BackgroundCheckpointer.swift):
// the automatic checkpoint runs on its own thread, the log still empties, the data is the same
// as with inline checkpoints, and closing while checkpoints are asked for loses nothing. Crashes
// inside background checkpoints are in CrashRecoveryTests (crashAtEveryOperationInBackground);
// readers against it in SnapshotIsolationTests (invariantSum, background).

import Glibc
import Testing

@testable import KeelStorage

@Suite("Background checkpointer")
struct BackgroundCheckpointTests {
    static let threshold: UInt64 = 64 << 10

    /// Writes `count` transactions of a few keys each (some overwriting, some deleting).
    static func workload(_ store: Store, count: Int, waitEach: Bool) throws {
        for i in 0..<count {
            try store.write { txn in
                let tree = try txn.openTree("t")
                for j in 0..<6 {
                    let n = (i * 6 + j) % 900
                    // Incompressible values: the (compressed) log really grows.
                    try tree.put(key: numberedKey(n), value: randomBytes(200 + n % 300, seed: UInt64(i * 1_000 + n)))
                }
                if i % 4 == 3 { try tree.delete(key: numberedKey((i * 7) % 900)) }
            }
            if waitEach { try store.waitForBackgroundCheckpoint() }
        }
    }

    static func configure(background: Bool) -> (inout StoreOptions) -> Void {
        { options in
            options.checkpointThresholdBytes = threshold
            options.checkpointInBackground = background
        }
    }

    @Test("I7: background checkpoints run off the writer's thread and keep emptying the log")
    func logEmpties() throws {
        try withVerifiedStore(configure: Self.configure(background: true)) { store in
            var largest: UInt64 = 0
            var resets = 0
            var before: UInt64 = 0
            for _ in 0..<10 {
                try Self.workload(store, count: 20, waitEach: false)
                try store.waitForBackgroundCheckpoint()
                let after = try store.statistics().logFrameBytes
                // Each round appends frames, so a log that ends it shorter than it began, or
                // empty, was reset during it (which of the two depends on when the thread ran).
                if after < before || after == 0 { resets += 1 }
                largest = max(largest, after)
                before = after
            }
            let pager = try store.pager()
            #expect(pager.backgroundCheckpointer.passCount >= 2, "the background thread ran")
            #expect(try store.statistics().checkpoints >= 2)
            #expect(resets >= 1, "the log was reset")
            // Each background pass runs once the log passes the threshold: it never holds much more.
            #expect(largest <= 4 * Self.threshold, "the log grew to \(largest) bytes of frames")
        }
    }

    @Test("the same writes with background and inline checkpoints leave the same contents, before and after reopening")
    func sameAsInline() throws {
        var results: [StoreContents] = []
        for background in [false, true] {
            let fs = InMemoryFileSystem()
            try withVerifiedStore(fs, configure: Self.configure(background: background)) { store in
                try Self.workload(store, count: 150, waitEach: false)
                try store.waitForBackgroundCheckpoint()
                #expect(try store.statistics().checkpoints >= 1)
                results.append(try contents(of: store))
            }
            let reopened = try openTestStore(fs, Self.configure(background: background))
            defer { try? reopened.close() }
            #expect(try contents(of: reopened) == results.last)
        }
        #expect(results.count == 2 && results[0] == results[1])
    }

    @Test("I1: closing while background checkpoints are asked for or running loses nothing and leaves no checkpoint behind")
    func closeWhileRunning() throws {
        for attempt in 0..<12 {
            let fs = InMemoryFileSystem()
            let store = try openTestStore(fs, Self.configure(background: true))
            try Self.workload(store, count: 20 + attempt * 3, waitEach: false)
            let expected = try contents(of: store)
            let pager = try store.pager()
            try store.close()  // no wait first: a checkpoint may be asked for or running
            // close waited for the thread: nothing is asked for, and asking now does nothing.
            pager.backgroundCheckpointer.waitIdle()
            pager.runAutomaticCheckpoint()
            #expect(throws: StorageError.self) { try store.waitForBackgroundCheckpoint() }
            let reopened = try openTestStore(fs, Self.configure(background: true))
            #expect(try contents(of: reopened) == expected, "attempt \(attempt)")
            try expectVerifies(reopened, "attempt \(attempt), after reopen")
            try reopened.close()
        }
    }

    @Test("waitForBackgroundCheckpoint returns at once when nothing was asked for")
    func waitWithoutWork() throws {
        try withVerifiedStore(configure: Self.configure(background: true)) { store in
            try store.waitForBackgroundCheckpoint()
            try store.write { txn in try txn.openTree("t").put(key: [1], value: [2]) }
            try store.waitForBackgroundCheckpoint()
            #expect(try store.pager().backgroundCheckpointer.passCount == 0, "one small commit does not pass the threshold")
            #expect(try store.statistics().checkpoints == 0)
        }
    }

    @Test("once close returns, no file operation follows: the background thread let go of the store before close stopped waiting")
    func nothingAfterClose() throws {
        for attempt in 0..<20 {
            let fs = CrashSimulatingFileSystem()
            do {
                let store = try openTestStore(fs, Self.configure(background: true))
                try Self.workload(store, count: 30, waitEach: false)
                try store.close()
            }
            let atClose = fs.operationCount
            usleep(2_000)  // a thread still holding the pager would close its files about now
            #expect(fs.operationCount == atClose, "attempt \(attempt): file operations after close returned")
        }
    }
}
