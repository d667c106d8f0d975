// The pager: one store's page file and log, the version table, snapshots and commits.
// Opening and recovery are in Pager+Open.swift, checkpoints in Pager+Checkpoint.swift.
//
// Locks (Docs/Concurrency.md), always taken in this order:
//   1. `writer`  — the writer lock (a `BlockingMutex`: waiters sleep, they do not spin), held for
//                  a whole write transaction and for checkpoints;
//                  guards WriterState (last transaction, last appended sequence, current meta).
//   2. GroupCommit's lock — who syncs, what is durable.
//   3. `state`   — the version table and cache, published snapshot, live readers; held briefly.
// Page reads take only `state`, never the writer lock, so readers never block the writer (I5).

import Logging
import Synchronization

/// Writer-lock state.
struct WriterState {
    var lastTransaction: TransactionID
    /// Sequence of the last frame appended (the writer's own snapshot).
    var sequence: FrameSequence
    var meta: MetaPage
    /// Set once the store was closed or replaced (compaction); writers must not continue.
    var retired = false
}

/// State-lock state.
struct PagerState {
    var table: PageTable
    /// The newest durable commit: new readers start here.
    var published: FrameSequence
    var publishedTransaction: TransactionID
    /// Commits appended but not yet published: (last frame sequence, transaction).
    var pending: [(FrameSequence, TransactionID)] = []
    /// Live read transactions and their snapshots.
    var readers: [Int: FrameSequence] = [:]
    var nextReaderID = 1
    /// Readers whose snapshot is below this were cut off by a checkpoint (snapshot too old).
    var revokedBelow = FrameSequence(0)
    /// Every log version up to this sequence has been copied into the page file.
    var backfilled = FrameSequence(0)
    /// Bumped whenever a checkpoint rewrites pages of the page file; a page-file read that
    /// started in an older epoch is not cached.
    var epoch: UInt64 = 0
    /// Bumped when a checkpoint drops every log version from the table, just before it resets
    /// the log: a reader that looked a page up in the log before that and read the frame after
    /// (the bytes may be gone, or another generation's) looks the page up again — the page file
    /// has it now.
    var logGeneration: UInt64 = 0
    var revokedReaderCount: UInt64 = 0
}

final class Pager: @unchecked Sendable {
    // `@unchecked Sendable`: immutable fields below, plus `writer` and `state` (Mutex) and the
    // log, whose mutating methods are called only by the writer-lock holder.
    let options: StoreOptions
    let path: String
    let logPath: String
    let pageSize: Int
    let pageFile: any StorageFile
    let log: WriteAheadLog
    let logger: Logger
    let writer: BlockingMutex<WriterState>
    let state: PagerStateLock
    let groupCommit: GroupCommit
    /// Bytes of frames in the log; written under the writer lock, read anywhere (auto-checkpoint).
    let logFrameBytes: Atomic<UInt64>
    let checkpointCount = Atomic<UInt64>(0)
    /// Log frame bytes at which the automatic checkpoint tries again after one that could not
    /// empty the log (a reader held an older snapshot); 0 after one that did. Written by
    /// checkpoints (under the writer lock), read after every commit.
    let checkpointRetryBytes = Atomic<UInt64>(0)
    /// Runs the automatic checkpoint off the committing thread (`options.checkpointInBackground`).
    let backgroundCheckpointer = BackgroundCheckpointer()
    /// The damage a salvaging open (`StoreOptions.salvageLog`) stopped recovery at.
    let logDamage: LogDamage?

    init(
        options: StoreOptions, path: String, logPath: String, pageFile: any StorageFile, log: WriteAheadLog,
        writer: WriterState, state: sending PagerState, logDamage: LogDamage? = nil, logger: Logger
    ) {
        self.logDamage = logDamage
        self.options = options
        self.path = path
        self.logPath = logPath
        self.pageSize = log.pageSize
        self.pageFile = pageFile
        self.log = log
        self.logger = logger
        self.writer = BlockingMutex(writer)
        let stateLock = PagerStateLock(state)
        self.state = stateLock
        self.logFrameBytes = Atomic(log.frameBytes)
        let theLog = log
        groupCommit = GroupCommit(
            durableUpTo: writer.sequence, durableTransaction: log.header.baseTransaction,
            syncLog: { () throws(StorageError) in try theLog.sync() },
            publish: { seq in stateLock.withLock { Pager.publish(&$0, upTo: seq) } })
    }

    deinit { closeFiles() }

    /// Makes commits up to `seq` visible to new readers.
    static func publish(_ s: inout PagerState, upTo seq: FrameSequence) {
        guard seq > s.published else { return }
        s.published = seq
        while let first = s.pending.first, first.0 <= seq {
            s.publishedTransaction = first.1
            s.pending.removeFirst()
        }
    }

    // MARK: Reading pages

    private enum Lookup {
        case hit(PageBuffer)
        case log(LogFrameReference, FrameSequence, generation: UInt64)
        /// Read from the page file, into `spare` when the cache had an evicted buffer to reuse.
        case file(epoch: UInt64, spare: PageBuffer?)
        case revoked
    }

