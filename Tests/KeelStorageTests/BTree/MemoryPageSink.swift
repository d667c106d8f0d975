@testable import KeelStorage

/// A `PageSink` over dictionaries with the pager's copy-on-write rules, for B+tree tests.
///
/// Committed pages are sealed with their checksum at `commit()`; `mutatedCommittedPages()` finds
/// any that changed since, which would mean the tree wrote into a buffer returned by `page()`
/// instead of one from `writablePage`. Like the pager, the sink owns bytes 0..4 and 8..16 of
/// every page: it stamps them on each page it hands out for writing, and `commit()` records in
/// `pagerByteViolations` any page whose stamp the tree changed. Using a freed page, freeing twice, or reading a page that
/// was never allocated throws, so such bugs fail tests loudly.
final class MemoryPageSink: PageSink {
    let pageSize: Int
    private(set) var changeCount: UInt64 = 0
    private(set) var shapeCount: UInt64 = 0
    private(set) var committed: [PageNumber: PageBuffer] = [:]
    private(set) var dirty: [PageNumber: PageBuffer] = [:]
    private var freeList: [PageNumber] = []
    private var freed: Set<PageNumber> = []
    private var nextPage: UInt32 = 1
    private var transaction = TransactionID(1)
    private static let checksumStamp: UInt32 = 0xC0FF_EE00
    /// Pages whose pager-owned bytes were written by the tree (should always be empty).
    private(set) var pagerByteViolations: [PageNumber] = []

    init(pageSize: Int = 4096) { self.pageSize = pageSize }

    /// Calls of `page(_:)` (how many page lookups the tree made).
    private(set) var pageReads = 0

    /// Pages allocated and not freed.
    var livePageCount: Int { Int(nextPage) - 1 - freed.count }
    /// Every page number ever allocated (live or free).
    var allocatedPageCount: Int { Int(nextPage) - 1 }
    func isFree(_ number: PageNumber) -> Bool { freed.contains(number) }

    func page(_ number: PageNumber) throws(StorageError) -> PageBuffer {
        pageReads += 1
        if let page = dirty[number] { return page }
        guard !freed.contains(number) else { throw StorageError(.corrupt, "read of a free page", page: number) }
        if let page = committed[number] { return page }
        throw StorageError(.corrupt, "page was never allocated", page: number)
    }

    func writablePage(_ number: PageNumber) throws(StorageError) -> PageBuffer {
        changeCount += 1
        if let page = dirty[number] {
            noteShape(page)
            return page
        }
        guard !freed.contains(number) else { throw StorageError(.corrupt, "write of a free page", page: number) }
        guard let original = committed[number] else {
            throw StorageError(.corrupt, "page was never allocated", page: number)
        }
        let copy = PageBuffer.copy(of: original)
        stamp(copy)
        dirty[number] = copy
        noteShape(copy)
        return copy
    }

    private func noteShape(_ page: PageBuffer) {
        if page.pointer.load(fromByteOffset: 4, as: UInt8.self) != PageType.leaf.rawValue { shapeCount += 1 }
    }

    func allocatePage() throws(StorageError) -> (PageNumber, PageBuffer) {
        changeCount += 1
        shapeCount += 1
        let number: PageNumber
        if let reused = freeList.popLast() {
            number = reused
            freed.remove(reused)
        } else {
            number = PageNumber(nextPage)
            nextPage += 1
        }
        let page = PageBuffer.zeroed(size: pageSize)
        stamp(page)
        dirty[number] = page
        return (number, page)
    }

    func freePage(_ number: PageNumber) throws(StorageError) {
        changeCount += 1
        shapeCount += 1
        guard number.rawValue != 0, number.rawValue < nextPage, !freed.contains(number) else {
            throw StorageError(.invalidArgument, "free of a page that is not live", page: number)
        }
        freed.insert(number)
        dirty[number] = nil
        freeList.append(number)
    }

    /// Makes this transaction's pages the committed state (sealed with their checksums).
    private func stamp(_ page: PageBuffer) {
        page.storedChecksum = Self.checksumStamp
        page.transactionID = transaction
    }

    func commit() {
        for (number, page) in dirty {
            if page.storedChecksum != Self.checksumStamp || page.transactionID != transaction {
                pagerByteViolations.append(number)
            }
            page.seal(as: number)
            committed[number] = page
        }
        for number in freed { committed[number] = nil }
        dirty = [:]
        transaction = transaction.next
    }

    /// Committed pages whose bytes changed after commit (should always be empty).
    func mutatedCommittedPages() -> [PageNumber] {
        committed.compactMap { number, page in page.isValid(as: number) ? nil : number }.sorted()
    }

    /// A read-only view of the committed state.
    func snapshot() -> MemorySnapshot { MemorySnapshot(pageSize: pageSize, pages: committed) }

    /// An independent copy of the committed state (pages copied), with the same free pages.
    func clone() -> MemoryPageSink {
        precondition(dirty.isEmpty, "commit before cloning")
        let copy = MemoryPageSink(pageSize: pageSize)
        copy.committed = committed.mapValues { PageBuffer.copy(of: $0) }
        copy.freeList = freeList
        copy.freed = freed
        copy.nextPage = nextPage
        return copy
    }

    /// Test hook: the buffer of a page, to damage it on purpose.
    func rawPage(_ number: PageNumber) -> PageBuffer? { dirty[number] ?? committed[number] }
}

/// A committed state of a `MemoryPageSink`, as a read snapshot.
struct MemorySnapshot: PageSource {
    let pageSize: Int
    let pages: [PageNumber: PageBuffer]
    var changeCount: UInt64 { 0 }

    func page(_ number: PageNumber) throws(StorageError) -> PageBuffer {
        guard let page = pages[number] else { throw StorageError(.corrupt, "no such page", page: number) }
        return page
    }
}
