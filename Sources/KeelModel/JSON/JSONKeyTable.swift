// Object keys a reader meets again and again — every object a connection reads names the same
// model properties (`$id`, `name`, `registrationNumber`, …) — kept as `String`s made once.
// `JSON.parse(_:keys:)` takes an object key's `String` from the table when the key's bytes are
// one of these, instead of making a new one from the bytes for every object it reads (which
// checks the bytes and, for a key over 15 bytes, allocates). The table is immutable, so
// any number of threads parse with one.
//
// Only plain keys longer than 15 bytes are kept: printable ASCII without `"` or `\` — exactly
// the keys whose text is their bytes, so a key taken from the table is the `String` the parser
// would have made — and long enough that making one allocates. Layout: the keys sorted by slot
// (their index in the parser's 64-bit key filter), their bytes in one array, a bit per occupied
// slot so that most keys of an object are passed over at once.

public struct JSONKeyTable: Sendable {
    /// Keys this long or shorter are left out: Swift keeps them inline in the `String` itself
    /// (no allocation), and making one from its bytes costs no more than finding it here.
    public static let inlineLength = 15

    /// The slots that hold a key (bit `slot`): most keys of an object find theirs empty at once.
    private let occupied: UInt64
    /// The keys, by slot: those of slot `s` are `keys[first[s]..<first[s + 1]]`.
    private let first: [Int]
    private let keys: [String]
    /// The keys' bytes, one after the other: key `i`'s are `spelled[offsets[i]..<offsets[i + 1]]`.
    private let spelled: [UInt8]
    private let offsets: [Int]

    public init(_ keys: some Sequence<String>) {
        // A plain key's slot is its index in the parser's key filter (its length and last byte,
        // `JSONParser.keySlot`), which the parser computes while scanning the key anyway.
        let entries = Set(keys).filter { $0.utf8.count > Self.inlineLength && $0.utf8.allSatisfy(Self.isPlain) }
            .map { (slot: JSONParser.keySlot(count: $0.utf8.count, last: $0.utf8.last ?? 0), key: $0) }
            .sorted { ($0.slot, $0.key) < ($1.slot, $1.key) }
        var first = Array(repeating: entries.count, count: JSONParser.keySlots + 1)
        var occupied: UInt64 = 0
        for (i, entry) in entries.enumerated().reversed() {
            first[entry.slot] = i
            occupied |= 1 << UInt64(entry.slot)
        }
        // An empty slot starts where the next one does.
        for slot in stride(from: JSONParser.keySlots - 1, through: 0, by: -1) where occupied & (1 << UInt64(slot)) == 0 {
            first[slot] = first[slot + 1]
        }
        var spelled: [UInt8] = []
        var offsets = [0]
        for entry in entries {
            spelled += entry.key.utf8
            offsets.append(spelled.count)
        }
        self.occupied = occupied
        self.first = first
        self.keys = entries.map(\.key)
        self.spelled = spelled
        self.offsets = offsets
    }

    /// The keys a connection's replies carry for `model`: every entity's property names and the
    /// members every object has.
    public init(model: Model) {
        self.init(["$id", "$entity", "$version"] + model.entities.flatMap { $0.properties.map(\.name) })
    }

    /// How many keys the table holds.
    public var count: Int { keys.count }

    /// The table's key spelled `text` (plain ASCII, which falls in `slot`), if it has one.
    @inline(__always)
    func key(_ text: UnsafeBufferPointer<UInt8>, slot: Int) -> String? {
        guard text.count > Self.inlineLength, occupied & (1 << UInt64(slot)) != 0 else { return nil }
        return spelled.withUnsafeBufferPointer { all -> String? in
            for i in first[slot]..<first[slot + 1] where offsets[i + 1] - offsets[i] == text.count {
                let start = offsets[i]
                var j = 0
                while j < text.count, all[start + j] == text[j] { j += 1 }
                if j == text.count { return keys[i] }
            }
            return nil
        }
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x80 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }
}
