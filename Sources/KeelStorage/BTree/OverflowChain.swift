// Overflow pages: a value too large to live in its leaf cell, as a chain of pages
// (Docs/FileFormat.md, "Overflow pages").
//
// | offset | size | field                                                                      |
// |--------|------|----------------------------------------------------------------------------|
// | 0      | 16   | common page header (PageBuffer.swift): type 4 = overflow, flags 0, 6..8 = 0 |
// | 16     | 4    | next page of the chain; 0 on the last page                                 |
// | 20     | 4    | used bytes U on this page: capacity (pageSize − 24) on every page but the   |
// |        |      | last, 1 ≤ U ≤ capacity on the last                                         |
// | 24     | U    | data; the rest of the page is zero                                         |
//
// The chain holds the stored bytes of one value (its leaf cell's overflow reference, Cell.swift,
// says how many: S). When LZ4 makes the value at least an eighth smaller the stored bytes are one
// LZ4 block (reference flag bit 0) that decompresses to exactly the value length; otherwise they
// are the value itself.
//
// Validity: the chain has exactly ceil(S / capacity) pages, each of type overflow, with the used
// bytes above, the last one's next = 0; their data concatenated is S bytes; a compressed block is
// decompressed only by `LZ4.decompress` into exactly the value length.
// Invariants: a chain belongs to exactly one leaf cell and is freed with it (on delete, replace
// and drop); its pages are reachable from nowhere else.

enum OverflowChain {
    static let nextOffset = 16
    static let usedOffset = 20
    static let dataOffset = 24

    static func capacity(pageSize: Int) -> Int { pageSize - dataOffset }

    static func pageCount(storedLength: Int, pageSize: Int) -> Int {
        let capacity = capacity(pageSize: pageSize)
        return (storedLength + capacity - 1) / capacity
    }

    /// Stores `value` in a new chain, LZ4-compressed when that saves at least an eighth.
    static func write<Sink: PageSink>(_ value: UnsafeRawBufferPointer, in sink: Sink) throws(StorageError)
        -> OverflowReference
    {
        precondition(value.count > 0 && value.count <= BTreeLimits.maxValueSize)
        let limit = value.count - value.count / 8
        let packed = UnsafeMutableRawBufferPointer.allocate(byteCount: limit, alignment: 8)
        defer { packed.deallocate() }
        if let n = LZ4.compress(value, into: packed, limit: limit) {
            let first = try writePages(UnsafeRawBufferPointer(rebasing: packed[..<n]), in: sink)
            return OverflowReference(
                valueLength: UInt32(value.count), storedLength: UInt32(n), firstPage: first, isCompressed: true)
        }
        let first = try writePages(value, in: sink)
        return OverflowReference(
            valueLength: UInt32(value.count), storedLength: UInt32(value.count), firstPage: first, isCompressed: false)
    }

    private static func writePages<Sink: PageSink>(_ data: UnsafeRawBufferPointer, in sink: Sink) throws(StorageError)
        -> PageNumber
    {
        guard let source = data.baseAddress else { preconditionFailure("empty overflow data") }
        let capacity = capacity(pageSize: sink.pageSize)
        var first = PageNumber(0)
        var previous: PageBuffer?
        var offset = 0
        while offset < data.count {
            let (number, page) = try sink.allocatePage()
            let used = min(capacity, data.count - offset)
            page.pageType = .overflow
            page.flags = 0
            page.store(UInt16(0), at: 6)
            page.store(UInt32(0), at: nextOffset)
            page.store(UInt32(used), at: usedOffset)
            (page.pointer + dataOffset).copyMemory(from: source + offset, byteCount: used)
            if let previous { previous.store(number.rawValue, at: nextOffset) } else { first = number }
            previous = page
            offset += used
        }
        return first
    }

    /// Walks the chain of `reference`, checking every page, and calls `body` with each page's data.
    /// `owner` is the leaf holding the reference (named in errors about the reference itself).
    static func walk<Source: PageSource>(
        _ reference: OverflowReference, in source: Source, owner: PageNumber,
        _ body: (PageNumber, UnsafeRawBufferPointer) throws(StorageError) -> Void
    ) throws(StorageError) {
        let capacity = capacity(pageSize: source.pageSize)
        let pages = pageCount(storedLength: Int(reference.storedLength), pageSize: source.pageSize)
        var number = reference.firstPage
        var remaining = Int(reference.storedLength)
        for index in 0..<pages {
            guard number.rawValue != 0 else {
                throw .corrupt("overflow chain ends after \(index) of \(pages) pages", page: owner)
            }
            let page = try source.page(number)
            guard page.pageType == .overflow else {
                throw .corrupt("expected an overflow page, found type \(page.pointer.load(fromByteOffset: 4, as: UInt8.self))", page: number)
            }
            let used = Int(page.load(UInt32.self, at: usedOffset))
            let expected = min(capacity, remaining)
            guard used == expected else {
                throw .corrupt("overflow page holds \(used) bytes where the chain needs \(expected)", page: number)
            }
            let next = PageNumber(page.load(UInt32.self, at: nextOffset))
            if index == pages - 1, next.rawValue != 0 {
                throw .corrupt("overflow chain is longer than its \(pages) pages", page: number)
            }
            try body(number, UnsafeRawBufferPointer(start: page.pointer + dataOffset, count: used))
            remaining -= used
            number = next
        }
    }

    /// Calls `body` with the value of `reference`: straight from the page when it is one
    /// uncompressed page, otherwise from a temporary buffer holding the assembled value.
    static func withValue<Source: PageSource, R>(
        _ reference: OverflowReference, in source: Source, owner: PageNumber,
        _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R
    ) throws(StorageError) -> R {
        let stored = Int(reference.storedLength)
        if !reference.isCompressed && stored <= capacity(pageSize: source.pageSize) {
            // One uncompressed page: hand out the page's own bytes (`walk` keeps the page alive).
            var result: R?
            try walk(reference, in: source, owner: owner) { _, data throws(StorageError) in result = try body(data) }
            guard let result else { throw .corrupt("empty overflow chain", page: owner) }
            return result
        }
        // Assembled as the chain is read, so a damaged reference cannot make us allocate more
        // than the pages actually hold.
        var assembled: [UInt8] = []
        assembled.reserveCapacity(min(stored, 1 << 20))
        try walk(reference, in: source, owner: owner) { _, data throws(StorageError) in
            assembled.append(contentsOf: data)
        }
        return try assembled.withBytes { stored throws(StorageError) -> R in
            guard reference.isCompressed else { return try body(stored) }
            let value = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(reference.valueLength), alignment: 8)
            defer { value.deallocate() }
            try LZ4.decompress(stored, into: value, page: reference.firstPage)
            return try body(UnsafeRawBufferPointer(value))
        }
    }

    /// Frees every page of the chain of `reference`.
    static func free<Sink: PageSink>(_ reference: OverflowReference, in sink: Sink, owner: PageNumber)
        throws(StorageError)
    {
        var numbers: [PageNumber] = []
        try walk(reference, in: sink, owner: owner) { number, _ in numbers.append(number) }
        for number in numbers { try sink.freePage(number) }
    }
}
