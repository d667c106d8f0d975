// Shared helpers of the engine-level reliability suites (Tests/KeelStorageTests/Store/):
// - `testOptions` / `openTestStore`: a store on any file system with small thresholds, so a few
//   transactions already cross checkpoints, log growth and cache eviction;
// - `withVerifiedStore`: runs a body on a store and, at teardown, the full verifier — on the
//   open store, then again after close and reopen — failing the test on any fault (DESIGN.md:
//   "Every test store comes from a helper that runs the full verifier at teardown");
// - key and value generators, a snapshot of every tree's contents, file-set snapshots;
// - `expectStorageError`: runs a body that must throw a StorageError with one of some codes;
// - `slowTestsEnabled` (env KEEL_SLOW_TESTS=1) and `testSeed` (env KEEL_SEED, printed).

import Glibc
import Logging
import Synchronization
import Testing

@testable import KeelStorage

typealias Bytes = [UInt8]
/// Every tree of a store: tree name → key → value.
typealias StoreContents = [String: [Bytes: Bytes]]

/// The page-file path test stores use on in-memory file systems (the log is `+ "-wal"`).
let testStorePath = "/db/store.keel"

/// Whether the long variants run (env KEEL_SLOW_TESTS=1; `make test-slow`).
let slowTestsEnabled = getEnvironment("KEEL_SLOW_TESTS") == "1"

/// A seed from KEEL_SEED when set, otherwise a fresh one; printed so a failure replays with
/// `KEEL_SEED=<seed> swift test --filter <Suite>`.
func testSeed(_ suite: String) -> UInt64 {
    let seed = SeededRandom.seedFromEnvironment()
    print("[\(suite)] seed \(seed) — replay with KEEL_SEED=\(seed)")
    return seed
}

/// A logger for stores in tests that crash or fail on purpose: only errors and worse, so
/// "recovered the log" and "automatic checkpoint failed" do not flood the output.
let quietLogger: Logger = {
    var logger = Logger(label: "keel.storage.test")
    logger.logLevel = .critical
    return logger
}()

/// Options for a test store on `fs`: 4 KiB pages, a 64-page cache (evictions happen), a 64 KiB
/// checkpoint threshold and log preallocation step (checkpoints and log growth happen after a
/// few transactions).
func testOptions(_ fs: any FileSystem, syncMode: SyncMode = .full) -> StoreOptions {
    var options = StoreOptions(syncMode: syncMode)
    options.fileSystem = fs
    options.pageSize = 4096
    options.cacheSizeBytes = 64 * 4096
    options.checkpointThresholdBytes = 64 << 10
    options.logPreallocationBytes = 64 << 10
    // Compressed frames (off by default) keep their coverage: recovery, torn tails, crashes.
    options.compressLog = true
    return options
}

/// Opens (or creates) a test store on `fs` at `path` with `testOptions`, adjusted by `configure`.
func openTestStore(
    _ fs: any FileSystem, at path: String = testStorePath, syncMode: SyncMode = .full,
    _ configure: (inout StoreOptions) -> Void = { _ in }
) throws(StorageError) -> Store {
    var options = testOptions(fs, syncMode: syncMode)
    configure(&options)
    return try Store.open(at: path, options: options, logger: quietLogger)
}

/// Records an issue unless `store.verify()` is clean.
func expectVerifies(_ store: Store, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let report = try store.verify()
    #expect(report.isClean, "\(context): verify found \(report)", sourceLocation: sourceLocation)
}

/// Runs `body` on a test store and verifies it at teardown: the open store (if `body` left it
/// open), then again after `close()` and a reopen with the same options. Any fault fails the test.
/// The store is closed when this returns, also when `body` throws.
@discardableResult
func withVerifiedStore<T>(
    _ fs: any FileSystem = InMemoryFileSystem(), at path: String = testStorePath, syncMode: SyncMode = .full,
    sourceLocation: SourceLocation = #_sourceLocation,
    configure: (inout StoreOptions) -> Void = { _ in },
    _ body: (Store) throws -> T
) throws -> T {
    let store = try openTestStore(fs, at: path, syncMode: syncMode, configure)
    let result: T
    do {
        result = try body(store)
    } catch {
        try? store.close()
        throw error
    }
    do {
        try expectVerifies(store, "teardown, store still open", sourceLocation: sourceLocation)
    } catch let error as StorageError where error.code == .closed {
        // The body closed the store itself; the reopen below still verifies it.
    }
    try store.close()
    let reopened = try openTestStore(fs, at: path, syncMode: syncMode, configure)
    defer { try? reopened.close() }
    try expectVerifies(reopened, "teardown, after close and reopen", sourceLocation: sourceLocation)
    return result
}

// MARK: Contents

/// Every tree's entries, read through cursors in one read transaction. Records an issue if a
/// cursor ever returns keys out of order (I10).
func contents(of store: Store, sourceLocation: SourceLocation = #_sourceLocation) throws -> StoreContents {
    try store.read { txn in try contents(of: txn, sourceLocation: sourceLocation) }
}

