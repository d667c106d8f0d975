// The pager's in-memory index of page versions, and the page cache that hangs off it.
//
// For every page that has versions in the log, the table lists them in sequence order (the log
// index: a reader with snapshot S uses the newest version with sequence ≤ S, else the page file's
// copy). Cached buffers sit in the same slots, so a cache hit costs one array index.
// The table is a flat array indexed by page number (`PageSlot`, 24 bytes per page up to the
// highest page the store has touched: about 0.6% of the page file at 4 KiB pages), so a lookup
// hashes nothing and chases no per-page object; only pages with log versions own a `PageEntry`.
// The cache is bounded in bytes and evicts with CLOCK; it never drops a buffer that any
// transaction still holds (checked with isKnownUniquelyReferenced), which is invariant I16.
// Up to `spareLimit` evicted buffers are kept for the next page read instead of being freed
// (outside the budget: at most `spareLimit` pages more).
// Everything here is guarded by the pager's state lock.
//
// The loops that visit many pages' entries at once in a commit (its new versions, the CLOCK sweep)
// meet cold memory: the slot, the buffer object whose reference count a retain or release
// updates (an atomic update waits for its line before anything after it proceeds). They ask for
// those lines a few pages ahead (`keel_prefetch_write`), so the misses overlap instead of
// following each other (Docs/Performance.md, round cascade5).

import CKeelSupport

/// One page version in the log.
struct PageVersion {
    var sequence: FrameSequence
    var frame: LogFrameReference
    var buffer: PageBuffer?
    var referenced: Bool
}

/// The log versions of one page.
final class PageEntry {
    /// Log versions, ascending by sequence.
    var versions: [PageVersion] = []

    /// Index of the newest version visible at `snapshot`, or nil for the page file's copy.
    @inline(__always)
    func versionIndex(at snapshot: FrameSequence) -> Int? {
        var i = versions.count - 1
        while i >= 0 {
            if versions[i].sequence <= snapshot { return i }
            i -= 1
        }
        return nil
    }
}

/// Asks for an object's first cache line, where its reference count is, for writing (a hint).
@inline(__always)
func prefetchObject<T: AnyObject>(_ object: T) {
    keel_prefetch_write(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()))
}

/// Everything known about one page: its cached page-file copy and its log versions.
struct PageSlot {
    /// The cached copy of the page file's version.
    var base: PageBuffer?
    var baseReferenced = false
    /// Log versions; nil when the page has none.
    var log: PageEntry?
}

/// One page a checkpoint copies: the log version's frame, and its cached buffer's bytes (not
/// retained: valid while `PageTable.logVersionsPinned` holds; nil when not cached).
struct CheckpointPage {
    var page: PageNumber
    var frame: LogFrameReference
    var bytes: UnsafeRawPointer?
}

/// A cached buffer's place in the CLOCK ring: the page and which version (0 = the page file's).
struct CacheSlot {
    var page: UInt32
    var sequence: UInt64
}

/// Where the version of a page a snapshot sees is, as far as the table knows.
enum CachedVersion {
    case buffer(PageBuffer)
    /// Not cached: in the log at this frame.
    case log(LogFrameReference, FrameSequence)
    /// Not cached: the page file's copy.
    case pageFile
}

struct PageTable {
    /// Indexed by page number; grows on demand.
    private var slots: [PageSlot] = []
    /// Evicted buffers kept for reuse by the next page read (at most `spareLimit`).
    private var spares: [PageBuffer] = []
    static let spareLimit = 16
    private(set) var cachedBytes = 0
    let budgetBytes: Int
    let pageSize: Int
    private var ring: [CacheSlot] = []
    private var hand = 0
    /// The ring size at which the last sweep ended still over budget (every buffer pinned or
    /// hot). Until the ring grows well past it, adding a buffer does not sweep again: a commit
    /// of 40,000 pages that its own transaction still holds would otherwise sweep the whole ring
    /// once per page (quadratic). `trim()` after the commit sweeps for real.
    private var futileSweepAt: Int?
    // Counters for statistics.
    var hits: UInt64 = 0
    var misses: UInt64 = 0
    var evictions: UInt64 = 0
    /// Ring slots examined by sweeps (a test checks sweeping stays linear in the pages cached).
    var sweepSteps: UInt64 = 0
    /// While set, the sweep evicts no log version's buffer: a checkpoint is copying from the
    /// buffers its work list names without holding them (`checkpointWork`).
    var logVersionsPinned = false

    init(budgetBytes: Int, pageSize: Int) {
        self.budgetBytes = budgetBytes
        self.pageSize = pageSize
    }

