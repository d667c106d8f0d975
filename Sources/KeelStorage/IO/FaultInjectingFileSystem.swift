// A file system that wraps another and makes chosen operations fail, for I/O-error tests.
//
// Counting. Every call of a FileOperationKind is counted, per kind, over all files, from the
// creation of this file system (1-based): the 3rd write is write #3 whichever file it went to.
// A fault may narrow the count to files whose path ends with a suffix ("-wal"): then it means
// the n-th operation of that kind on such files. `operationCount(of:pathSuffix:)` reports the
// same numbers, so a test runs its workload once with no faults to count, say, its writes to
// the log, then reruns it failing write #1, #2, … in turn. Failed calls count like the others.
// A rename counts under both its paths (a suffix matches either); `syncDirectory` under the
// directory; `size()`, `fileExists`, `createDirectory` and `availableBytes` are not counted and
// never fail here.
//
// Effects. A failing operation throws `.io` (EIO) or `.diskFull` (ENOSPC) and does not reach the
// wrapped file system: nothing is written, synced, truncated, renamed… — except `close`, which
// closes the wrapped file and then throws, as close(2) releases the descriptor even when it
// reports an error. A short write passes only the first k bytes (default: half, rounded up) to
// the wrapped file and returns the count it wrote. A `.once` fault fires at exactly the n-th
// operation; a `.fromThenOn` fault at the n-th and every later one. When several faults match
// one operation, the first injected wins.
//
// Latency. `syncLatency` makes every file sync that proceeds take at least that long (the calling
// thread sleeps first), as a slow disk would: tests of group commit use it so that concurrent
// committers reliably meet a sync in progress, whatever the real disk's speed. `beforeRead` is
// called with the file's path before every read that proceeds, on the reading thread: a test can
// hold one reader there (a race test parks a reader inside its log read while a checkpoint resets
// the log under it).

import Glibc
import Synchronization

/// Wraps a file system and fails or shortens chosen operations. Thread-safe.
public final class FaultInjectingFileSystem: FileSystem {
    /// The error a failing operation throws.
    public enum Failure: Sendable, Hashable {
        /// EIO: `StorageError.Code.io`.
        case io
        /// ENOSPC: `StorageError.Code.diskFull`.
        case diskFull
    }

    /// Whether a fault fires once or keeps firing.
    public enum Persistence: Sendable, Hashable {
        /// Only the n-th matching operation.
        case once
        /// The n-th matching operation and every one after it.
        case fromThenOn
    }

    /// One rule: what happens to the n-th operation of a kind.
    public struct Fault: Sendable, Hashable {
        public enum Action: Sendable, Hashable {
            /// The operation throws and has no effect.
            case fail(Failure)
            /// Writes only: writes `bytes` bytes (nil: half, rounded up) and returns that count.
            case shortWrite(bytes: Int?)
        }

        public var kind: FileOperationKind
        /// Which matching operation fires the fault, counting from 1.
        public var index: Int
        public var action: Action
        public var persistence: Persistence
        /// When set, only operations on paths ending with it count and can fail.
        public var pathSuffix: String?

        public init(
            _ kind: FileOperationKind, at index: Int, action: Action, persistence: Persistence = .once,
            pathSuffix: String? = nil
        ) {
            precondition(index >= 1, "operations are counted from 1")
            if case .shortWrite(let bytes) = action {
                precondition(kind == .write, "only writes can be short")
                precondition((bytes ?? 0) >= 0, "a short write cannot write a negative count")
            }
            self.kind = kind
            self.index = index
            self.action = action
            self.persistence = persistence
            self.pathSuffix = pathSuffix
        }
    }

    /// What to do with one operation.
    enum Decision {
        case proceed
        case fail(StorageError)
        case shortWrite(bytes: Int?)
    }

    struct State {
        var faults: [Fault] = []
        /// Operations so far: kind → the paths an operation named → how many.
        var counts: [FileOperationKind: [[String]: Int]] = [:]
        /// Operations a fault changed.
        var triggered = 0

        func count(of kind: FileOperationKind, pathSuffix: String?) -> Int {
            guard let byPaths = counts[kind] else { return 0 }
            guard let pathSuffix else { return byPaths.values.reduce(0, +) }
            return byPaths.reduce(0) { sum, entry in
                entry.key.contains { $0.hasSuffix(pathSuffix) } ? sum + entry.value : sum
            }
        }
    }

    /// The file system every operation that does not fail goes to.
    public let base: any FileSystem
    /// Guards the faults, the operation counts and the count of triggered faults.
    let state = Mutex(State())

    /// How long each file sync that proceeds takes at least (0: as long as the wrapped one).
    public let syncLatency: Duration
    /// Called with the file's path before each read that proceeds, on the reading thread.
    public let beforeRead: (@Sendable (_ path: String) -> Void)?

