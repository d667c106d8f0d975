// HELLO, PING, QUIT, MODEL and the errors any line can get, against a real keeld.

import Foundation
import KeelModel
import KeelProtocol
import KeelTestSupport
import Testing

@Suite("Connection commands")
struct ConnectionCommandTests {
    @Test("HELLO names the server, the protocol, the model and its hash, and the limits")
    func hello() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(limits: ["contextsPerConnection": 7])
        try keeld.start()
        let client = try keeld.connect()
        let reply = try client.request(#"h HELLO {"protocol":1,"client":"tests"}"#)
        let body = try #require(reply.payload)
        #expect(body["server"] == "keeld")
        #expect(body["protocol"] == 1)
        #expect(body["model"] == "Company")
        #expect(body["modelHash"]?.stringValue?.count == 64)
        #expect(body["version"]?.stringValue != nil)
        #expect(body["limits"]?["contextsPerConnection"] == 7)
        #expect(body["limits"]?["maxRequestBytes"] == .int(16 << 20))
        for key in ["pendingObjectsPerContext", "inFlightRequests", "subscriberQueueLength", "maxBufferedBytes", "maxConnections"] {
            #expect(body["limits"]?[key]?.intValue != nil, "limits.\(key)")
        }
        // Without arguments it is protocol 1 too.
        #expect(try client.request("h2 HELLO").isOK)
    }

    @Test("HELLO with an unsupported protocol is BAD_REQUEST naming the supported ones")
    func helloUnsupported() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let client = try keeld.connect()
        let reply = try client.request(#"h HELLO {"protocol":2}"#)
        #expect(reply.errorCode == "BAD_REQUEST")
        #expect(reply.errorMessage?.contains("1") == true)
        #expect(reply.finalLine.contains(#""supported":[1]"#))
        #expect(try client.request("p PING").isOK)
    }

    @Test("PING is a bare OK; MODEL is the canonical model; QUIT answers OK then closes")
    func pingModelQuit() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let client = try keeld.connect()
        #expect(try client.request("p1 PING").finalLine == "p1 OK")
        #expect(try client.request("p2 ping").finalLine == "p2 OK")
        let model = try client.request("m MODEL")
        let loaded = try ModelLoader.load(path: Keeld.model)
        #expect(model.payload == loaded.canonical)
        try client.send("q QUIT\np3 PING\n")
        #expect(try client.line() == "q OK")
        #expect(try client.readLine() == nil)
    }

    @Test("Malformed lines, bad JSON and unknown commands get their error and the connection keeps working")
    func malformed() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let client = try keeld.connect()
        let cases: [(line: String, tag: String, code: String)] = [
            ("", "*", "PARSE"),
            (" PING", "*", "PARSE"),
            ("{bad", "*", "PARSE"),
            ("t1", "t1", "PARSE"),
            ("t2 PI-NG", "t2", "PARSE"),
            (#"t3 PING {"a":"#, "t3", "PARSE"),
            ("t4 PING [1,2]", "t4", "PARSE"),
            ("t5 PING {} trailing", "t5", "PARSE"),
            ("t6 FROBNICATE", "t6", "UNKNOWN_COMMAND"),
            (#"t7 PING {"x":1}"#, "t7", "BAD_REQUEST"),
            ("t8 INSERT", "t8", "BAD_REQUEST"),
            (#"t9 INSERT {"entity":5}"#, "t9", "BAD_REQUEST"),
            (String(repeating: "x", count: 40) + " PING", "*", "PARSE"),
            ("t10 PING \u{FF}", "t10", "PARSE"),
        ]
        for (line, tag, code) in cases {
            try client.send(line + "\n")
            let reply = try client.line()
            #expect(reply.hasPrefix("\(tag) ERR \(code) {\"message\":"), "\(line) → \(reply)")
            #expect(try client.request("ok PING").isOK, "after \(line)")
        }
        // Invalid UTF-8 and NUL bytes.
        try client.send([0x61, 0x20, 0x50, 0x49, 0x4E, 0x47, 0x20, 0xC3, 0x28, 0x0A, 0x00, 0x0A])
        #expect(try client.line().hasPrefix("a ERR PARSE"))
        #expect(try client.line().hasPrefix("* ERR PARSE"))
        #expect(try client.request("ok PING").isOK)
    }

    @Test("A line over maxRequestBytes is TOO_LARGE with its tag, skipped to its LF, and the connection stays usable")
    func tooLarge() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(limits: ["maxRequestBytes": 4096])
        try keeld.start()
        let client = try keeld.connect()
        let big = #"big INSERT {"entity":"Company","values":{"name":""# + String(repeating: "a", count: 100_000) + "\"}}"
        try client.send(big + "\nok PING\n")
        #expect(try client.line().hasPrefix("big ERR TOO_LARGE {\"message\":"))
        #expect(try client.line() == "ok OK")
        // Exactly at the limit is fine; one more byte is not.
        let filler = String(repeating: "y", count: 4096 - "at PING ".count - #"{"x":""}"#.count)
        let atLimit = #"at PING {"x":""# + filler + #""}"#
        #expect(atLimit.utf8.count == 4096)
        try client.send(atLimit + "\n")
        #expect(try client.line().hasPrefix("at ERR BAD_REQUEST"))
        try client.send("over" + atLimit.dropFirst(2) + "\n")
        #expect(try client.line().hasPrefix("over ERR TOO_LARGE"))
        #expect(try client.request("ok2 PING").isOK)
    }
}
