import Testing

@testable import KeelModel

@Suite("JSON writer")
struct JSONWriterTests {
    @Test("objects keep their key order; integers are exact over Int64; doubles keep a fraction")
    func compact() {
        let value: JSON = ["$id": "Employee/17", "big": .int(.max), "small": .int(.min), "d": 2.0, "f": 0.1, "n": nil, "a": [true, false]]
        #expect(value.serialized() == #"{"$id":"Employee/17","big":9223372036854775807,"small":-9223372036854775808,"d":2.0,"f":0.1,"n":null,"a":[true,false]}"#)
    }

    @Test("strings escape quotes, backslashes and every control character, and keep other Unicode")
    func strings() {
        #expect(JSON.string("a\"b\\c\n\r\t\u{8}\u{C}\u{1}\u{1F}/é😀").serialized() == #""a\"b\\c\n\r\t\b\f\u0001\u001f/é😀""#)
    }

    @Test("a string with nothing to escape (written whole) and one character that needs escaping at any place: the same text as escaping byte by byte")
    func plainAndEscapedStrings() throws {
        /// The escaping, one scalar at a time, as RFC 8259 has it (TextQuoting walks the scalars;
        /// JSON names \b and \f and leaves U+007F alone): what the writer must produce.
        func expected(_ s: String) -> String {
            TextQuoting.quoted(s) { value in
                switch value {
                case 0x08: return "\\b"
                case 0x0C: return "\\f"
                case 0x7F: return "\u{7F}"
                default:
                    let hex = String(value, radix: 16)
                    return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
            }
        }
        let bases = ["", "a", "Company/17", "short", "a string longer than fifteen bytes", "é😀 mixed Ünïcode text / slashes", String(repeating: "x", count: 300)]
        let specials = ["\"", "\\", "\n", "\u{0}", "\u{1F}", "\u{7F}", "é"]
        for base in bases {
            #expect(JSON.string(base).serialized() == expected(base))
            for special in specials {
                for offset in Set([0, base.count / 2, base.count]) {
                    var s = base
                    s.insert(contentsOf: special, at: s.index(s.startIndex, offsetBy: offset))
                    let text = JSON.string(s).serialized()
                    #expect(text == expected(s))
                    #expect(try JSON.parse(Array(text.utf8)) == .string(s))
                }
            }
        }
        // Keys are written the same way.
        #expect(JSON.object(["a\"b": 1, "plain": 2]).serialized() == #"{"a\"b":1,"plain":2}"#)
    }

    @Test("written as bytes, every value is the UTF-8 of its text written as a String")
    func bytesAndStringsAgree() throws {
        let values: [JSON] = [
            nil, true, false, .int(.min), .int(.max), 0.1, 2.0, -0.0, .double(.nan), .double(-.infinity), "", "plain", "é ✓ 😀",
            "quote \" backslash \\ newline \n tab \t nul \u{0} unit \u{1F}", [], [:],
            ["$id": "Employee/17", "nested": ["a": [1, 2.5, "x\"y", nil, ["deep": true]]], "ключ": "значение"],
        ]
        for value in values {
            var bytes: [UInt8] = [0x41]
            value.write(to: &bytes)
            #expect(bytes == [0x41] + Array(value.serialized().utf8), "\(value.serialized())")
            #expect(try JSON.parse(Array(bytes.dropFirst())) == value || value.serialized().contains("NaN") || value.serialized().contains("Infinity"))
        }
    }

    @Test("both outputs append every ASCII character and any text the same (punctuation as one byte, text as its UTF-8)")
    func outputsAgree() {
        var text = "é"
        var bytes = Array("é".utf8)
        for byte in UInt8(0)..<0x80 {
            text.appendASCII(byte)
            bytes.appendASCII(byte)
        }
        for piece in ["", "x", "{\"$id\":", "é ✓ 😀", String(repeating: "long ", count: 20)] {
            text.appendText(piece)
            bytes.appendText(piece)
            text.appendText(piece.dropFirst())
            bytes.appendText(piece.dropFirst())
        }
        #expect(bytes == Array(text.utf8))
        // "é", the 128 characters, and each piece twice but for the first scalar of the non-empty ones.
        #expect(text.unicodeScalars.count == 1 + 128 + 222)
    }

    @Test("non-finite doubles and negative zero")
    func doubles() {
        #expect(JSON.double(.nan).serialized() == #""NaN""#)
        #expect(JSON.double(-.infinity).serialized() == #""-Infinity""#)
        #expect(JSON.double(-0.0).serialized() == "-0.0")
        #expect(JSON.double(1e300).serialized() == "1e+300")
    }
}