    public init(wrapping base: any FileSystem, syncLatency: Duration = .zero, beforeRead: (@Sendable (_ path: String) -> Void)? = nil) {
        self.base = base
        self.syncLatency = syncLatency
        self.beforeRead = beforeRead
    }

    // MARK: Rules and counts

    /// Adds a fault rule.
    public func inject(_ fault: Fault) {
        state.withLock { $0.faults.append(fault) }
    }

    /// Fails the `index`-th operation of `kind` (on paths ending with `pathSuffix`, when given)
    /// with EIO or ENOSPC, once or from then on.
    public func fail(
        _ kind: FileOperationKind, at index: Int, with failure: Failure = .io, _ persistence: Persistence = .once,
        pathSuffix: String? = nil
    ) {
        inject(Fault(kind, at: index, action: .fail(failure), persistence: persistence, pathSuffix: pathSuffix))
    }

    /// Makes the `index`-th write (on paths ending with `pathSuffix`, when given) write only
    /// `bytes` bytes (nil: half of them, rounded up) and return that count.
    public func shortWrite(
        at index: Int, bytes: Int? = nil, _ persistence: Persistence = .once, pathSuffix: String? = nil
    ) {
        inject(Fault(.write, at: index, action: .shortWrite(bytes: bytes), persistence: persistence, pathSuffix: pathSuffix))
    }

    /// Removes every fault rule (the disk "heals"); counts go on.
    public func removeAllFaults() {
        state.withLock { $0.faults.removeAll() }
    }

    /// How many operations of `kind` have been made so far (on paths ending with `pathSuffix`,
    /// when given), failed ones included. The numbering faults use.
    public func operationCount(of kind: FileOperationKind, pathSuffix: String? = nil) -> Int {
        state.withLock { $0.count(of: kind, pathSuffix: pathSuffix) }
    }

    /// How many operations a fault has failed or shortened so far.
    public var triggeredFaults: Int { state.withLock { $0.triggered } }

    /// Counts an operation and decides its fate.
    func decide(_ kind: FileOperationKind, paths: [String], operation: String) -> Decision {
        state.withLock { s in
            s.counts[kind, default: [:]][paths, default: 0] += 1
            for fault in s.faults where fault.kind == kind {
                if let suffix = fault.pathSuffix, !paths.contains(where: { $0.hasSuffix(suffix) }) { continue }
                let n = s.count(of: kind, pathSuffix: fault.pathSuffix)
                let fires = fault.persistence == .once ? n == fault.index : n >= fault.index
                guard fires else { continue }
                s.triggered += 1
                switch fault.action {
                case .shortWrite(let bytes):
                    return .shortWrite(bytes: bytes)
                case .fail(let failure):
                    let code = failure == .io ? EIO : ENOSPC
                    let scope = fault.pathSuffix.map { " on *\($0)" } ?? ""
                    return .fail(
                        StorageError.posix(
                            code, "\(operation) (injected fault at \(kind.rawValue) #\(n)\(scope))",
                            path: paths.first ?? "", writing: true))
                }
            }
            return .proceed
        }
    }

    /// Throws when the operation is to fail (a short write is treated as proceeding).
    func check(_ kind: FileOperationKind, paths: [String], operation: String) throws(StorageError) {
        if case .fail(let error) = decide(kind, paths: paths, operation: operation) { throw error }
    }

    // MARK: FileSystem

    public func open(_ path: String, options: FileOpenOptions) throws(StorageError) -> any StorageFile {
        try check(.open, paths: [path], operation: "open")
        let file = try base.open(path, options: options)
        return FaultInjectingFile(base: file, injector: self)
    }

    public func fileExists(_ path: String) -> Bool {
        base.fileExists(path)
    }

    public func rename(_ from: String, to: String) throws(StorageError) {
        try check(.rename, paths: [from, to], operation: "rename to \(to)")
        try base.rename(from, to: to)
    }

    public func remove(_ path: String) throws(StorageError) {
        try check(.remove, paths: [path], operation: "unlink")
        try base.remove(path)
    }

    public func syncDirectory(_ directory: String) throws(StorageError) {
        try check(.syncDirectory, paths: [directory], operation: "fsync directory")
        try base.syncDirectory(directory)
    }

    public func createDirectory(_ path: String) throws(StorageError) {
        try base.createDirectory(path)
    }

    public func availableBytes(at path: String) -> UInt64? {
        base.availableBytes(at: path)
    }

    public func contentsOfDirectory(_ path: String) throws(StorageError) -> [String] {
        try base.contentsOfDirectory(path)
    }
}