    var cachedPageCount: Int { ring.count }

    /// The log versions of `page`, if it has any.
    func logEntry(_ page: UInt32) -> PageEntry? {
        page < UInt32(slots.count) ? slots[Int(page)].log : nil
    }

    /// A checkpoint's work list: every page with a log version at or below `target` newer than
    /// `backfilled`, with that version's frame and the bytes of its cached buffer (nil: not
    /// cached), in ascending page order, in one pass over the slots. (Asking for each entry, its
    /// version list and its buffer a few pages ahead, as the commit does, did not pay here:
    /// Performance.md, round cascade5.)
    ///
    /// The bytes are not retained: a retain is an atomic update of a cold buffer object, one
    /// memory latency per page in a row (round cascade6). They stay valid only while nothing
    /// drops a log version's buffer: the caller holds the writer lock (no commit, no collapse)
    /// and sets `logVersionsPinned` in the same lock section, so the sweep keeps every log
    /// version's buffer until the copy is done.
    func checkpointWork(target: FrameSequence, backfilled: FrameSequence) -> [CheckpointPage] {
        var work: [CheckpointPage] = []
        slots.withUnsafeBufferPointer { s in
            let n = s.count
            for p in 0..<n {
                // The entry is read without a retain (the table holds it; the state lock is held).
                guard let e = s[p].log.map(Unmanaged.passUnretained) else { continue }
                let item = e._withUnsafeGuaranteedRef { e -> CheckpointPage? in
                    guard let i = e.versionIndex(at: target), e.versions[i].sequence > backfilled else { return nil }
                    let bytes = e.versions[i].buffer.map { UnsafeRawPointer($0.pointer) }
                    return CheckpointPage(page: PageNumber(UInt32(p)), frame: e.versions[i].frame, bytes: bytes)
                }
                if let item { work.append(item) }
            }
        }
        return work
    }

    /// The version of `page` that `snapshot` sees: a cached buffer (marked referenced for CLOCK),
    /// else where to read it. Counts the hit or miss.
    @inline(__always)
    mutating func find(_ page: UInt32, at snapshot: FrameSequence) -> CachedVersion {
        let p = Int(page)
        if p < slots.count {
            if let e = slots[p].log, let i = e.versionIndex(at: snapshot) {
                if let b = e.versions[i].buffer {
                    e.versions[i].referenced = true
                    hits &+= 1
                    return .buffer(b)
                }
                misses &+= 1
                return .log(e.versions[i].frame, e.versions[i].sequence)
            }
            if let b = slots[p].base {
                slots[p].baseReferenced = true
                hits &+= 1
                return .buffer(b)
            }
        }
        misses &+= 1
        return .pageFile
    }

    /// Asks the CPU for the first line of the buffer `find` would give for `page` at `snapshot`
    /// (its reference count, the page's header), for writing, without taking a reference: the
    /// retain `find`'s caller takes next is an atomic update that waits for a cold line, so
    /// several pages' lines asked for first arrive together instead of one after another
    /// (`Pager.readPages`). Nothing when the version is not cached; counts nothing, marks nothing.
    ///
    /// A page-file copy's object address is read from the slot's bytes (`slotObject`): binding
    /// the buffer (`if let b = slots[p].base`) takes a reference, a retain of the very line asked
    /// for, which is the wait this is for. Log versions (a `PageEntry` to look into) are hinted
    /// through the entry, taking references as `find` does.
    @inline(__always)
    func hint(_ page: UInt32, at snapshot: FrameSequence) {
        let p = Int(page)
        guard p < slots.count else { return }
        let (base, log) = slots.withUnsafeBufferPointer { s in
            (Self.slotObject(s, p, at: Self.baseOffset), Self.slotObject(s, p, at: Self.logOffset))
        }
        if log != nil {
            guard let e = slots[p].log, let i = e.versionIndex(at: snapshot) else { return }
            if let b = e.versions[i].buffer { prefetchObject(b.storage) }
            return
        }
        if let base { keel_prefetch_write(base) }
    }

    /// Where `PageSlot.base` and `PageSlot.log` sit in a slot (constants: `MemoryLayout`'s
    /// key-path offsets are not folded, and a `static let` costs a `swift_once` per use). Each is
    /// one optional class reference (its object's address, 0 when nil):
    /// `PageBatchTests.slotObjects` checks both against `MemoryLayout` and the objects themselves.
    static var baseOffset: Int { 0 }
    static var logOffset: Int { 16 }