    /// The page as of `snapshot`: from the cache, the log or the page file, checksum-verified.
    func readPage(_ number: PageNumber, snapshot: FrameSequence) throws(StorageError) -> PageBuffer {
        while true {
            let lookup: Lookup = state.withLock { s in
                if snapshot < s.revokedBelow { return .revoked }
                switch s.table.find(number.rawValue, at: snapshot) {
                case .buffer(let b): return .hit(consume b)  // `find`'s reference, moved (no copy)
                case .log(let ref, let seq): return .log(ref, seq, generation: s.logGeneration)
                case .pageFile: return .file(epoch: s.epoch, spare: s.table.takeSpare())
                }
            }
            switch consume lookup {
            case .hit(let b):
                return b
            case .revoked:
                throw snapshotTooOld()
            case .log(let ref, let seq, let generation):
                guard let buffer = try readLogVersion(number, at: ref, generation: generation, snapshot: snapshot, caching: seq) else {
                    continue  // the log was checkpointed and reset under this read: look again
                }
                return buffer
            case .file(let epoch, let spare):
                let buffer = try readFromPageFile(number, into: spare)
                guard buffer.isValid(as: number) else {
                    try checkRevoked(snapshot)  // a checkpoint may have rewritten the page under a cut-off reader
                    throw StorageError(.corrupt, "page checksum mismatch", page: number, path: path)
                }
                let revoked = state.withLock { s in
                    if snapshot < s.revokedBelow { return true }
                    if s.epoch == epoch { _ = s.table.cache(buffer, page: number, sequence: .pageFile) }
                    return false
                }
                if revoked { throw snapshotTooOld() }
                return buffer
            }
        }
    }

    /// The pages `numbers` as of `snapshot`, each as `readPage` gives it, appended to `out` in
    /// order. The cached ones up to the first that is not are found under one lock, their
    /// objects' first lines asked for (`PageTable.hint`) before any is retained, so the cold
    /// lines of a batch of leaves arrive together (a retain waits for its line: one page after
    /// another, a memory latency each). The rest are read one at a time by `readPage`.
    func readPages(_ numbers: [PageNumber], snapshot: FrameSequence, into out: inout [PageBuffer]) throws(StorageError) {
        let first = out.count
        let revoked = state.withLock { s -> Bool in
            if snapshot < s.revokedBelow { return true }
            for number in numbers { s.table.hint(number.rawValue, at: snapshot) }
            for number in numbers {
                guard case .buffer(let b) = s.table.find(number.rawValue, at: snapshot) else { break }
                out.append(consume b)  // the reference `find` took, moved into the list
            }
            return false
        }
        if revoked { throw snapshotTooOld() }
        for number in numbers[(out.count - first)...] { out.append(try readPage(number, snapshot: snapshot)) }
    }

    /// Reads the log frame `ref` found in log generation `generation`. Returns nil when the log
    /// was reset since (a checkpoint copied every version into the page file first, I8): the
    /// frame's bytes may be gone or another generation's, so whatever the read gave — bytes or
    /// an error — means nothing, and the caller looks the page up again. `caching`: the
    /// version's sequence, to keep the buffer in the cache.
    func readLogVersion(
        _ number: PageNumber, at ref: LogFrameReference, generation: UInt64, snapshot: FrameSequence, caching: FrameSequence?
    ) throws(StorageError) -> PageBuffer? {
        let buffer = PageBuffer.zeroed(size: pageSize)
        var failure: StorageError?
        do throws(StorageError) { try log.readPage(number, at: ref, into: buffer) } catch { failure = error }
        let valid = failure == nil && buffer.isValid(as: number)
        let (revoked, stale) = state.withLock { s -> (Bool, Bool) in
            if snapshot < s.revokedBelow { return (true, false) }
            if s.logGeneration != generation { return (false, true) }
            if valid, let caching { _ = s.table.cache(buffer, page: number, sequence: caching) }
            return (false, false)
        }
        if revoked { throw snapshotTooOld() }
        if stale { return nil }
        if let failure { throw failure }
        guard valid else {
            throw StorageError(.corrupt, "page checksum mismatch in a log frame", page: number, logPosition: ref.offset, path: logPath)
        }
        return buffer
    }

    /// Reads page `number` from the page file (no checksum check), into `spare` (a buffer nobody
    /// else holds) or a new buffer.
    func readFromPageFile(_ number: PageNumber, into spare: PageBuffer? = nil) throws(StorageError) -> PageBuffer {
        let buffer = spare ?? PageBuffer.uninitialized(size: pageSize)
        let offset = UInt64(number.rawValue) * UInt64(pageSize)
        let n = try pageFile.read(into: buffer.bytes, at: offset)
        guard n == pageSize else {
            throw StorageError(.corrupt, "page lies beyond the end of the page file", page: number, path: path)
        }
        return buffer
    }

