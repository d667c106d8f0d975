// The page views the B+tree works through: `ReadPages` for a snapshot reader, `WritePages` for
// the one write transaction (copy on write into its dirty set, I5).

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A read transaction's view of the store: every page as of one commit.
///
/// It keeps the branch pages it has read (the upper levels of the trees, which every descent
/// crosses) in a small direct-mapped table, so a lookup takes the pager's state lock about once,
/// for its leaf, instead of once per level. A snapshot never changes, so a kept buffer stays the
/// right one; holding it pins it in the cache for the transaction's life like any page in use
/// (I16), at most `branchSlots` pages. Leaves and overflow pages always go through the pager,
/// so every lookup still sees a checkpoint's cut-off (I7).
///
/// The table is built to cost little when few branches are kept: the slots are one block of
/// plain words (nothing to release per slot), each naming a page and its place in `kept`, which
/// holds only the buffers kept — a few for a lookup, not 64 optionals made and destroyed one by
/// one per read. A `Snapshot`'s reads share one `ReadPages`, emptied between them (`reset`).
final class ReadPages: PageSource {
    let pager: Pager
    let snapshot: FrameSequence
    var pageSize: Int { pager.pageSize }
    var changeCount: UInt64 { 0 }
    static let branchSlots = 64
    /// Per slot: 0 when empty, else the page number in the high 32 bits and the buffer's place
    /// in `kept` plus one in the low 32.
    ///
    /// Both tables are fixed blocks of `branchSlots` entries, allocated once (a `Snapshot`'s reads
    /// share one `ReadPages`, so once per snapshot) and used without bounds, uniqueness or
    /// exclusivity checks: a read transaction's pages are used by the one thread running the read,
    /// no access to them overlaps another (`page` reads both, `keep` writes both, neither calls out
    /// while holding an access), and every index is below `branchSlots` by construction (a slot is
    /// a page number masked; `kept` grows only when an empty slot is filled, so it never holds more
    /// entries than there are slots). Emptying them (`reset`) is a `deinitialize` and a `memset`.
    private let slots: UnsafeMutablePointer<UInt64>
    /// The kept buffers, `keptCount` of them initialized.
    private let kept: UnsafeMutablePointer<PageBuffer>
    private var keptCount = 0

    init(pager: Pager, snapshot: FrameSequence) {
        self.pager = pager
        self.snapshot = snapshot
        slots = .allocate(capacity: Self.branchSlots)
        slots.initialize(repeating: 0, count: Self.branchSlots)
        kept = .allocate(capacity: Self.branchSlots)
    }

    deinit {
        kept.deinitialize(count: keptCount)
        kept.deallocate()
        slots.deallocate()
    }

    /// How many branch buffers the transaction holds (tests).
    var keptBranches: Int { keptCount }

    /// Lets go of every kept branch buffer and empties the table: the state of a new `ReadPages`
    /// of the same snapshot. A `Snapshot` resets the pages of a read that ended and gives them to
    /// its next read (which sees the same commit) instead of building and freeing a table per
    /// read; the buffers are released here, when the read ends, as the table's destruction did.
    func reset() {
        guard keptCount > 0 else { return }  // nothing kept: every slot is still 0
        kept.deinitialize(count: keptCount)
        keptCount = 0
        _ = memset(slots, 0, Self.branchSlots * MemoryLayout<UInt64>.stride)
    }

    @inline(__always)
    func page(_ number: PageNumber) throws(StorageError) -> PageBuffer {
        let slot = Int(number.rawValue) & (Self.branchSlots - 1)
        let entry = slots[slot]
        if entry != 0, UInt32(truncatingIfNeeded: entry &>> 32) == number.rawValue {
            return kept[Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) &- 1]
        }
        let buffer = try pager.readPage(number, snapshot: snapshot)
        if Self.isBranch(buffer) { keep(buffer, number, slot: slot, replacing: entry) }
        return buffer
    }

    /// Whether `buffer` holds a branch page (its type byte), the pages a read keeps.
    @inline(__always)
    private static func isBranch(_ buffer: PageBuffer) -> Bool {
        buffer.pointer.load(fromByteOffset: 4, as: UInt8.self) == PageType.branch.rawValue
    }

    /// Many pages at once (a batch of leaves, `BTreeCursor.lookUpEach`): the cached ones found
    /// together (`Pager.readPages`); a branch among them is kept as `page(_:)` keeps it.
    func pages(_ numbers: [PageNumber], into out: inout [PageBuffer]) throws(StorageError) {
        let first = out.count
        try pager.readPages(numbers, snapshot: snapshot, into: &out)
        for (k, number) in numbers.enumerated() where Self.isBranch(out[first + k]) {
            let slot = Int(number.rawValue) & (Self.branchSlots - 1)
            let entry = slots[slot]
            if entry != 0, UInt32(truncatingIfNeeded: entry &>> 32) == number.rawValue { continue }
            keep(out[first + k], number, slot: slot, replacing: entry)
        }
    }

    private func keep(_ buffer: PageBuffer, _ number: PageNumber, slot: Int, replacing entry: UInt64) {
        let place: UInt64
        if entry != 0 {
            place = entry & 0xFFFF_FFFF  // the slot's old page goes: its place in `kept` is reused
            kept[Int(truncatingIfNeeded: place) &- 1] = buffer
        } else {
            // An empty slot: at most `branchSlots` of them were ever filled since the last reset.
            (kept + keptCount).initialize(to: buffer)
            keptCount &+= 1
            place = UInt64(keptCount)
        }
        slots[slot] = UInt64(number.rawValue) &<< 32 | place
    }
}