    /// The object address stored at `offset` in slot `p` (nil when the reference is nil), read
    /// as bits: no reference taken.
    @inline(__always)
    static func slotObject(_ slots: UnsafeBufferPointer<PageSlot>, _ p: Int, at offset: Int) -> UnsafeRawPointer? {
        UnsafeRawPointer(slots.baseAddress! + p).load(fromByteOffset: offset, as: UnsafeRawPointer?.self)
    }

    /// The object addresses `hint` reads for `page`'s slot (tests): the page-file copy's and the
    /// log entry's.
    func slotObjects(_ page: UInt32) -> (base: UnsafeRawPointer?, log: UnsafeRawPointer?) {
        let p = Int(page)
        guard p < slots.count else { return (nil, nil) }
        return slots.withUnsafeBufferPointer { s in (Self.slotObject(s, p, at: Self.baseOffset), Self.slotObject(s, p, at: Self.logOffset)) }
    }

    /// An evicted buffer to read a page into, if one is kept.
    mutating func takeSpare() -> PageBuffer? { spares.popLast() }

    private mutating func ensureSlot(_ page: UInt32) {
        let p = Int(page)
        guard p >= slots.count else { return }
        slots.reserveCapacity(max(p + 1, slots.count * 2, 64))
        slots.append(contentsOf: repeatElement(PageSlot(), count: p + 1 - slots.count))
    }

    private mutating func entry(_ page: PageNumber) -> PageEntry {
        ensureSlot(page.rawValue)
        if let e = slots[Int(page.rawValue)].log { return e }
        let e = PageEntry()
        slots[Int(page.rawValue)].log = e
        return e
    }

    /// Records a new committed log version, with its buffer cached (the committed dirty page).
    mutating func addVersion(_ page: PageNumber, sequence: FrameSequence, frame: LogFrameReference, buffer: PageBuffer) {
        let e = entry(page)
        assert(e.versions.last.map { $0.sequence < sequence } ?? true, "I5: versions ascend")
        e.versions.append(PageVersion(sequence: sequence, frame: frame, buffer: buffer, referenced: true))
        noteCached(CacheSlot(page: page.rawValue, sequence: sequence.rawValue))
    }

    /// Records a version found by recovery (not cached).
    mutating func addRecoveredVersion(_ page: PageNumber, sequence: FrameSequence, frame: LogFrameReference) {
        entry(page).versions.append(PageVersion(sequence: sequence, frame: frame, buffer: nil, referenced: false))
    }

    /// Caches a buffer just read from disk for (page, version). Returns false when the version is
    /// gone or already cached (the caller then simply uses its own copy).
    mutating func cache(_ buffer: PageBuffer, page: PageNumber, sequence: FrameSequence) -> Bool {
        if sequence == .pageFile {
            ensureSlot(page.rawValue)
            let p = Int(page.rawValue)
            guard slots[p].base == nil else { return false }
            slots[p].base = buffer
            slots[p].baseReferenced = true
        } else {
            guard let e = logEntry(page.rawValue), let i = e.versions.firstIndex(where: { $0.sequence == sequence }), e.versions[i].buffer == nil else {
                return false
            }
            e.versions[i].buffer = buffer
            e.versions[i].referenced = true
        }
        noteCached(CacheSlot(page: page.rawValue, sequence: sequence.rawValue))
        return true
    }

    private mutating func noteCached(_ slot: CacheSlot) {
        ring.append(slot)
        cachedBytes += pageSize
        guard cachedBytes > budgetBytes else { return }
        if let futile = futileSweepAt, ring.count < futile + max(64, futile / 8) { return }
        evict()
    }

    /// Sweeps now, whatever the last sweep found (called when a commit has released its pages).
    mutating func trim() {
        futileSweepAt = nil
        if cachedBytes > budgetBytes { evict() }
    }

    /// CLOCK sweep until the cache is within budget or every remaining buffer is pinned or hot.
    mutating func evict() {
        var scanned = 0
        let limit = ring.count * 2
        while cachedBytes > budgetBytes, !ring.isEmpty, scanned < limit {
            scanned += 1
            sweepSteps &+= 1
            if hand >= ring.count { hand = 0 }
            prefetchSweep()
            let slot = ring[hand]
            switch tryEvict(Int(slot.page), sequence: slot.sequence) {
            case .gone:
                removeSlot(at: hand)
            case .evicted:
                removeSlot(at: hand)
                cachedBytes -= pageSize
                evictions += 1
            case .kept:
                hand += 1
            }
        }
        futileSweepAt = cachedBytes > budgetBytes ? ring.count : nil
    }

