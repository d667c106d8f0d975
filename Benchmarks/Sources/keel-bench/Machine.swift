import CSQLite3
import Foundation
import KeelStorage

#if canImport(Glibc)
    import Glibc
#endif

/// The facts about this machine printed above the table: what the numbers can be compared with.
struct MachineFacts: Codable, Sendable {
    var cpuCount: Int
    var cpuModel: String?
    var loadAverage: String?
    var benchDirectory: String
    var fileSystem: String
    /// Measured before the workloads, and again after them: a big difference means something
    /// else used the disk during the run.
    var fdatasync: Latency?
    var fdatasyncAtEnd: Latency?
    var fdatasyncIterations: Int
    var loadAverageAtEnd: String?
    var crc32cHardwareAccelerated: Bool
    var sqliteVersion: String

    static func gather(benchDirectory: String, fdatasyncIterations: Int) throws -> MachineFacts {
        MachineFacts(
            cpuCount: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            cpuModel: cpuModelName(),
            loadAverage: loadAverageNow(),
            benchDirectory: benchDirectory,
            fileSystem: fileSystemName(benchDirectory),
            fdatasync: try probeFdatasync(directory: benchDirectory, iterations: fdatasyncIterations),
            fdatasyncAtEnd: nil,
            fdatasyncIterations: fdatasyncIterations,
            loadAverageAtEnd: nil,
            crc32cHardwareAccelerated: CRC32C.isHardwareAccelerated,
            sqliteVersion: String(cString: sqlite3_libversion())
        )
    }

    /// The second fdatasync measurement and load average, after the workloads.
    mutating func remeasureAtEnd() throws {
        fdatasyncAtEnd = try probeFdatasync(directory: benchDirectory, iterations: fdatasyncIterations)
        loadAverageAtEnd = loadAverageNow()
    }

    /// Why the fdatasync figures suggest a disk shared with someone else's fsyncs, if they do:
    /// a p50 above 1 ms (this class of machine does 40-200 µs), or start and end p50 differing by
    /// more than 3×.
    var diskLooksBusy: String? {
        let p50s = [fdatasync, fdatasyncAtEnd].compactMap { $0?.p50Micros }
        guard let high = p50s.max(), let low = p50s.min() else { return nil }
        if high > 1000 { return "fdatasync p50 reached \(micros(high))" }
        if high > 3 * low { return "fdatasync p50 moved from \(micros(p50s[0])) to \(micros(p50s.last!)) during the run" }
        return nil
    }

    /// Whether durable-commit numbers mean anything here (tmpfs has no fsync to wait for).
    var isVolatileFileSystem: Bool { fileSystem == "tmpfs" || fileSystem == "ramfs" }
}

/// The latency of a 4 KiB overwrite + fdatasync of a preallocated block: the floor under every
/// durable commit on this disk. The block is written and fsynced once first, so each timed
/// iteration overwrites allocated space and fdatasync has no metadata to write.
func probeFdatasync(directory: String, iterations: Int) throws -> Latency? {
    let path = directory + "/fdatasync-probe"
    let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw BenchError("cannot create \(path): \(String(cString: strerror(errno)))") }
    defer {
        close(fd)
        unlink(path)
    }
    let block = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 4096)
    defer { block.deallocate() }
    block.initializeMemory(as: UInt8.self, repeating: 0xA5)

    func overwrite(_ round: Int) throws {
        block.storeBytes(of: UInt64(round), as: UInt64.self)
        guard pwrite(fd, block.baseAddress, 4096, 0) == 4096 else {
            throw BenchError("pwrite \(path): \(String(cString: strerror(errno)))")
        }
        guard fdatasync(fd) == 0 else { throw BenchError("fdatasync \(path): \(String(cString: strerror(errno)))") }
    }
    try overwrite(0)
    guard fsync(fd) == 0 else { throw BenchError("fsync \(path): \(String(cString: strerror(errno)))") }
    for round in 1...10 { try overwrite(round) }  // warm up
    var samples: [UInt64] = []
    samples.reserveCapacity(iterations)
    for round in 0..<iterations {
        let start = monotonicNanos()
        try overwrite(round + 11)
        samples.append(monotonicNanos() - start)
    }
    return Latency(nanos: samples)
}

private func cpuModelName() -> String? {
    guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("model name") {
        if let colon = line.firstIndex(of: ":") {
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }
    return nil
}

private func loadAverageNow() -> String? {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

/// The type of the file system holding `path`: the mount in /proc/self/mounts with the longest
/// mount point that is a prefix of the path's real location.
private func fileSystemName(_ path: String) -> String {
    guard let text = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return "unknown" }
    let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    var best: (point: String, type: String)?
    for line in text.split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count >= 3 else { continue }
        let point = String(fields[1]).replacingOccurrences(of: "\\040", with: " ")
        let covers = point == "/" || real == point || real.hasPrefix(point + "/")
        if covers && point.count >= (best?.point.count ?? -1) { best = (point, String(fields[2])) }
    }
    return best?.type ?? "unknown"
}

/// Bytes of the store files in `directory` (every regular file except SQLite's `-shm`, which is
/// a shared-memory index rather than stored data).
func storeBytes(in directory: String) -> Int {
    storeFiles(in: directory).values.reduce(0, +)
}

/// The size (`st_size`) of each store file in `directory`, by name (as `storeBytes` counts them).
func storeFiles(in directory: String) -> [String: Int] {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [:] }
    var files: [String: Int] = [:]
    for name in names where !name.hasSuffix("-shm") {
        var info = stat()
        if stat(directory + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG {
            files[name] = Int(info.st_size)
        }
    }
    return files
}
