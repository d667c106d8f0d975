import Foundation
import Testing

@testable import KeelStorage

@Suite("Store basics on real files")
struct StoreBasicsTests {
    static func temporaryDirectory() -> String {
        let dir = NSTemporaryDirectory() + "keel-basics-\(UInt64.random(in: 0...UInt64.max))"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static func key(_ i: Int) -> [UInt8] { Array(String(format: "key-%08d", i).utf8) }
    static func value(_ i: Int) -> [UInt8] { Array(String(repeating: "v\(i)-", count: 8).utf8) }

    @Test("values written, reopened, deleted and compacted read back exactly and verify clean")
    func lifecycle() throws {
        let dir = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/main.keel"
        var options = StoreOptions()
        options.checkpointThresholdBytes = 256 << 10
        do {
            let store = try Store.open(at: path, options: options)
            try store.write { txn in
                let t = try txn.createTree("things")
                for i in 0..<10_000 { try t.put(key: Self.key(i), value: Self.value(i)) }
            }
            let got = try store.read { txn in try txn.tree("things")?.get(Self.key(1234)) }
            #expect(got == Self.value(1234))
            #expect(try store.verify().isClean)
            try store.close()
        }
        let store = try Store.open(at: path, options: options)
        defer { try? store.close() }
        let count = try store.read { txn in try txn.tree("things")?.count() }
        #expect(count == 10_000)
        try store.write { txn in
            let t = try #require(try txn.tree("things"))
            for i in 0..<10_000 where i % 10 != 0 { #expect(try t.delete(key: Self.key(i))) }
        }
        let report = try store.verify()
        #expect(report.isClean, "\(report)")
        let before = try store.statistics()
        #expect(before.freePageCount > 0)
        let compaction = try store.compact()
        #expect(compaction.pageFileBytesAfter * 3 < compaction.pageFileBytesBefore)
        let after = try store.statistics()
        #expect(after.freePageCount == 0)
        try store.read { txn in
            let t = try #require(try txn.tree("things"))
            #expect(try t.count() == 1_000)
            var c = try t.cursor()
            var i = 0
            var ok = try c.seekFirst()
            while ok {
                #expect(try c.key == Self.key(i * 10))
                #expect(try c.value() == Self.value(i * 10))
                i += 1
                ok = try c.next()
            }
            #expect(i == 1_000)
        }
        #expect(try store.verify().isClean)
    }
}
