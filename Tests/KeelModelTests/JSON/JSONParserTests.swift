import Testing

@testable import KeelModel

@Suite("JSON parser")
struct JSONParserTests {
    @Test("parses every kind of value, keeping object key order")
    func values() throws {
        let json = try JSON.parse(#" {"b":1,"a":[true,false,null],"c":"x","d":-2.5e3,"e":{}, "f":[]} "#)
        #expect(json.objectValue.map { Array($0.keys) } == ["b", "a", "c", "d", "e", "f"])
        #expect(json == ["b": 1, "a": [true, false, nil], "c": "x", "d": .double(-2500), "e": .object([:]), "f": []])
    }

    @Test(
        "integers without fraction or exponent that fit Int64 are .int; others .double",
        arguments: [
            ("0", JSON.int(0)), ("-0", .int(0)), ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
            ("9223372036854775808", .double(9_223_372_036_854_775_808)), ("-9223372036854775809", .double(-9.223_372_036_854_775_808e18)),
            ("1.0", .double(1)), ("1e2", .double(100)), ("1E-2", .double(0.01)), ("12345678901234567890123", .double(1.2345678901234568e22)),
        ])
    func numbers(_ text: String, _ expected: JSON) throws {
        #expect(try JSON.parse(text) == expected)
    }

    @Test("string escapes, surrogate pairs and raw UTF-8")
    func strings() throws {
        #expect(try JSON.parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{8}\u{C}\n\r\t"))
        #expect(try JSON.parse(#""\u00e9\u4e2d\ud83d\ude00\u0000""#) == .string("é中😀\u{0}"))
        #expect(try JSON.parse("\"é中😀 한국어\"") == .string("é中😀 한국어"))
    }

    @Test(
        "malformed input is refused with the byte offset of the problem",
        arguments: [
            ("", 0, "expected a value, found the end of the text"),
            ("  ", 2, "expected a value"),
            ("[1,]", 3, "expected a value, found ']'"),
            ("{\"a\":1,}", 7, "expected a string key in an object, found '}'"),
            ("{\"a\" 1}", 5, "expected ':' after an object key, found '1'"),
            ("[1 2]", 3, "expected ',' or ']' in an array, found '2'"),
            ("{\"a\":1 \"b\":2}", 7, "expected ',' or '}' in an object"),
            ("01", 1, "after a leading 0"),
            ("-", 1, "expected a digit"),
            ("1.", 2, "expected a digit after '.'"),
            ("1e", 2, "expected a digit in the exponent"),
            ("+1", 0, "expected a value, found '+'"),
            (".5", 0, "expected a value"),
            ("tru", 0, "expected a value"),
            ("nul", 0, "expected a value"),
            ("NaN", 0, "expected a value"),
            ("\"abc", 4, "expected '\"' to close the string"),
            ("\"a\nb\"", 2, "control characters must be escaped"),
            (#""\x""#, 2, "after '\\'"),
            (#""\u12""#, 5, "four hexadecimal digits"),
            (#""\ud83d""#, 7, "a low surrogate"),
            (#""\ud83d\u0041""#, 7, "a low surrogate"),
            (#""\ude00""#, 1, "lone low surrogate"),
            ("[1] x", 4, "the end of the text after a complete value"),
            ("{\"a\":1,\"a\":2}", 7, "duplicate key \"a\""),
            ("1e400", 0, "out of range"),
            ("-1e400", 0, "out of range"),
            ("'a'", 0, "expected a value, found '''"),
            ("[1,/*c*/2]", 3, "expected a value, found '/'"),
        ])
    func malformed(_ text: String, _ offset: Int, _ phrase: String) {
        do {
            _ = try JSON.parse(text)
            Issue.record("\(text) parsed")
        } catch {
            #expect(error.code == .parse)
            #expect(error.message.hasPrefix("invalid JSON at offset \(offset): "), "\(error.message)")
            #expect(error.message.contains(phrase), "\(error.message)")
            #expect(error.details?["offset"] == .int(Int64(offset)))
        }
    }

    @Test(
        "invalid UTF-8 inside strings is refused at the bad byte",
        arguments: [
            [0x22, 0xFF, 0x22], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
            [0x22, 0xE2, 0x82, 0x22], [0x22, 0x61, 0x80, 0x22], [0x22, 0xF0, 0x9F, 0x98],
        ] as [[UInt8]])
    func badUTF8(_ bytes: [UInt8]) {
        #expect(throws: KeelError.self) { try JSON.parse(bytes) }
        do { _ = try JSON.parse(bytes) } catch { #expect(error.message.contains("valid UTF-8")) }
    }

    @Test("objects of every size around the members reserved up front keep their order, and refuse a duplicate key anywhere")
    func objectSizes() throws {
        for count in 0...(JSONParser.initialMembers * 3) {
            let keys = (0..<count).map { "k\(count - $0)" }
            let text = "{" + keys.enumerated().map { "\"\($1)\":\($0)" }.joined(separator: ",") + "}"
            let json = try JSON.parse(text)
            #expect(json.objectValue.map { Array($0.keys) } == keys)
            #expect(json.objectValue?.values.map(\.intValue) == (0..<count).map { Int64($0) })
            #expect(json.serialized() == text)
            guard count > 0 else { continue }
            let duplicated = "{" + (keys + [keys[count / 2]]).map { "\"\($0)\":0" }.joined(separator: ",") + "}"
            do {
                _ = try JSON.parse(duplicated)
                Issue.record("a duplicate key in an object of \(count + 1) members was accepted")
            } catch {
                #expect(error.message.contains("duplicate key"))
            }
        }
    }

    @Test(
        "duplicate keys are refused whatever their spelling (escapes, canonically equivalent Unicode); distinct keys that share a length and last byte are kept",
        arguments: [
            (#"{"K":1,"\u212A":2}"#, true), (#"{"\u212A":1,"K":2}"#, true), ("{\"K\":1,\"\u{212A}\":2}", true),
            ("{\"\u{212A}\":1,\"x\":2,\"K\":3}", true), (#"{"a":1,"\u0061":2}"#, true), (#"{"\u0061":1,"b":2,"a":3}"#, true),
            ("{\"caf\u{E9}\":1,\"cafe\u{301}\":2}", true), (#"{"ab":1,"cb":2,"zb":3,"ab ":4}"#, false),
            (#"{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"ka":10,"kb":11,"kc":12,"kd":13,"ke":14,"kf":15,"kg":16,"\u212A":17,"K":18}"#, true),
        ] as [(String, Bool)])
    func duplicateSpellings(text: String, duplicate: Bool) throws {
        do {
            let json = try JSON.parse(text)
            #expect(!duplicate, "\(text) was accepted")
            // Every key written is kept, in order.
            #expect(json.objectValue?.count == text.filter { $0 == ":" }.count)
        } catch {
            #expect(duplicate, "\(text): \(error)")
            #expect(error.message.contains("duplicate key"))
        }
    }

    /// The strings of `stringsWordByWord`: `length` bytes of plain ASCII with `inner` written at
    /// byte `at`, as JSON text and as the string it stands for.
    static func plainString(length: Int, at: Int, inner: (text: String, value: String)) -> (text: String, value: String) {
        let before = String(String(repeating: "ab~ cd!z", count: 4).prefix(at))
        let after = String(String(repeating: "Z9 #xy}{", count: 4).prefix(length - at))
        return ("\"" + before + inner.text + after + "\"", before + inner.value + after)
    }

    @Test("strings read eight bytes at a time: every byte that needs a look is found at every position, in a word or in the tail")
    func stringsWordByWord() throws {
        // What a word must not step over (an escape, raw UTF-8, a byte next to the ranges tested).
        let inners: [(text: String, value: String)] = [
            (#"\""#, "\""), (#"\\"#, "\\"), (#"\n"#, "\n"), (#"\u00e9"#, "é"), ("é", "é"), ("中", "中"), ("😀", "😀"),
            ("\u{7F}", "\u{7F}"), (" ", " "), ("!", "!"), ("#", "#"), ("[", "["), ("]", "]"), ("", ""),
        ]
        for length in 0...20 {
            for at in 0...length {
                for inner in inners {
                    let (text, value) = Self.plainString(length: length, at: at, inner: inner)
                    // Alone (the string reaches the end: the tail is read byte by byte), and with
                    // more after it (the whole string can be read in words).
                    #expect(try JSON.parse(text) == .string(value), "\(text)")
                    let padded = "[" + text + ",0,0,0,0,0,0,0,0]"
                    #expect(try JSON.parse(padded) == [.string(value), 0, 0, 0, 0, 0, 0, 0, 0], "\(padded)")
                    let object = "{" + text + ":" + text + ",\"k\":1}"
                    #expect(try JSON.parse(object) == .object([value: .string(value), "k": 1]), "\(object)")
                    // The in-memory form agrees.
                    let bytes = Array(padded.utf8)
                    #expect(try bytes.withUnsafeBufferPointer { try JSON.parse($0) } == (try JSON.parse(padded)))
                }
                // A raw control character or a byte that is not UTF-8 is refused at that byte.
                for (bad, phrase) in [(0x00, "control characters"), (0x0A, "control characters"), (0x1F, "control characters"), (0x80, "valid UTF-8"), (0xFF, "valid UTF-8")] as [(UInt8, String)] {
                    var bytes = Array("[".utf8) + Array(Self.plainString(length: length, at: at, inner: ("", "")).text.utf8)
                    bytes.insert(bad, at: 2 + at)
                    bytes += Array(",0,0,0,0,0,0,0,0]".utf8)
                    do {
                        _ = try JSON.parse(bytes)
                        Issue.record("byte \(bad) at \(at) of \(length) was accepted")
                    } catch {
                        #expect(error.details?["offset"] == .int(Int64(2 + at)), "\(error.message)")
                        #expect(error.message.contains(phrase), "\(error.message)")
                    }
                }
            }
            // A string not closed before the end.
            let open = Array("\"".utf8) + Array(String(repeating: "abcdefgh", count: 3).prefix(length).utf8)
            do {
                _ = try JSON.parse(open)
                Issue.record("an unclosed string of \(length) bytes was accepted")
            } catch {
                #expect(error.details?["offset"] == .int(Int64(open.count)))
                #expect(error.message.contains("to close the string"))
            }
        }
    }

    @Test("true, false and null are read whole; a literal cut short or misspelt anywhere is refused where it starts")
    func literals() throws {
        #expect(try JSON.parse("[true,false,null]") == [true, false, nil])
        #expect(try JSON.parse("true") == true)
        #expect(try JSON.parse("false") == false)
        #expect(try JSON.parse("null") == nil)
        #expect(try JSON.parse(#"{"a":null,"b":true,"c":false}"#) == ["a": nil, "b": true, "c": false])
        for word in ["true", "false", "null"] {
            let letters = Array(word.utf8)
            for cut in 1..<letters.count {
                for text in [Array(letters.prefix(cut)), Array("[".utf8) + letters.prefix(cut) + Array("]".utf8)] {
                    do {
                        _ = try JSON.parse(text)
                        Issue.record("\(String(decoding: text, as: UTF8.self)) was accepted")
                    } catch {
                        #expect(error.details?["offset"] == .int(text.first == UInt8(ascii: "[") ? 1 : 0))
                        #expect(error.message.contains("expected a value"))
                    }
                }
            }
            for at in 1..<letters.count {
                var text = Array("[".utf8) + letters + Array(",1]".utf8)
                text[1 + at] ^= 0x20  // the same letter in the other case
                do {
                    _ = try JSON.parse(text)
                    Issue.record("\(String(decoding: text, as: UTF8.self)) was accepted")
                } catch {
                    #expect(error.details?["offset"] == .int(1), "\(error.message)")
                }
            }
        }
    }

    @Test("nesting is limited: 512 levels parse, 513 and a million are refused without a crash")
    func depth() throws {
        let ok = String(repeating: "[", count: JSON.maximumDepth) + String(repeating: "]", count: JSON.maximumDepth)
        #expect(throws: Never.self) { try JSON.parse(ok) }
        let deep = String(repeating: "[", count: JSON.maximumDepth + 1) + String(repeating: "]", count: JSON.maximumDepth + 1)
        #expect(throws: KeelError.self) { try JSON.parse(deep) }
        let hostile = String(repeating: "{\"a\":[", count: 500_000)
        do { _ = try JSON.parse(hostile) } catch { #expect(error.message.contains("nesting deeper than 512")) }
    }

    @Test("huge numbers and long strings parse in linear time")
    func large() throws {
        let digits = String(repeating: "7", count: 200_000)
        #expect(throws: KeelError.self) { try JSON.parse(digits) }  // beyond Double
        let fraction = "0." + digits
        #expect(try JSON.parse(fraction).intValue == nil)
        let long = "\"" + String(repeating: "é", count: 500_000) + "\""
        #expect(try JSON.parse(long).stringValue?.count == 500_000)
    }

    @Test("random and mutated inputs never crash; every refusal names an offset inside the input")
    func fuzz() {
        var rng = SplitMix(seed: 0x5EED_0003)
        let seeds = [
            #"{"name":"Kim","age":30,"tags":["a","b"],"salary":"5200.00","nested":{"x":[1,2.5,-3e4,true,null]}}"#,
            #"["\u00e9\ud83d\ude00",{"":{}},[[[]]],0.1,-0]"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[]:,"\\/u0123456789abcdefABEtrnl.-+e "#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xED, 0xFF]
        for round in 0..<20_000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let at = Int(rng.next() % UInt64(bytes.count + 1))
                switch rng.next() % 3 {
                case 0 where at < bytes.count: bytes[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                case 1: bytes.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                default: if at < bytes.count { bytes.remove(at: at) }
                }
            }
            do {
                let value = try JSON.parse(bytes)
                // Whatever parses writes back to text that parses to the same value.
                #expect(try JSON.parse(value.serialized()) == value, "seed 0x5EED0003 round \(round)")
            } catch {
                guard case .int(let offset)? = error.details?["offset"] else {
                    Issue.record("no offset: \(error) (round \(round))")
                    continue
                }
                #expect(offset >= 0 && offset <= bytes.count, "round \(round)")
            }
        }
    }
}

/// A small deterministic generator so a failing round replays.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
