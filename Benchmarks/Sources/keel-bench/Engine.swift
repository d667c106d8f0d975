// What an engine under test provides. Two conformers: SQLiteEngine (always) and KeelEngine (once
// the engine façade is in KeelStorage; see Package.swift). Each workload's inner loop lives in the
// engine's own file so that it is plain, concrete code; the harness (Runner.swift) times around it.

/// The durability pairing of a commit workload: SQLite `synchronous=FULL` against Keel `.full`,
/// `synchronous=NORMAL` against Keel `.normal`.
enum Durability: String, CaseIterable, Codable, Sendable {
    case full
    case normal
}

/// What a read workload saw: rows, bytes, and a sum over every byte of every key and value
/// touched. Both engines must produce the same tally on the same work; the harness checks it.
struct Tally: Equatable, Codable, Sendable {
    var rows = 0
    var bytes = 0
    var byteSum: UInt64 = 0

    @inline(__always)
    mutating func add(_ buffer: UnsafeRawBufferPointer) {
        bytes &+= buffer.count
        byteSum &+= touch(buffer)
    }
}

/// Reads every byte of `buffer` (a wrapping sum), so neither engine can be credited for bytes it
/// never had to produce.
@inline(__always)
func touch(_ buffer: UnsafeRawBufferPointer) -> UInt64 {
    var sum: UInt64 = 0
    for byte in buffer { sum &+= UInt64(byte) }
    return sum
}

protocol BenchEngine {
    static var name: String { get }
    /// Opens (creating) the store for bulk-insert, point-read, range-scan and compact in
    /// `directory`, which is empty and belongs to this store alone. Durability full.
    static func openMainStore(directory: String) throws -> any MainStore
    /// Opens (creating) a fresh store for a commit workload in `directory` (empty, its own),
    /// with the tree/table already created.
    static func openCommitStore(directory: String, durability: Durability) throws -> any CommitStore
}

/// The bulk-loaded store. Every method is called from one thread.
protocol MainStore: AnyObject {
    /// Puts `data[0..<count]` in one write transaction and commits it (durably).
    func bulkInsert(_ data: KeyValueSet, count: Int) throws
    /// Moves everything in the log into the page file and empties the log.
    func checkpoint() throws
    /// A point read of each key in `keys`, in order, in one read transaction, touching every
    /// byte of each value. A missing key is counted, not fatal (the harness reports it). The keys
    /// come as arrays, built untimed, because that is what Keel's `withValue(forKey:)` takes;
    /// SQLite binds the same arrays' bytes, so both engines start from the same form.
    func pointReads(_ keys: [[UInt8]]) throws -> Tally
    /// For each start key `data.key(i)`, `i` in `starts`: the first `length` keys >= it, in
    /// key order, touching every key and value byte. All scans in one read transaction.
    func rangeScans(_ data: KeyValueSet, starts: [Int32], length: Int) throws -> Tally
    /// Deletes `data.key(i)` for each `i` in `indices` in one write transaction; returns how
    /// many keys were actually deleted.
    func delete(_ data: KeyValueSet, indices: [Int32]) throws -> Int
    /// Rewrites the store without free space (Keel `compact()`, SQLite `VACUUM`), leaving the
    /// log empty.
    func compact() throws -> [String: Double]
    /// Every key and value in key order (untimed; a correctness check).
    func fullScan() throws -> Tally
    /// The store's own directory; the harness measures the store's files there.
    var directory: String { get }
    func close() throws
}

/// A store for a commit workload: shared by every worker thread; each thread makes its own
/// session on that thread and uses it only there.
protocol CommitStore: Sendable {
    func makeSession() throws -> any CommitSession
    /// How many keys the store holds (after the workload; a correctness check).
    func keyCount() throws -> Int
    /// Engine counters that only ever grow (Keel: `logSyncs`, `checkpoints`); the harness reports
    /// how much each grew during the workload.
    func counters() throws -> [String: Double]
    func close() throws
}

extension CommitStore {
    func counters() throws -> [String: Double] { [:] }
}

/// One thread's way to commit: each `commit` is one durable (per the store's durability)
/// transaction putting one new key.
protocol CommitSession {
    func commit(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
