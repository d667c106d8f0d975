import Testing

@testable import KeelStorage

#if canImport(Glibc)
    import Glibc
#endif

/// CPU time of the calling thread (unaffected by time spent descheduled on a busy machine).
private func threadCPUTime() -> Duration {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return .seconds(ts.tv_sec) + .nanoseconds(ts.tv_nsec)
}

/// Runs `body` and returns its thread CPU time.
private func measureCPU(_ body: () throws -> Void) rethrows -> Duration {
    let start = threadCPUTime()
    try body()
    return threadCPUTime() - start
}

/// Throughput of the tree over the in-memory test sink (dictionary lookups stand in for the
/// pager). Prints figures, asserts nothing about time. KEEL_SLOW_TESTS=1 only; KEEL_PERF_COUNT
/// sets the number of keys (default 1,000,000). Rates are per second of the thread's CPU time,
/// so a busy machine disturbs them less.
@Suite("B+tree throughput on the in-memory sink", .enabled(if: getEnvironment("KEEL_SLOW_TESTS") == "1"))
struct BTreePerformanceTests {
    @Test("bulk insert of random 16-byte keys with 100-byte values, point reads, range scans")
    func throughput() throws {
        let n = Int(getEnvironment("KEEL_PERF_COUNT") ?? "") ?? 1_000_000
        let sink = MemoryPageSink(pageSize: 4096)
        let tree = BTree(root: try BTree.create(in: sink))
        var rng = SeededRandom(seed: 42)
        var keys = [UInt8](repeating: 0, count: 16 * n)
        keys.withUnsafeMutableBytes { raw in
            for i in 0..<(2 * n) { raw.storeBytes(of: rng.next(), toByteOffset: 8 * i, as: UInt64.self) }
        }
        let value = [UInt8](repeating: 0xAB, count: 100)

        let insert = try measureCPU {
            try keys.withUnsafeBytes { all in
                try value.withUnsafeBytes { v in
                    for i in 0..<n {
                        try tree.put(key: UnsafeRawBufferPointer(rebasing: all[(16 * i)..<(16 * i + 16)]), value: v, in: sink)
                    }
                }
            }
        }
        sink.commit()
        let reads = Int(getEnvironment("KEEL_PERF_READS") ?? "") ?? min(n, 100_000)
        var found = 0
        let read = try measureCPU {
            try keys.withUnsafeBytes { all in
                for j in 0..<reads {
                    let i = Int(rng.next() % UInt64(n))
                    let hit = try tree.withValue(forKey: UnsafeRawBufferPointer(rebasing: all[(16 * i)..<(16 * i + 16)]), in: sink) { $0.count }
                    if hit != nil { found += 1 }
                    _ = j
                }
            }
        }
        #expect(found == reads)
        let scans = 10_000
        var entries = 0
        let scan = try measureCPU {
            var cursor = tree.cursor(in: sink)
            try keys.withUnsafeBytes { all in
                for _ in 0..<scans {
                    let i = Int(rng.next() % UInt64(n))
                    var valid = try cursor.seek(to: UnsafeRawBufferPointer(rebasing: all[(16 * i)..<(16 * i + 16)]))
                    var taken = 0
                    while valid && taken < 100 {
                        entries += try cursor.withValue { $0.count }
                        taken += 1
                        valid = try cursor.next()
                    }
                }
            }
        }
        func rate(_ count: Int, _ d: Duration) -> String {
            let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
            return "\(Int(Double(count) / seconds)) /s (\(d) of thread CPU time)"
        }
        print("""
            B+tree on the in-memory sink, \(n) keys, 4 KiB pages, \(sink.livePageCount) pages, depth \(try treeDepth(tree, sink)):
              insert      \(rate(n, insert))
              point read  \(rate(reads, read))
              scan of 100 \(rate(scans, scan))
            """)
    }
}