    private func checkRevoked(_ snapshot: FrameSequence) throws(StorageError) {
        let revoked = state.withLock { snapshot < $0.revokedBelow }
        if revoked { throw snapshotTooOld() }
    }

    private func snapshotTooOld() -> StorageError {
        StorageError(
            .snapshotTooOld,
            "snapshot too old: this read transaction was open while the log passed \(options.maxLogBytes) bytes, so a checkpoint moved past it; start a new read transaction",
            path: path)
    }

    // MARK: Snapshots

    /// Registers a reader at the newest published commit.
    func beginRead() -> (id: Int, snapshot: FrameSequence, transaction: TransactionID) {
        state.withLock { s in
            let id = s.nextReaderID
            s.nextReaderID += 1
            s.readers[id] = s.published
            return (id, s.published, s.publishedTransaction)
        }
    }

    func endRead(_ id: Int) {
        state.withLock { _ = $0.readers.removeValue(forKey: id) }
    }

    // MARK: Commit

    /// Writes a transaction's pages to the log and makes them the writer's new state. Called
    /// with the writer lock held. Returns the commit's last frame sequence, or nil when the
    /// transaction changed nothing. On error nothing is visible and the writer state is unchanged (I14).
    func commit(_ pages: WritePages, writer w: inout WriterState) throws(StorageError) -> FrameSequence? {
        if pages.metaChanged {
            let page0 = try pages.writablePage(.meta)
            pages.meta.write(into: page0)
        }
        guard !pages.dirty.isEmpty else { return nil }
        let transaction = w.lastTransaction.next
        var list: [LogPage] = []
        list.reserveCapacity(pages.dirty.count)
        for (number, buffer) in pages.dirty.sorted(by: { $0.key < $1.key }) {
            list.append(LogPage(number: PageNumber(number), buffer: buffer))
        }
        // The log stamps each page with the transaction and seals it just before its frame goes
        // into the chunk being written, so the kernel's copy reads it from the cache the checksum
        // just brought it into (a commit of tens of MiB sealed up front left every page cold).
        let refs = try log.append(
            list, transaction: transaction, pageCountAfterCommit: pages.meta.pageCount,
            durableThrough: groupCommit.durableTransaction)
        guard let last = refs.last?.0 else { return nil }
        state.withLock { s in
            for (i, (seq, ref)) in refs.enumerated() {
                // Buffers retained into the table a few pages ahead (PageTable.swift, at the top).
                if i + 8 < list.count { list[i + 8].buffer.prefetch() }
                s.table.addVersion(list[i].number, sequence: seq, frame: ref, buffer: list[i].buffer)
            }
            s.pending.append((last, transaction))
        }
        w.lastTransaction = transaction
        w.sequence = last
        w.meta = pages.meta
        logFrameBytes.store(log.frameBytes, ordering: .relaxed)
        groupCommit.noteAppended(last, transaction: transaction)
        if options.syncMode != .full { groupCommit.markDurableWithoutSync(last) }
        return last
    }

    /// Brings the page cache back within its budget once a commit released its buffers.
    func trimCache() { state.withLock { $0.table.trim() } }

    /// Whether a commit that has just become durable should run the automatic checkpoint: the log
    /// holds more than the threshold, and either the last checkpoint emptied it, or the log has
    /// grown by a quarter of the threshold since one that could not, or a checkpoint now could
    /// empty it (no commit waits to be published and no reader holds an older snapshot). A
    /// checkpoint that cannot empty the log still costs two fsyncs under the writer lock: run
    /// after every commit while some reader pinned an old snapshot, it serialised every writer
    /// behind it (Docs/Performance.md, "Durable saves").
    var needsCheckpoint: Bool {
        let bytes = logFrameBytes.load(ordering: .relaxed)
        guard bytes > options.checkpointThresholdBytes else { return false }
        if bytes >= checkpointRetryBytes.load(ordering: .relaxed) { return true }
        return state.withLock { s in s.pending.isEmpty && s.readers.values.allSatisfy { $0 >= s.published } }
    }

    /// Why writes are refused, if they are.
    var writeRefusal: StorageError? {
        if options.readOnly { return StorageError(.readOnly, "the store was opened read-only", path: path) }
        return groupCommit.stopReason
    }
}

/// The state lock: a Mutex in a class so the group-commit closure can share it with the pager.
final class PagerStateLock: Sendable {
    private let mutex: Mutex<PagerState>
    init(_ value: consuming sending PagerState) { mutex = Mutex(value) }

    /// Runs `body` with the lock held. Bodies are short and never call out of the pager.
    func withLock<R>(_ body: (inout PagerState) throws(StorageError) -> R) throws(StorageError) -> R {
        try mutex.withLock { (s: inout sending PagerState) throws(StorageError) -> sending R in
            nonisolated(unsafe) let r = try body(&s)
            return r
        }
    }

    func withLock<R>(_ body: (inout PagerState) -> R) -> R {
        mutex.withLock { (s: inout sending PagerState) -> sending R in
            nonisolated(unsafe) let r = body(&s)
            return r
        }
    }
}
