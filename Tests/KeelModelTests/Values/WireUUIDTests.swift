// WireText.uuid (spec/model.md, "Wire encoding": 8-4-4-4-12 hexadecimal digits, either case),
// read in place from the string's bytes: every UUID back exactly from its text in both cases,
// and every malformed text refused — a misplaced or missing dash, a non-hex byte at any
// position, a wrong length, a multi-byte character that makes 36 bytes.

import Foundation
import Testing

@testable import KeelModel

@Suite("Wire UUID text")
struct WireUUIDTests {
    @Test("a UUID comes back from its text, lower, upper and mixed case, and from a bridged string")
    func roundTrip() {
        for i in 0..<200 {
            let uuid = UUID()
            let text = uuid.uuidString
            #expect(WireText.uuid(text.lowercased()) == uuid)
            #expect(WireText.uuid(text.uppercased()) == uuid)
            let mixed = String(text.enumerated().map { $0.offset % 2 == i % 2 ? Character($0.element.lowercased()) : $0.element })
            #expect(WireText.uuid(mixed) == uuid)
            #expect(WireText.uuid(NSString(string: text) as String) == uuid)
        }
        let fixed = "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"
        #expect(WireText.uuid(fixed)?.uuid.0 == 0xE6 && WireText.uuid(fixed)?.uuid.15 == 0x5F)
        #expect(WireText.uuid(String(fixed.dropFirst(0))) == UUID(uuidString: fixed))
    }

    @Test("malformed texts are refused")
    func refused() {
        let good = Array("e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
        #expect(WireText.uuid(String(good)) != nil)
        for position in good.indices {
            var bad = good
            // Every position: a dash becomes a digit, a digit becomes a dash, then a non-hex letter.
            bad[position] = good[position] == "-" ? "0" : "-"
            #expect(WireText.uuid(String(bad)) == nil, "\(String(bad))")
            bad[position] = "g"
            #expect(WireText.uuid(String(bad)) == nil, "\(String(bad))")
            bad[position] = "G"
            #expect(WireText.uuid(String(bad)) == nil, "\(String(bad))")
        }
        for text in [
            "", "e621e1f8-c36c-495a-93fc-0c247a3e6e5", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f0", "e621e1f8c36c495a93fc0c247a3e6e5f",
            "e621e1f8-c36c-495a-93fc-0c247a3e6é5", "{621e1f8-c36c-495a-93fc-0c247a3e6e5f", "e621e1f8-c36c-495a-93fc-0c247a3e6e5:",
            " e621e1f8-c36c-495a-93fc-0c247a3e6e5", "e621e1f8-c36c-495a-93fc-0c247a3e6e5\u{0}",
        ] {
            #expect(WireText.uuid(text) == nil, "\(text)")
        }
    }
}
