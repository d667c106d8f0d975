// What the planner needs from the state a fetch reads besides objects: index and unique trees
// read by key range, and tree sizes for estimates. A reader gets index plans when its
// `ObjectReader.indexReading` is not nil: a store snapshot (`ObjectSnapshot`) conforms and returns
// itself there (a conformer must do the same; the default is nil). A reader without (a child
// context's view of its parent, a test store) is fetched by a scan with the predicate as a
// filter, which gives the same answers.

/// Reading index (`idx/`) and unique (`uniq/`) trees by key range.
public protocol IndexReading {
    /// The rows of the objects whose keys in `index` fall in `ranges` (sorted, disjoint), of the
    /// entities in `family`, in key order — descending when `reverse`, where objects with equal
    /// keys still come in ascending ID order. `body` returns false to stop.
    /// `expected`: how many rows the caller will probably take (a limit with nothing filtered
    /// after the index), so that a `limit 10` reads 10 rows, not a first chunk of 16.
    func indexRows(
        _ index: Index, ranges: [KeyRange], reverse: Bool, family: Set<EntityID>, expected: Int?,
        _ body: (StoredObject) throws(KeelError) -> Bool
    ) throws(KeelError)

    /// The IDs alone (keys only, no row read), in key order.
    func indexIDs(
        _ index: Index, ranges: [KeyRange], family: Set<EntityID>, _ body: (ObjectID) throws(KeelError) -> Bool
    ) throws(KeelError)

    /// The keys of a non-unique `index` in `ranges` of the entities in `family` (each the value
    /// keys, then the object key), in key order, handed to `body` in place inside one engine
    /// read — `body` must not read the state; it returns false to stop. Nil when this reader
    /// cannot (the caller reads the objects instead).
    func indexKeys(
        _ index: Index, ranges: [KeyRange], family: Set<EntityID>, _ body: (UnsafeRawBufferPointer) throws(KeelError) -> Bool
    ) throws(KeelError) -> Bool

    /// How many entries of `family` the ranges hold, counting no further than `cap`.
    func indexCount(_ index: Index, ranges: [KeyRange], family: Set<EntityID>, cap: Int) throws(KeelError) -> Int

    /// Entries in the whole tree of `index` (walks its leaves).
    func treeSize(of index: Index) throws(KeelError) -> Int

    /// Objects in the tree of `entity`'s hierarchy (walks its leaves).
    func treeSize(objectsOf entity: EntityID) throws(KeelError) -> Int
}

extension IndexReading {
    public func indexKeys(
        _ index: Index, ranges: [KeyRange], family: Set<EntityID>, _ body: (UnsafeRawBufferPointer) throws(KeelError) -> Bool
    ) throws(KeelError) -> Bool {
        false
    }

    public func indexCount(_ index: Index, ranges: [KeyRange], family: Set<EntityID>, cap: Int) throws(KeelError) -> Int {
        var n = 0
        try indexIDs(index, ranges: ranges, family: family) { _ in
            n += 1
            return n < cap
        }
        return n
    }
}
