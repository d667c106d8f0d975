// `Array(repeating:count:)` allocates through the standard library's unspecialized
// `Array._allocateBufferUninitialized(minimumCapacity:)`, which looks up the generic metadata of
// the storage class (`_ContiguousArrayStorage<Element>`) at run time on every call: ~600–900
// instructions under callgrind, more than decoding a whole row's fields. A fetch made several
// such arrays per row (each row's values, the row look-ups' results, the to-many lists). The
// growth path (`reserveCapacity`, `append`) is specialized in the calling module and finds the
// metadata through a cached accessor, so `Array(filling:count:)` builds the same array through it.

extension Array {
    /// `count` copies of `value` (as `Array(repeating:count:)`), allocated through the
    /// specialized growth path.
    @inlinable @inline(__always)
    package init(filling value: Element, count: Int) {
        self = []
        reserveCapacity(count)
        for _ in 0..<count { append(value) }
    }
}
