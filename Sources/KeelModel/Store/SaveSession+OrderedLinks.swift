// Ordered to-many links of a save (`olink/` trees, Decision 0004): the positions of one owner's
// members, kept with gaps so an insert between two members rarely renumbers the list.

/// Ordered to-many links (`olink/`): keys owner·position (u64 BE), value the member's key.
/// Positions leave gaps of 2^20 so an insert between two members usually takes their midpoint;
/// when there is no room the owner's list is renumbered.
enum OrderedLinks {
    static let gap: UInt64 = 1 << 20

    static func entries(_ s: SaveSession, store: Int, tree: String, owner: ObjectID) throws(KeelError) -> [(ObjectID, UInt64)] {
        var out: [(ObjectID, UInt64)] = []
        try TreeReading.forEachLink(try s.readTree(store, tree), owner, ordered: true) { m, p in out.append((m, p)) }
        return out
    }

    static func key(_ owner: ObjectID, _ position: UInt64) -> [UInt8] {
        var k = KeyEncoding.objectKey(owner)
        KeyEncoding.appendU64(position, to: &k)
        return k
    }

    static func insert(_ s: SaveSession, store: Int, tree: String, owner: ObjectID, member: ObjectID, at index: Int?) throws(KeelError) {
        var list = try entries(s, store: store, tree: tree, owner: owner)
        if let existing = list.firstIndex(where: { $0.0 == member }) {
            guard index != nil else { return }
            try s.delete(store, tree, key: key(owner, list[existing].1))
            list.remove(at: existing)
        }
        let i = min(max(index ?? list.count, 0), list.count)
        let below: UInt64 = i > 0 ? list[i - 1].1 : 0
        let above: UInt64? = i < list.count ? list[i].1 : nil
        if let above {
            if above - below >= 2 {
                try s.put(store, tree, key: key(owner, below + (above - below) / 2), value: KeyEncoding.objectKey(member))
                return
            }
            // No room: renumber the whole list with the new member in place.
            for (_, p) in list { try s.delete(store, tree, key: key(owner, p)) }
            var members = list.map(\.0)
            members.insert(member, at: i)
            for (n, m) in members.enumerated() {
                try s.put(store, tree, key: key(owner, UInt64(n + 1) * gap), value: KeyEncoding.objectKey(m))
            }
            return
        }
        try s.put(store, tree, key: key(owner, below + gap), value: KeyEncoding.objectKey(member))
    }

    static func remove(_ s: SaveSession, store: Int, tree: String, owner: ObjectID, member: ObjectID) throws(KeelError) {
        for (m, p) in try entries(s, store: store, tree: tree, owner: owner) where m == member {
            try s.delete(store, tree, key: key(owner, p))
        }
    }
}
