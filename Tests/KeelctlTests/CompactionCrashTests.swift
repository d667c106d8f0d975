// keelctl compact killed with SIGKILL at 20 random moments (the seed is printed; KEEL_SEED
// replays it): each time the store opens, verifies clean and holds every object, unchanged — the
// old file or the new one, complete (I9). In ten rounds the moments are spread over the length
// of one uninterrupted compaction of the same folder, measured first; in the other ten they fall
// after the new file appears, within a quarter of that length — so that kills in the middle of
// the copy do not hang on the timing of a loaded machine (a machine busy with the rest of the
// suite can make the measured length say little about the next run).

import Foundation
import KeelStorage
import Testing

@testable import KeelModel

#if canImport(Glibc)
import Glibc
#endif

@Suite("keelctl compact killed at random moments")
struct CompactionCrashTests {
    @Test("SIGKILL during compaction at 20 random moments: the store opens, verifies and holds every object")
    func killedAtRandomMoments() throws {
        let seed = SeededRandom.seedFromEnvironment()
        print("CompactionCrashTests seed \(seed) (KEEL_SEED=\(seed) replays it)")
        var random = SeededRandom(seed: seed)
        let w = try Workspace()
        defer { w.cleanUp() }
        let count = ProcessInfo.processInfo.environment["KEEL_SLOW_TESTS"] == "1" ? 300_000 : 60_000
        let expected = try w.withStore("original", model: ItemModel.model) { store in
            _ = try ItemModel.fillAndThin(store, count: count)
            return try ItemModel.contents(store)
        }
        // How long one compaction takes here, now (keelctl's start and exit included).
        try FileManager.default.copyItem(atPath: w.file("original"), toPath: w.file("timed"))
        let start = ContinuousClock.now
        let timed = try w.keelctl("compact", "--data", "timed", "--model", "items.json")
        let length = ContinuousClock.now - start
        #expect(timed.status == 0, "\(timed)")
        let lengthMicroseconds = max(1000, length.components.seconds * 1_000_000 + length.components.attoseconds / 1_000_000_000_000)
        var outcomes: [String: Int] = [:]
        for round in 0..<20 {
            let folder = "round\(round)"
            try FileManager.default.copyItem(atPath: w.file("original"), toPath: w.file(folder))
            let (process, _, _) = try Keelctl.start(["compact", "--data", folder, "--model", "items.json"], in: w.path)
            let delay: UInt32
            if round.isMultiple(of: 2) {
                delay = UInt32.random(in: 0...UInt32(lengthMicroseconds), using: &random)
            } else {
                delay = UInt32.random(in: 0...UInt32(lengthMicroseconds / 4), using: &random)
                let deadline = ContinuousClock.now + .seconds(30)
                while process.isRunning, !FileManager.default.fileExists(atPath: w.file(folder + "/Default.keel.compact")),
                    ContinuousClock.now < deadline
                {
                    usleep(200)
                }
            }
            usleep(delay)
            // Where it was (as near the kill as a test can tell): copying when the new file exists.
            let copying = FileManager.default.fileExists(atPath: w.file(folder + "/Default.keel.compact"))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let finished = process.terminationReason == .exit
            outcomes[finished ? "finished" : copying ? "killed while copying" : "killed before or after copying", default: 0] += 1
            let found = try w.withStore(folder, model: ItemModel.model) { store in try ItemModel.contents(store) }
            #expect(found == expected, "round \(round) (killed \(delay) µs after \(round.isMultiple(of: 2) ? "the start" : "the new file appeared"), seed \(seed)): \(found.count) objects, \(expected.count) expected")
            // What a crash left is harmless to the next compaction.
            let again = try w.keelctl("compact", "--data", folder, "--model", "items.json")
            #expect(again.status == 0, "round \(round): \(again)")
            try FileManager.default.removeItem(atPath: w.file(folder))
        }
        print("CompactionCrashTests: one compaction takes \(length); 20 rounds: \(outcomes)")
        #expect((outcomes["killed while copying"] ?? 0) >= 3, "rounds are killed in the middle of the copy: \(outcomes)")
    }
}
