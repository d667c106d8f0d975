// Ordered to-many links of a save (`olink/` trees, Decision 0004): the positions of one owner's
// members, kept with gaps so an insert between two members rarely renumbers the list.

/// Ordered to-many links (`olink/`): keys owner·position (u64 BE), value the member's key.
/// Positions leave gaps of 2^20 so an insert between two members usually takes their midpoint;
/// when there is no room the owner's list is renumbered.
enum OrderedLinks {
    static let gap: UInt64 = 1 << 20

    /// The owner's list in position order: read from the tree once per save, then from the
    /// session, which every change below keeps in step (`SaveSession.orderedLists`).
    static func entries(_ s: SaveSession, store: Int, tree: String, owner: ObjectID) throws(KeelError) -> [(member: ObjectID, position: UInt64)] {
        let k = OrderedListKey(store: store, tree: tree, owner: owner)
        if let list = s.orderedLists[k] { return list }
        var out: [(member: ObjectID, position: UInt64)] = []
        try TreeReading.forEachLink(try s.readTree(store, tree), owner, ordered: true) { m, p in out.append((m, p)) }
        s.orderedLists[k] = out
        return out
    }

    static func key(_ owner: ObjectID, _ position: UInt64) -> [UInt8] {
        var k = KeyEncoding.objectKey(owner)
        KeyEncoding.appendU64(position, to: &k)
        return k
    }

    static func insert(_ s: SaveSession, store: Int, tree: String, owner: ObjectID, member: ObjectID, at index: Int?) throws(KeelError) {
        let k = OrderedListKey(store: store, tree: tree, owner: owner)
        var list = try entries(s, store: store, tree: tree, owner: owner)
        // The session's copy is dropped while the tree changes, and written back once it has:
        // an error part-way leaves the session without it (the save then fails as a whole).
        s.orderedLists[k] = nil
        if let existing = list.firstIndex(where: { $0.member == member }) {
            guard index != nil else {
                s.orderedLists[k] = list
                return
            }
            try s.delete(store, tree, key: key(owner, list[existing].position))
            list.remove(at: existing)
        }
        let i = min(max(index ?? list.count, 0), list.count)
        let below: UInt64 = i > 0 ? list[i - 1].position : 0
        let above: UInt64? = i < list.count ? list[i].position : nil
        if let above {
            if above - below >= 2 {
                let position = below + (above - below) / 2
                try s.put(store, tree, key: key(owner, position), value: KeyEncoding.objectKey(member))
                list.insert((member, position), at: i)
                s.orderedLists[k] = list
                return
            }
            // No room: renumber the whole list with the new member in place.
            for (_, p) in list { try s.delete(store, tree, key: key(owner, p)) }
            var members = list.map(\.member)
            members.insert(member, at: i)
            var renumbered: [(member: ObjectID, position: UInt64)] = []
            renumbered.reserveCapacity(members.count)
            for (n, m) in members.enumerated() {
                let position = UInt64(n + 1) * gap
                try s.put(store, tree, key: key(owner, position), value: KeyEncoding.objectKey(m))
                renumbered.append((m, position))
            }
            s.orderedLists[k] = renumbered
            return
        }
        try s.put(store, tree, key: key(owner, below + gap), value: KeyEncoding.objectKey(member))
        list.append((member, below + gap))
        s.orderedLists[k] = list
    }

    static func remove(_ s: SaveSession, store: Int, tree: String, owner: ObjectID, member: ObjectID) throws(KeelError) {
        let k = OrderedListKey(store: store, tree: tree, owner: owner)
        var list = try entries(s, store: store, tree: tree, owner: owner)
        s.orderedLists[k] = nil
        for (m, p) in list where m == member {
            try s.delete(store, tree, key: key(owner, p))
        }
        list.removeAll { $0.member == member }
        s.orderedLists[k] = list
    }
}

/// One owner's ordered to-many list in one store's tree (`SaveSession.orderedLists`).
struct OrderedListKey: Hashable {
    let store: Int
    let tree: String
    let owner: ObjectID
}