/// The write transaction's pages: reads see the writer's latest state plus its own changes;
/// `writablePage` copies a page into the dirty set the first time (the shared buffer is never
/// touched, so readers are unaffected, I5). Nothing here reaches the log until commit, and a
/// transaction that is abandoned simply drops its dirty set (I14).
final class WritePages: PageSink {
    let pager: Pager
    let base: FrameSequence
    var pageSize: Int { pager.pageSize }
    private(set) var changeCount: UInt64 = 0
    private(set) var shapeCount: UInt64 = 0
    /// Pages this transaction changed, by number.
    var dirty: [UInt32: PageBuffer] = [:]
    /// The meta fields as this transaction leaves them; written into page 0 at commit if changed.
    var meta: MetaPage {
        didSet { metaChanged = true }
    }
    private(set) var metaChanged = false

    init(pager: Pager, base: FrameSequence, meta: MetaPage) {
        self.pager = pager
        self.base = base
        self.meta = meta
    }

    @inline(__always)
    func page(_ number: PageNumber) throws(StorageError) -> PageBuffer {
        if let d = dirty[number.rawValue] { return d }
        try checkInRange(number)
        return try pager.readPage(number, snapshot: base)
    }

    func writablePage(_ number: PageNumber) throws(StorageError) -> PageBuffer {
        changeCount &+= 1
        if let d = dirty[number.rawValue] {
            noteShape(d)
            return d
        }
        try checkInRange(number)
        let copy = PageBuffer.copy(of: try pager.readPage(number, snapshot: base))
        dirty[number.rawValue] = copy
        noteShape(copy)
        return copy
    }

    /// A write to anything but a leaf may change a tree's shape (PageSink.shapeCount).
    @inline(__always)
    private func noteShape(_ page: PageBuffer) {
        if page.pointer.load(fromByteOffset: 4, as: UInt8.self) != PageType.leaf.rawValue { shapeCount &+= 1 }
    }

    @inline(__always)
    private func checkInRange(_ number: PageNumber) throws(StorageError) {
        guard number.rawValue < meta.pageCount else {
            throw StorageError(.corrupt, "reference to page \(number.rawValue) beyond the page count \(meta.pageCount)", page: number)
        }
    }

    func allocatePage() throws(StorageError) -> (PageNumber, PageBuffer) {
        changeCount &+= 1
        shapeCount &+= 1
        let number: PageNumber
        if let reused = try FreeList.take(from: self) { number = reused } else { number = try extendFile() }
        let buffer = PageBuffer.zeroed(size: pageSize)
        dirty[number.rawValue] = buffer
        return (number, buffer)
    }

    func freePage(_ number: PageNumber) throws(StorageError) {
        changeCount &+= 1
        shapeCount &+= 1
        precondition(number != .meta && number != meta.catalogRoot, "the meta page and catalog root are never freed")
        try checkInRange(number)
        dirty[number.rawValue] = nil
        try FreeList.give(number, to: self)
    }

    private func extendFile() throws(StorageError) -> PageNumber {
        guard meta.pageCount < UInt32.max - 1 else {
            throw StorageError(.tooLarge, "the store has reached its maximum page count")
        }
        let number = PageNumber(meta.pageCount)
        meta.pageCount += 1
        return number
    }

    /// A brand-new page owned by this transaction at a number the caller already reserved
    /// (used by the free list when a freed page becomes a trunk).
    func installFresh(_ number: PageNumber) -> PageBuffer {
        shapeCount &+= 1
        let buffer = PageBuffer.zeroed(size: pageSize)
        dirty[number.rawValue] = buffer
        return buffer
    }
}
