// JSONKeyTable: object keys taken from a table of `String`s made once must change nothing about
// what a text parses to, or how it is refused — only where a key's storage comes from.

import Testing

@testable import KeelModel

@Suite("JSON key table")
struct JSONKeyTableTests {
    /// A long key made at run time (its own heap storage, unlike a literal's).
    static let long = String(repeating: "registration", count: 2) + "Number"

    /// Keys that collide in the table's slots and the parser's filter (same length and last byte),
    /// keys spelled by escapes elsewhere, and keys the table must leave out (short ones, kept
    /// inline by String; not plain ASCII; with a quote, backslash or control character).
    static let table = JSONKeyTable([
        "$id", "name", "K", long, "abcdefghijklmnop", "bbcdefghijklmnop", "abcdefghijklmnoq", "abcdefghijklmnopqrstuvwxyz012345",
        "caf\u{E9}-with-a-long-name", "a\"bcdefghijklmnopq", "a\\bcdefghijklmnopq", "tab\tbcdefghijklmnopq",
    ])

    /// The parse of `bytes`, or its refusal's message.
    static func outcome(_ bytes: [UInt8], keys: JSONKeyTable?) -> String {
        do { return "value " + (try JSON.parse(bytes, keys: keys)).serialized() } catch { return "error " + error.message }
    }

    @Test("only plain keys longer than 15 bytes are kept (printable ASCII, no quote or backslash), each once")
    func plainKeysOnly() {
        #expect(Self.table.count == 5)
        #expect(JSONKeyTable(["x", "y", Self.long, Self.long]).count == 1)
    }

    @Test(
        "with a table, every text parses to the same value or is refused with the same message as without",
        arguments: [
            #"{"$id":"Company/1","$entity":"Company","$version":1,"name":"bench-4","registrationregistrationNumber":null}"#,
            #"{"abcdefghijklmnop":1,"bbcdefghijklmnop":2,"abcdefghijklmnoq":3,"cbcdefghijklmnop":4,"abcdefghijklmnop ":5}"#,
            #"{"abcdefghijklmnop":1,"bbcdefghijklmnop":2,"abcdefghijklmnop":3}"#, #"{"\u0061bcdefghijklmnop":1,"abcdefghijklmnop":2}"#,
            #"{"abcdefghijklmnop":1,"\u0061bcdefghijklmnop":2}"#, #"{"abcdefghijklmno\u0070":1}"#,
            #"{"K":1,"\u212A":2}"#, "{\"\u{212A}\":1,\"x\":2,\"K\":3}", #"{"a":1,"\u0061":2}"#,
            "{\"caf\u{E9}-with-a-long-name\":1,\"cafe\u{301}-with-a-long-name\":2}", #"{"a\"bcdefghijklmnopq":1,"a\\bcdefghijklmnopq":2}"#,
            #"{"name":{"abcdefghijklmnopqrstuvwxyz012345":{"abcdefghijklmnopqrstuvwxyz012345":[{"abcdefghijklmnop":"abcdefghijklmnop"}]}}}"#,
            #"{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"ka":10,"kb":11,"kc":12,"kd":13,"ke":14,"kf":15,"abcdefghijklmnop":16,"abcdefghijklmnop":17}"#,
            #"["abcdefghijklmnop",{"abcdefghijklmnop":"abcdefghijklmnop"}]"#, #"{"abcdefghijklmnop" "x"}"#, #"{"abcdefghijklmn"#,
            "{\"tab\tbcdefghijklmnopq\":1}", #"{"abcdefghijklmnopqrstuvwxyz01234":1,"abcdefghijklmnopqrstuvwxyz0123456":2}"#,
        ])
    func sameAsWithout(text: String) {
        let bytes = Array(text.utf8)
        #expect(Self.outcome(bytes, keys: Self.table) == Self.outcome(bytes, keys: nil), "\(text)")
    }

    @Test("random and mutated objects parse the same with a table as without")
    func fuzz() {
        var rng = SplitMix(seed: 0x5EED_0017)
        let seed = Array(
            #"{"$id":"Company/1","abcdefghijklmnop":"x","bbcdefghijklmnop":[{"abcdefghijklmnoq":1,"\u0061bcdefghijklmnop":2}],"K":{"abcdefghijklmnopqrstuvwxyz012345":null}}"#.utf8)
        let alphabet = Array(#"{}[]:,"\\u0123456789abcdopqKz$ "#.utf8) + [0x00, 0x7F, 0x80, 0xC3, 0xFF]
        for round in 0..<5_000 {
            var bytes = seed
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let at = Int(rng.next() % UInt64(bytes.count + 1))
                switch rng.next() % 3 {
                case 0 where at < bytes.count: bytes[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                case 1: bytes.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                default: if at < bytes.count { bytes.remove(at: at) }
                }
            }
            #expect(Self.outcome(bytes, keys: Self.table) == Self.outcome(bytes, keys: nil), "seed 0x5EED0017 round \(round)")
        }
    }

    /// Where a string's UTF-8 is stored (a long native string's heap storage).
    static func storage(_ string: String) -> UnsafeRawPointer? {
        string.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } ?? nil
    }

    @Test("an object's key that the table holds is the table's String (no new one); a value spelled the same is not")
    func keysAreShared() throws {
        let text = Array(#"{"registrationregistrationNumber":"registrationregistrationNumber","otherRatherLongKeyOfAnObject":1}"#.utf8)
        let object = try #require(try JSON.parse(text, keys: Self.table).objectValue)
        let keys = Array(object.keys)
        #expect(keys == [Self.long, "otherRatherLongKeyOfAnObject"])
        #expect(Self.storage(keys[0]) != nil && Self.storage(keys[0]) == Self.storage(Self.long))
        #expect(Self.storage(object[Self.long]?.stringValue ?? "") != Self.storage(Self.long))
        let without = try #require(try JSON.parse(text).objectValue)
        #expect(Self.storage(Array(without.keys)[0]) != Self.storage(Self.long))
    }

    @Test("a model's table holds its entities' property names longer than 15 bytes, and an object of them takes them from it")
    func modelTable() throws {
        let model = try ModelFixture.sample()
        let long = Set(model.entities.flatMap { $0.properties.map(\.name) }).filter { $0.utf8.count > JSONKeyTable.inlineLength }
        #expect(long.contains("registrationNumber"))
        let table = JSONKeyTable(model: model)
        #expect(table.count == long.count)
        let text = Array(("{" + long.sorted().map { "\"\($0)\":1" }.joined(separator: ",") + "}").utf8)
        #expect(Self.outcome(text, keys: table) == Self.outcome(text, keys: nil))
    }
}
