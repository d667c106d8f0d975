// The in-memory sort of a fetch whose order no index gives. Without a limit it keeps every
// match and sorts them once; with one it keeps only the best `offset + limit` in a max-heap (the
// worst kept on top, replaced by anything better), so `sort + limit 10` over a million objects
// holds ten.

struct BoundedSorter {
    let ordering: ObjectOrdering
    /// How many to keep (nil: all).
    let keep: Int?
    private var items: [(values: [Value], row: StoredObject)] = []

    init(ordering: ObjectOrdering, keep: Int?) {
        self.ordering = ordering
        self.keep = keep
    }

    private func less(_ a: (values: [Value], row: StoredObject), _ b: (values: [Value], row: StoredObject)) -> Bool {
        ordering.compare(a.values, a.row.id, b.values, b.row.id) == .orderedAscending
    }

    mutating func add(_ row: StoredObject, _ values: [Value]) {
        let item = (values: values, row: row)
        guard let keep else {
            items.append(item)
            return
        }
        if keep <= 0 { return }
        if items.count < keep {
            items.append(item)
            var child = items.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard less(items[parent], items[child]) else { break }
                items.swapAt(parent, child)
                child = parent
            }
        } else if less(item, items[0]) {
            items[0] = item
            var parent = 0
            while true {
                let l = 2 * parent + 1, r = l + 1
                var largest = parent
                if l < items.count, less(items[largest], items[l]) { largest = l }
                if r < items.count, less(items[largest], items[r]) { largest = r }
                if largest == parent { break }
                items.swapAt(parent, largest)
                parent = largest
            }
        }
    }

    func sorted() -> [StoredObject] {
        items.sorted(by: less).map(\.row)
    }
}
