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

    @Test("non-finite doubles and negative zero")
    func doubles() {
        #expect(JSON.double(.nan).serialized() == #""NaN""#)
        #expect(JSON.double(-.infinity).serialized() == #""-Infinity""#)
        #expect(JSON.double(-0.0).serialized() == "-0.0")
        #expect(JSON.double(1e300).serialized() == "1e+300")
    }
}
