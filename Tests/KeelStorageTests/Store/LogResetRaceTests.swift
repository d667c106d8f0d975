// I7 I8: a reader that found a page's version in the log and reads the frame only after a
// checkpoint copied everything into the page file and reset the log must still read the page:
// the frame's bytes are gone or another generation's by then. Here the reader's log read is held
// (`FaultInjectingFileSystem.beforeRead` parks one thread's read) while the checkpoint resets the
// log and new commits write over the frame; released, the reader must get its value, not CORRUPT.
// Under load this race showed in SnapshotIsolationTests as "CORRUPT: file ends at N" (the reset
// shrank the log).

import Foundation
import Testing

@testable import KeelStorage

@Suite("A log reset under a reader's frame read")
struct LogResetRaceTests {
    @Test("I7 I8: a reader whose log frame was reset under it looks the page up again and reads its value")
    func readerAcrossReset() throws {
        let gate = ReadGate()
        var options = StoreOptions()
        options.fileSystem = FaultInjectingFileSystem(wrapping: InMemoryFileSystem()) { path in
            if path.hasSuffix("-wal") { gate.readStarting() }
        }
        options.syncMode = .normal
        options.cacheSizeBytes = 8 * 4096  // log versions' buffers are evicted: reads go to the log
        options.checkpointThresholdBytes = 1 << 40  // checkpoints only when the test asks
        let store = try Store.open(at: "/db/store.keel", options: options)
        defer { try? store.close() }
        func value(_ i: Int, _ round: Int) -> [UInt8] { Array("value \(i) of round \(round) ".utf8) + [UInt8](repeating: UInt8(i % 251), count: 80) }
        let keys = (0..<2_000).map { Array(String(format: "k%05d", $0).utf8) }
        try store.write { txn in
            let tree = try txn.createTree("t")
            for (i, key) in keys.enumerated() { try tree.put(key: key, value: value(i, 0)) }
        }

        // The reader parks in its first log read, holding the frame reference it looked up.
        let result = ResultBox()
        let reader = Thread {
            gate.parkNextRead()
            do {
                let got = try store.read { txn in try txn.tree("t")?.get(keys[1_234]) }
                result.set(.success(got))
            } catch {
                result.set(.failure(error))
            }
        }
        reader.start()
        #expect(gate.waitUntilParked(), "the reader never read a log frame")

        // Meanwhile: a checkpoint copies everything and resets the log; new commits (round 1)
        // write the next generation's frames over the start of the log.
        let report = try store.checkpoint()
        #expect(report.logReset)
        for round in 1...3 {
            try store.write { txn in
                let tree = try #require(try txn.tree("t"))
                for i in stride(from: round, to: keys.count, by: 7) { try tree.put(key: keys[i], value: value(i, round)) }
            }
        }
        gate.release()
        let outcome = result.wait()
        switch outcome {
        case .success(let got):
            // The reader's snapshot is the state before round 1: round 0's value.
            #expect(got == value(1_234, 0))
        case .failure(let error):
            Issue.record("the reader failed: \(error)")
        }
        // Round r rewrote the keys i ≡ r (mod 7); 1,234 ≡ 2.
        let now = try store.read { txn in try txn.tree("t")?.get(keys[1_234]) }
        #expect(now == value(1_234, 2))
    }
}

/// Parks the next log read of one thread until released.
private final class ReadGate: @unchecked Sendable {
    // `@unchecked Sendable`: every field is guarded by `condition`.
    private let condition = NSCondition()
    private var armedThread: pthread_t?
    private var parked = false
    private var released = false

    /// Parks the calling thread's next log read.
    func parkNextRead() {
        condition.lock()
        armedThread = pthread_self()
        condition.unlock()
    }

    /// Called by every log read: parks it if it is the armed thread's first.
    func readStarting() {
        condition.lock()
        defer { condition.unlock() }
        guard let armed = armedThread, pthread_equal(armed, pthread_self()) != 0 else { return }
        armedThread = nil
        parked = true
        condition.broadcast()
        while !released { condition.wait() }
    }

    func waitUntilParked() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date() + 60
        while !parked { if !condition.wait(until: deadline) { return false } }
        return true
    }

    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }
}

private final class ResultBox: @unchecked Sendable {
    // `@unchecked Sendable`: `outcome` is guarded by `condition`.
    private let condition = NSCondition()
    private var outcome: Result<[UInt8]?, any Error>?

    func set(_ value: Result<[UInt8]?, any Error>) {
        condition.lock()
        outcome = value
        condition.broadcast()
        condition.unlock()
    }

    func wait() -> Result<[UInt8]?, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while outcome == nil { condition.wait() }
        return outcome!
    }
}
