// The free list: pages no tree uses, kept for reuse before the file grows (I13).
//
// Trunk page layout (a freed page turned into a list page):
//
// | offset | size | field                                            |
// |--------|------|--------------------------------------------------|
// | 0      | 16   | common page header, type = free-list trunk       |
// | 16     | 4    | next trunk page (0: last trunk)                  |
// | 20     | 4    | entry count n                                    |
// | 24     | 4·n  | free page numbers                                |
//
// The meta page holds the first trunk and the free page count (trunks included). Taking a page
// pops the last entry of the first trunk, or, when that trunk is empty, takes the trunk itself.
// Giving a page appends it to the first trunk, or makes it the new first trunk when full.
// Free pages that are not trunks are never written, so their old bytes stay on disk; verify
// counts them as free, not as reachable (I12).
//
// Reuse is safe under snapshot reads: a reused page gets a new log version, and readers of older
// snapshots keep resolving the version they saw (I5, I7).

enum FreeList {
    static let nextOffset = 16
    static let countOffset = 20
    static let entriesOffset = 24

    static func capacity(pageSize: Int) -> Int { (pageSize - entriesOffset) / 4 }

    /// Pops a free page, or nil when the list is empty.
    static func take(from pages: WritePages) throws(StorageError) -> PageNumber? {
        let head = pages.meta.freeListHead
        guard head.rawValue != 0 else { return nil }
        let trunk = try pages.writablePage(head)
        guard trunk.pageType == .freeTrunk else {
            throw StorageError.corrupt("free-list head is not a trunk page", page: head)
        }
        let count = Int(trunk.load(UInt32.self, at: countOffset))
        guard count <= capacity(pageSize: pages.pageSize) else {
            throw StorageError.corrupt("free-list trunk entry count \(count) exceeds its capacity", page: head)
        }
        if count > 0 {
            let page = PageNumber(trunk.load(UInt32.self, at: entriesOffset + 4 * (count - 1)))
            guard page.rawValue > 1, page.rawValue < pages.meta.pageCount else {
                throw StorageError.corrupt("free-list entry \(page.rawValue) is out of range", page: head)
            }
            trunk.store(UInt32(count - 1), at: countOffset)
            pages.meta.freePageCount -= 1
            return page
        }
        // An empty trunk: hand out the trunk page itself.
        let next = PageNumber(trunk.load(UInt32.self, at: nextOffset))
        guard next.rawValue < pages.meta.pageCount else {
            throw StorageError.corrupt("free-list next pointer \(next.rawValue) is out of range", page: head)
        }
        pages.meta.freeListHead = next
        pages.meta.freePageCount -= 1
        return head
    }

    /// Adds a page to the free list.
    static func give(_ page: PageNumber, to pages: WritePages) throws(StorageError) {
        let head = pages.meta.freeListHead
        if head.rawValue != 0 {
            let trunk = try pages.writablePage(head)
            let count = Int(trunk.load(UInt32.self, at: countOffset))
            if count < capacity(pageSize: pages.pageSize) {
                trunk.store(page.rawValue, at: entriesOffset + 4 * count)
                trunk.store(UInt32(count + 1), at: countOffset)
                pages.meta.freePageCount += 1
                return
            }
        }
        let trunk = pages.installFresh(page)
        trunk.pageType = .freeTrunk
        trunk.store(head.rawValue, at: nextOffset)
        trunk.store(UInt32(0), at: countOffset)
        pages.meta.freeListHead = page
        pages.meta.freePageCount += 1
    }

    /// Every page on the free list (trunks included), for verify and compaction. Throws on a
    /// malformed list; a cycle is reported as corruption.
    static func allPages(in source: some PageSource, head: PageNumber, pageCount: UInt32) throws(StorageError) -> [PageNumber] {
        var result: [PageNumber] = []
        var seen = Set<UInt32>()
        var current = head
        while current.rawValue != 0 {
            guard current.rawValue < pageCount, seen.insert(current.rawValue).inserted else {
                throw StorageError.corrupt("free list loops or points past the end", page: current)
            }
            let trunk = try source.page(current)
            guard trunk.pageType == .freeTrunk else { throw StorageError.corrupt("free-list page is not a trunk", page: current) }
            result.append(current)
            let count = Int(trunk.load(UInt32.self, at: countOffset))
            guard count <= capacity(pageSize: trunk.size) else {
                throw StorageError.corrupt("free-list trunk entry count \(count) exceeds its capacity", page: current)
            }
            for i in 0..<count { result.append(PageNumber(trunk.load(UInt32.self, at: entriesOffset + 4 * i))) }
            current = PageNumber(trunk.load(UInt32.self, at: nextOffset))
        }
        return result
    }
}