/// Every tree's entries as `txn` sees them.
func contents(of txn: ReadTransaction, sourceLocation: SourceLocation = #_sourceLocation) throws -> StoreContents {
    var out: StoreContents = [:]
    for name in try txn.treeNames() {
        let tree = try #require(try txn.tree(name), "tree \(name) is listed but cannot be opened")
        var entries: [Bytes: Bytes] = [:]
        var cursor = try tree.cursor()
        var more = try cursor.seekFirst()
        var previous: Bytes?
        while more {
            let key = try cursor.key
            if let previous {
                #expect(previous.lexicographicallyPrecedes(key), "tree \(name): keys out of order (I10)", sourceLocation: sourceLocation)
            }
            entries[key] = try cursor.value()
            previous = key
            more = try cursor.next()
        }
        out[name] = entries
    }
    return out
}

/// Records an issue unless `actual` equals `expected`, describing the difference briefly (the
/// contents themselves would flood the output).
func expectContents(
    _ actual: StoreContents, equal expected: StoreContents, _ context: String = "",
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let same = actual == expected
    #expect(same, "\(context): contents differ: \(describeDifference(actual, expected))", sourceLocation: sourceLocation)
}

/// Records an issue unless the store's contents equal `expected`.
func expectContents(
    of store: Store, equal expected: StoreContents, _ context: String = "", sourceLocation: SourceLocation = #_sourceLocation
) throws {
    expectContents(try contents(of: store, sourceLocation: sourceLocation), equal: expected, context, sourceLocation: sourceLocation)
}

/// A short description of the difference between two contents, for failure messages.
func describeDifference(_ actual: StoreContents, _ expected: StoreContents) -> String {
    var lines: [String] = []
    for name in Set(actual.keys).union(expected.keys).sorted() {
        guard let a = actual[name] else { lines.append("tree \(name) missing"); continue }
        guard let e = expected[name] else { lines.append("tree \(name) unexpected (\(a.count) entries)"); continue }
        let missing = e.keys.filter { a[$0] == nil }.count
        let extra = a.keys.filter { e[$0] == nil }.count
        let wrong = e.keys.filter { a[$0] != nil && a[$0] != e[$0] }.count
        if missing + extra + wrong > 0 {
            lines.append("tree \(name): \(missing) missing, \(extra) unexpected, \(wrong) different values")
        }
    }
    return lines.isEmpty ? "equal" : lines.joined(separator: "; ")
}

// MARK: Keys and values

/// A fixed-width decimal key: `prefix` + i zero-padded to 8 digits, so key order is number order.
func numberedKey(_ i: Int, prefix: String = "k") -> Bytes {
    let digits = String(i)
    return Array((prefix + String(repeating: "0", count: max(0, 8 - digits.count)) + digits).utf8)
}

/// `length` pseudo-random (incompressible) bytes determined by `seed`.
func randomBytes(_ length: Int, seed: UInt64) -> Bytes {
    var random = SeededRandom(seed: seed)
    var out = Bytes()
    out.reserveCapacity(length + 8)
    while out.count < length {
        let word = random.next()
        withUnsafeBytes(of: word.littleEndian) { out.append(contentsOf: $0) }
    }
    return Array(out.prefix(length))
}

/// `length` random bytes drawn from `random`.
func randomBytes(_ length: Int, using random: inout SeededRandom) -> Bytes {
    randomBytes(length, seed: random.next())
}

/// A value that names its key and version and is padded to `length` bytes (compressible), so a
/// value that shows up under the wrong key or from the wrong transaction is recognisable.
func taggedValue(key: Bytes, version: Int, length: Int = 40) -> Bytes {
    let tag = Array("\(String(decoding: key, as: UTF8.self))@\(version);".utf8)
    var out = tag
    while out.count < length { out.append(UInt8(ascii: "a") + UInt8(out.count % 26)) }
    return Array(out.prefix(max(length, tag.count)))
}

// MARK: Files

/// Every file of an in-memory file system, path → bytes.
func files(of fs: InMemoryFileSystem) -> [String: Bytes] {
    var out: [String: Bytes] = [:]
    for path in fs.paths { out[path] = fs.contents(of: path) }
    return out
}

// MARK: Errors

/// Runs `body`, which must throw a StorageError whose code is one of `codes`; returns it.
@discardableResult
func expectStorageError(
    _ codes: StorageError.Code..., comment: @autoclosure () -> String = "",
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> StorageError? {
    do {
        try body()
        Issue.record("expected a StorageError \(codes), nothing was thrown. \(comment())", sourceLocation: sourceLocation)
        return nil
    } catch let error as StorageError {
        #expect(codes.contains(error.code), "expected \(codes), got \(error). \(comment())", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a StorageError \(codes), got \(error). \(comment())", sourceLocation: sourceLocation)
        return nil
    }
}

/// A value built once, on first use, by a closure that may throw. A failure is rethrown to every
/// test that uses the fixture (a test failure), never a crash of the whole test process, as a
/// `try!` in a static initialiser would be.
final class Fixture<Value: Sendable>: Sendable {
    /// Guards the value (or the error) once built.
    private let built = Mutex<Result<Value, any Error>?>(nil)
    private let make: @Sendable () throws -> Value

    init(_ make: @escaping @Sendable () throws -> Value) { self.make = make }

    func get() throws -> Value {
        try built.withLock { built in
            if built == nil { built = Result { try make() } }
            return try built!.get()  // safe: set just above
        }
    }
}

/// The error a write closure throws to roll its transaction back.
struct Rollback: Error {}

extension SeededRandom {
    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }
}
