// A set of small non-negative integers (entity numbers, a conjunction's term numbers) that
// allocates nothing while its members stay below 64: those are the bits of one word, tested with
// a shift and a mask. Larger members — a model of more than 64 entities, a conjunction of more
// than 64 terms — go to a list of flags by number, made only then. The fetch path keeps one per
// index read (the family whose entries it counts) and one per plan (the terms an index serves), so
// neither pays an allocation in the usual case.

/// A set of small non-negative integers, without an allocation for members below 64.
struct SmallIntSet: Sendable, Equatable {
    private var low: UInt64 = 0
    /// Flags by number for members of 64 and up; empty, or as long as the largest member + 1 (so
    /// equal sets have equal lists, and the synthesized `==` is the sets' equality).
    private var high: [Bool] = []

    init() {}

    init<S: Sequence<Int>>(_ members: S) {
        for m in members { insert(m) }
    }

    var isEmpty: Bool { low == 0 && high.isEmpty }

    /// Whether `n` is a member (a negative number, or one past the largest member, is not).
    @inline(__always)
    func contains(_ n: Int) -> Bool {
        if n < 64 { return n >= 0 && low & (1 << UInt64(n)) != 0 }
        return n < high.count && high[n]
    }

    mutating func insert(_ n: Int) {
        precondition(n >= 0, "a member of a SmallIntSet is not negative")
        if n < 64 {
            low |= 1 << UInt64(n)
            return
        }
        if n >= high.count { high += repeatElement(false, count: n + 1 - high.count) }
        high[n] = true
    }
}
