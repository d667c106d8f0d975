// The pager's in-memory index of page versions, and the page cache that hangs off it.
//
// For every page that has versions in the log, the table lists them in sequence order (the log
// index: a reader with snapshot S uses the newest version with sequence ≤ S, else the page file's
// copy). Cached buffers sit in the same entries, so a cache hit costs one dictionary lookup.
// The cache is bounded in bytes and evicts with CLOCK; it never drops a buffer that any
// transaction still holds (checked with isKnownUniquelyReferenced), which is invariant I16.
// Everything here is guarded by the pager's state lock.

/// One page version in the log.
struct PageVersion {
    var sequence: FrameSequence
    var frame: LogFrameReference
    var buffer: PageBuffer?
    var referenced: Bool
}

/// Everything known about one page.
final class PageEntry {
    /// The cached copy of the page file's version.
    var base: PageBuffer?
    var baseReferenced = false
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

/// A cached buffer's place in the CLOCK ring: the page and which version (0 = the page file's).
struct CacheSlot {
    var page: UInt32
    var sequence: UInt64
}

struct PageTable {
    var entries: [UInt32: PageEntry] = [:]
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

    init(budgetBytes: Int, pageSize: Int) {
        self.budgetBytes = budgetBytes
        self.pageSize = pageSize
    }

    var cachedPageCount: Int { ring.count }

    mutating func entry(_ page: PageNumber) -> PageEntry {
        if let e = entries[page.rawValue] { return e }
        let e = PageEntry()
        entries[page.rawValue] = e
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
        let e = entry(page)
        if sequence == .pageFile {
            guard e.base == nil else { return false }
            e.base = buffer
            e.baseReferenced = true
        } else {
            guard let i = e.versions.firstIndex(where: { $0.sequence == sequence }), e.versions[i].buffer == nil else {
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
            let slot = ring[hand]
            guard let e = entries[slot.page] else {
                removeSlot(at: hand)
                continue
            }
            switch tryEvict(e, sequence: slot.sequence) {
            case .gone:
                removeSlot(at: hand)
            case .evicted:
                removeSlot(at: hand)
                cachedBytes -= pageSize
                evictions += 1
                if e.base == nil, e.versions.isEmpty { entries[slot.page] = nil }
            case .kept:
                hand += 1
            }
        }
        futileSweepAt = cachedBytes > budgetBytes ? ring.count : nil
    }

    private enum EvictOutcome { case gone, evicted, kept }

    private func tryEvict(_ e: PageEntry, sequence: UInt64) -> EvictOutcome {
        if sequence == 0 {
            guard var b = e.base else { return .gone }
            if e.baseReferenced {
                e.baseReferenced = false
                return .kept
            }
            e.base = nil
            if !isKnownUniquelyReferenced(&b) {  // I16: a live transaction holds it
                e.base = b
                return .kept
            }
            return .evicted
        }
        guard let i = e.versions.firstIndex(where: { $0.sequence.rawValue == sequence }), var b = e.versions[i].buffer
        else { return .gone }
        if e.versions[i].referenced {
            e.versions[i].referenced = false
            return .kept
        }
        e.versions[i].buffer = nil
        if !isKnownUniquelyReferenced(&b) {  // I16
            e.versions[i].buffer = b
            return .kept
        }
        return .evicted
    }

    private mutating func removeSlot(at index: Int) {
        ring.swapAt(index, ring.count - 1)
        ring.removeLast()
    }

    /// After a checkpoint copied every version into the page file and the log was reset: each
    /// page's newest version becomes its page-file copy, all log versions go, the ring is rebuilt.
    mutating func collapseAfterReset() {
        ring.removeAll(keepingCapacity: true)
        hand = 0
        cachedBytes = 0
        var empty: [UInt32] = []
        for (page, e) in entries {
            if let newest = e.versions.last {
                e.base = newest.buffer
                e.baseReferenced = newest.referenced
                e.versions.removeAll()
            }
            if e.base != nil {
                ring.append(CacheSlot(page: page, sequence: 0))
                cachedBytes += pageSize
            } else {
                empty.append(page)
            }
        }
        for page in empty { entries[page] = nil }
        if cachedBytes > budgetBytes { evict() }
    }

    /// Forgets the cached page-file copies of these pages (a partial checkpoint rewrote them).
    mutating func dropBase(of pages: [PageNumber]) {
        for p in pages {
            if let e = entries[p.rawValue], e.base != nil {
                e.base = nil
                cachedBytes -= pageSize  // its ring slot is dropped lazily as `.gone`
            }
        }
    }
}
