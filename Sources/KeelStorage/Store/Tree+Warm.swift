// Warming a tree's leaves ahead of a run of sorted writes, on a helper thread.
//
// A save that deletes thousands of index entries in key order (a cascade's 10,000 name-index
// entries, random against the rows) meets most of their leaves cold: not in the cache, so each
// costs the writer a page-file read (a `pread` out of the kernel's page cache, the page's
// checksum, an eviction). The keys are known before the first of those deletes, and the save has
// other work to do first (its row deletes), so a helper thread can look the keys up on the
// transaction's base snapshot meanwhile: every leaf it reads lands in the shared cache, where the
// writer's own lookup then finds it.
//
// Why this is safe: the helper only reads, as a snapshot reader does (`ReadPages` at the write
// transaction's base commit, through the pager's locked page table), and it never writes a page
// or the table but to cache what it read. The write transaction holds the writer lock for its
// whole life, so no checkpoint runs while the helper does (no log reset, no cut-off of its
// snapshot); the caller ends the helper (`LeafWarmer.finish`, also run by its deinit) before the
// transaction ends. What the helper reads is the committed tree; where the writer has already
// changed a page, its own dirty copy wins and the warmed one is merely unused. A failed read ends
// the helper quietly: the writer reads that page itself and meets the error there.
//
// Pacing: the writer reports how many keys it has passed (`advance(to:)`); the helper skips keys
// the writer has reached (reading them would only compete with it) and stays at most `lead` keys
// ahead, so that what it warms is still cached when the writer gets there.

import Glibc
import Synchronization

/// The helper thread warming one tree's leaves for a sorted list of keys (`Tree.warmLeaves`).
/// Call `advance(to:)` as the writes pass the keys and `finish()` before the transaction ends.
public final class LeafWarmer {
    /// Keys below this many per tree are written without a helper (a thread costs ~50 µs).
    public static let minimumKeys = 512
    private static let started = Atomic<Int>(0)
    /// How many helpers were started since the process began (tests).
    package static var startedCount: Int { started.load(ordering: .relaxed) }

    private let job: Job
    private var thread: pthread_t?

    fileprivate init?(job: Job) {
        self.job = job
        let retained = Unmanaged.passRetained(job).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { argument in
            Unmanaged<Job>.fromOpaque(argument!).takeRetainedValue().run()
            return nil
        }, retained)
        guard rc == 0 else {
            Unmanaged<Job>.fromOpaque(retained).release()
            return nil
        }
        self.thread = thread
        Self.started.add(1, ordering: .relaxed)
    }

    /// The writer has passed the first `count` keys.
    @inline(__always)
    public func advance(to count: Int) { job.passed.store(count, ordering: .relaxed) }

    /// Stops the helper and waits for it to end. Idempotent.
    public func finish() {
        guard let t = thread else { return }
        job.stopping.store(true, ordering: .relaxed)
        pthread_join(t, nil)
        thread = nil
    }

    /// Waits until the helper has gone through every key (tests: with a lead it cannot reach, or
    /// once the writer has passed the keys, or it waits for ever).
    package func waitUntilIdle() {
        guard let t = thread else { return }
        pthread_join(t, nil)
        thread = nil
    }

    /// How many keys the helper looked up (tests).
    package var keysLookedUp: Int { job.lookedUp.load(ordering: .relaxed) }

    deinit { finish() }

    /// What the helper thread reads: immutable but for the atomics.
    fileprivate final class Job: @unchecked Sendable {
        // `@unchecked Sendable`: the stored properties are constants (the pager is shared by
        // design, its table behind its lock) or atomics.
        let pager: Pager
        let snapshot: FrameSequence
        let root: PageNumber
        let bytes: [UInt8]
        let spans: [(start: Int32, count: Int32)]
        let lead: Int
        /// Keys the writer has passed; the helper skips them.
        let passed = Atomic<Int>(0)
        let stopping = Atomic<Bool>(false)
        let lookedUp = Atomic<Int>(0)

        init(pager: Pager, snapshot: FrameSequence, root: PageNumber, bytes: [UInt8],
             spans: [(start: Int32, count: Int32)], lead: Int) {
            self.pager = pager
            self.snapshot = snapshot
            self.root = root
            self.bytes = bytes
            self.spans = spans
            self.lead = lead
        }

        func run() {
            let pages = ReadPages(pager: pager, snapshot: snapshot)
            let tree = BTree(root: root)
            var hint = BTreeHint()
            bytes.withUnsafeBytes { all in
                guard let base = all.baseAddress else { return }
                var i = 0
                var looked = 0
                while i < spans.count, !stopping.load(ordering: .relaxed) {
                    let passed = self.passed.load(ordering: .relaxed)
                    if i < passed { i = passed }  // the writer is past these: skip them
                    guard i < spans.count else { return }
                    if i - passed > lead {
                        usleep(100)
                        continue
                    }
                    let key = UnsafeRawBufferPointer(start: base + Int(spans[i].start), count: Int(spans[i].count))
                    do throws(StorageError) {
                        _ = try tree.locate(key, in: pages, hint: &hint, shape: 0)
                    } catch {
                        return
                    }
                    looked += 1
                    lookedUp.store(looked, ordering: .relaxed)
                    i += 1
                }
            }
        }
    }
}

extension Tree {
    /// Starts a helper thread that reads the leaves holding `spans`' keys (slices of `bytes`, in
    /// ascending key order) into the cache ahead of the writes that will need them; nil when
    /// there are fewer than `LeafWarmer.minimumKeys` keys, in a read transaction, or when no
    /// thread can be started. `lead`: how many keys ahead of the writer's `advance(to:)` it may
    /// go (default: a quarter of the cache's pages).
    public func warmLeaves(bytes: [UInt8], spans: [(start: Int32, count: Int32)], lead: Int? = nil) -> LeafWarmer? {
        transaction.checkOpen()
        guard spans.count >= LeafWarmer.minimumKeys, let w = transaction as? WriteTransaction else { return nil }
        let pager = w.pages.pager
        let cachePages = max(1, pager.options.cacheSizeBytes / pager.pageSize)
        let job = LeafWarmer.Job(
            pager: pager, snapshot: w.pages.base, root: btree.root, bytes: bytes, spans: spans,
            lead: max(1, lead ?? cachePages / 4))
        return LeafWarmer(job: job)
    }
}
