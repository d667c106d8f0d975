// keelctl compact through the binary: after inserting many objects and deleting nine in ten, the
// compacted file is at most 1.1 times the live data (the bytes the live entries take as B+tree
// cells, TreeTally.cellBytes) plus what any store holds whatever its data — page 0, and for the
// catalog and every tree its partly filled last page (a few pages, which the 2,000 objects left
// of the normal run's 20,000 do not dwarf: history records, which once listed every ID in 10
// bytes, no longer pad the live data) — verify is clean and every remaining object is identical.
// The million-object run is KEEL_SLOW_TESTS=1 only; the normal suite runs 20,000.

import Foundation
import KeelStorage
import Testing

@testable import KeelModel

@Suite("keelctl compact")
struct CompactionTests {
    static let slow = ProcessInfo.processInfo.environment["KEEL_SLOW_TESTS"] == "1"

    @Test("insert, delete 90%, compact: the file is at most 1.1× the live data, verify is clean, every object is identical", arguments: [20_000, 1_000_000])
    func compactAfterDeletes(count: Int) throws {
        guard count < 100_000 || Self.slow else { return }
        let w = try Workspace()
        defer { w.cleanUp() }
        let (kept, before, live, trees) = try w.withStore("data", model: ItemModel.model) { store in
            let kept = try ItemModel.fillAndThin(store, count: count)
            let trees = try store.stores.reduce(0) { $0 + (try $1.contents().count) }
            return (kept, try ItemModel.contents(store), try ItemModel.liveBytes(store), trees)
        }
        #expect(before.count == kept.count)
        let pageFile = w.file("data/Default.keel")
        let sizeBefore = try FileManager.default.attributesOfItem(atPath: pageFile)[.size] as? Int ?? 0
        let run = try w.keelctl("compact", "--data", "data", "--model", "items.json")
        #expect(run.status == 0, "\(run)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("bytes before: ") && lines[1].hasPrefix("bytes after:  "), "\(run)")
        let sizeAfter = try FileManager.default.attributesOfItem(atPath: pageFile)[.size] as? Int ?? 0
        print("compact \(count): page file \(sizeBefore) → \(sizeAfter) bytes; live data \(live) bytes; ratio \(Double(sizeAfter) / Double(live))")
        let fixed = 4096 * (2 + trees)  // page 0, the catalog's page, a last page per tree
        #expect(Double(sizeAfter) <= 1.1 * Double(live) + Double(fixed), "page file \(sizeAfter) bytes for \(live) bytes of live data")
        #expect(sizeAfter < sizeBefore / 3)
        let verify = try w.keelctl("verify", "--data", "data", "--model", "items.json")
        #expect(verify.status == 0, "\(verify)")
        let after = try w.withStore("data", model: ItemModel.model) { store in try ItemModel.contents(store) }
        #expect(after == before, "the objects after compaction are those before")
    }
}