    /// Asks for what the sweep will look at next: the slots a few ring positions on (at the hand,
    /// and at the ring's end, whose slot an eviction swaps in at the hand), and the buffer of one
    /// a little nearer that is not referenced (the one the sweep will evict, touching its count).
    @inline(__always)
    private func prefetchSweep() {
        let n = ring.count
        prefetchSlot(atRing: hand + 8, n)
        prefetchSlot(atRing: n - 9, n)
        prefetchEvictable(atRing: hand + 4, n)
        prefetchEvictable(atRing: n - 5, n)
    }

    @inline(__always)
    private func prefetchSlot(atRing k: Int, _ n: Int) {
        guard k >= 0, k < n else { return }
        let p = Int(ring[k].page)
        guard p < slots.count else { return }
        slots.withUnsafeBufferPointer { keel_prefetch(UnsafeRawPointer($0.baseAddress! + p), 1) }
    }

    @inline(__always)
    private func prefetchEvictable(atRing k: Int, _ n: Int) {
        guard k >= 0, k < n else { return }
        let slot = ring[k]
        let p = Int(slot.page)
        guard p < slots.count else { return }
        if slot.sequence == 0 {
            if !slots[p].baseReferenced, let b = slots[p].base { b.prefetch() }
        } else if let e = slots[p].log {
            prefetchObject(e)
        }
    }

    private enum EvictOutcome { case gone, evicted, kept }

    private mutating func tryEvict(_ p: Int, sequence: UInt64) -> EvictOutcome {
        guard p < slots.count else { return .gone }
        if sequence == 0 {
            if slots[p].baseReferenced {
                slots[p].baseReferenced = false
                return slots[p].base == nil ? .gone : .kept
            }
            guard var b = slots[p].base else { return .gone }
            slots[p].base = nil
            if !b.isKnownUniquelyReferenced() {  // I16: a live transaction holds it
                slots[p].base = b
                return .kept
            }
            keepSpare(b)
            return .evicted
        }
        guard let e = slots[p].log, let i = e.versions.firstIndex(where: { $0.sequence.rawValue == sequence }),
            e.versions[i].buffer != nil
        else { return .gone }
        if logVersionsPinned { return .kept }  // a checkpoint copies from it unretained
        // The referenced bit first: a hot version is passed over without touching its buffer
        // (taking a reference reads the buffer object's header, a cache miss in a long sweep).
        if e.versions[i].referenced {
            e.versions[i].referenced = false
            return .kept
        }
        guard var b = e.versions[i].buffer else { return .gone }
        e.versions[i].buffer = nil
        if !b.isKnownUniquelyReferenced() {  // I16
            e.versions[i].buffer = b
            return .kept
        }
        keepSpare(b)
        return .evicted
    }

    /// Keeps an evicted buffer (nobody else holds it: checked by the caller) for reuse.
    private mutating func keepSpare(_ buffer: PageBuffer) {
        if spares.count < Self.spareLimit { spares.append(buffer) }
    }

    private mutating func removeSlot(at index: Int) {
        ring.swapAt(index, ring.count - 1)
        ring.removeLast()
    }

    /// After a checkpoint copied every version into the page file, before it resets the log:
    /// each page's newest version becomes its page-file copy, all log versions go, the ring is
    /// rebuilt.
    mutating func collapseLog() {
        var ring = self.ring
        self.ring = []
        ring.removeAll(keepingCapacity: true)
        hand = 0
        slots.withUnsafeMutableBufferPointer { s in
            for p in s.indices {
                // The entry is moved out of its slot and the newest version out of its list: no
                // retain of either (an atomic update of a cold object, one memory latency per page
                // in a row); the entry goes with the older versions.
                if let e = s[p].log.take(), var newest = e.versions.popLast() {
                    s[p].base = newest.buffer.take()
                    s[p].baseReferenced = newest.referenced
                }
                if s[p].base != nil {
                    ring.append(CacheSlot(page: UInt32(p), sequence: 0))
                }
            }
        }
        self.ring = ring
        cachedBytes = ring.count * pageSize
        if cachedBytes > budgetBytes { evict() }
    }

    /// Forgets the cached page-file copies of these pages (a partial checkpoint rewrote them).
    mutating func dropBase(of pages: [PageNumber]) {
        for p in pages where Int(p.rawValue) < slots.count && slots[Int(p.rawValue)].base != nil {
            slots[Int(p.rawValue)].base = nil
            slots[Int(p.rawValue)].baseReferenced = false
            cachedBytes -= pageSize  // its ring slot is dropped lazily as `.gone`
        }
    }
}
