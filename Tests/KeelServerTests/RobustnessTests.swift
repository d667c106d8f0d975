// No input, however malformed, crashes the daemon or changes stored data (spec/protocol.md):
// deep nesting at the limits, random bytes, random mutations of valid requests.

import Foundation
import KeelModel
import KeelProtocol
import KeelStorage
import KeelTestSupport
import Testing

@Suite("Robustness")
struct RobustnessTests {
    @Test("Predicates and JSON nested to their limits are answered, not crashed on")
    func deepNesting() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        try c.ok(#"b BATCH.INSERT {"entity":"Company","objects":[{"name":"A"}]}"#)
        let depth = 250
        let nested = String(repeating: "(", count: depth) + "name == 'A'" + String(repeating: ")", count: depth)
        #expect(try c.ok(#"p1 COUNT {"entity":"Company","predicate":"\#(nested)"}"#) == ["count": 1])
        let nots = String(repeating: "NOT ", count: 200) + "name == 'A'"
        #expect(try c.ok(#"p2 COUNT {"entity":"Company","predicate":"\#(nots)"}"#) == ["count": 1])
        let tooDeep = String(repeating: "(", count: 5000) + "name == 'A'" + String(repeating: ")", count: 5000)
        try c.fails(#"p3 COUNT {"entity":"Company","predicate":"\#(tooDeep)"}"#, "PREDICATE")
        // A json attribute nested deep, and JSON past the parser's depth limit.
        let deepJSON = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        try c.ok(#"j1 INSERT {"entity":"Computer","values":{"id":"00000000-0000-0000-0000-000000000001","specs":\#(deepJSON)}}"#)
        let tooDeepJSON = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
        try c.send(#"j2 INSERT {"entity":"Computer","values":{"specs":\#(tooDeepJSON)}}"# + "\n")
        #expect(try c.line().hasPrefix("j2 ERR PARSE"))
        #expect(try c.request("p PING").isOK)
    }

    @Test("A MATCHES pattern that backtracks exponentially fails its fetch with PREDICATE; the daemon and the connection go on")
    func catastrophicRegex() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        let long = String(repeating: "a", count: 40) + "c"
        try c.ok(#"b BATCH.INSERT {"entity":"Company","objects":[{"name":"\#(long)"},{"name":"ab"}]}"#)
        // Swift's and ICU's backtracking engines alike need ~2^40 steps for this one: without a
        // budget the request would hold its session thread for ever.
        let reply = try c.request(#"f1 FETCH {"entity":"Company","predicate":"name MATCHES '(a*)*b'"}"#)
        #expect(reply.errorCode == "PREDICATE", "\(reply.finalLine)")
        #expect(reply.rows.isEmpty)
        #expect(reply.finalLine.contains("backtracks too much") && reply.finalLine.contains(#""position":13"#), "\(reply.finalLine)")
        try c.fails(#"f2 COUNT {"entity":"Company","predicate":"name MATCHES[c] '(A|A)*B'"}"#, "PREDICATE")
        // The same connection, the same daemon: a sane pattern still answers.
        #expect(try c.ok(#"f3 COUNT {"entity":"Company","predicate":"name MATCHES 'a+c|ab'"}"#) == ["count": 2])
        #expect(try c.request("p PING").isOK)
    }

    @Test("Random bytes and mutated requests never crash the daemon or change stored data")
    func fuzz() throws {
        let seed = DurabilityTests.seed()
        print("RobustnessTests.fuzz seed \(seed) (KEEL_SEED=\(seed) replays)")
        var rng = SeededRandom(seed: seed)
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let setup = try keeld.connect()
        try setup.ok(#"b BATCH.INSERT {"entity":"Company","objects":[{"name":"A"},{"name":"B"}]}"#)
        let before = try setup.request(#"f FETCH {"entity":"Company"}"#).rows
        let valid = [
            #"a GET {"$id":"Company/1"}"#, #"b FETCH {"entity":"Company","predicate":"name == 'A'"}"#,
            #"c UPDATE {"$id":"Company/1","values":{"name":"Z"}}"#, #"d CONTEXT.OPEN {"name":"x","parent":"main"}"#,
            #"e RELATE {"$id":"Company/1","relationship":"departments","add":["Department/1"]}"#, "f CHANGES", "g ROLLBACK",
            #"h COUNT {"entity":"Person","sort":[{"key":"name"}]}"#, #"i HISTORY {"after":0}"#, "j STATS",
            #"k FETCH {"entity":"Employee","result":"dictionaries","groupBy":["department.name"],"properties":["department.name",{"name":"n","function":"count"},{"name":"top","function":"max","key":"salary"}],"having":"n > %@ OR top == nil","havingArgs":[0],"sort":["top"]}"#,
        ]
        let rounds = DurabilityTests.slow ? 20_000 : 2_000
        let client = try keeld.connect()
        var sent = 0
        for _ in 0..<rounds {
            var bytes = Array(valid[Int(rng.next() % UInt64(valid.count))].utf8)
            switch rng.next() % 4 {
            case 0:  // random bytes
                bytes = (0..<Int(rng.next() % 80)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            case 1:  // flip some bytes
                for _ in 0..<(1 + rng.next() % 4) where !bytes.isEmpty {
                    bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
                }
            case 2:  // cut
                bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count + 1))))
            default:  // duplicate a slice
                let cut = Int(rng.next() % UInt64(bytes.count + 1))
                bytes.insert(contentsOf: bytes[..<cut], at: cut)
            }
            bytes.removeAll { $0 == UInt8(ascii: "\n") }
            // Never SAVE: whatever the mutations did to the main context stays pending.
            if String(decoding: bytes, as: UTF8.self).uppercased().contains("SAVE") { continue }
            try client.send(bytes + [UInt8(ascii: "\n")])
            sent += 1
        }
        try client.send("end PING\n")
        var finals = 0
        while true {
            let line = try client.line()
            if line == "end OK" { break }
            if try Reply.parse(Array(line.utf8)).isFinal { finals += 1 }
            // Bad input is the client's error, never the daemon's.
            #expect(!line.contains(" ERR INTERNAL") && !line.contains(" ERR IO") && !line.contains(" ERR CORRUPT"), "\(line)")
        }
        #expect(finals == sent, "one final line per request")
        let after = try keeld.connect().request(#"f FETCH {"entity":"Company"}"#).rows
        #expect(after == before, "nothing stored changed")
    }

    @Test("Mutated batch requests, history reads and prunes: one final line each, never a daemon fault; what they commit leaves the store consistent")
    func batchFuzz() throws {
        let seed = DurabilityTests.seed()
        print("RobustnessTests.batchFuzz seed \(seed) (KEEL_SEED=\(seed) replays)")
        var rng = SeededRandom(seed: seed)
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(["historyRetention": 50])
        try keeld.start()
        let setup = try keeld.connect()
        try setup.ok(#"b BATCH.INSERT {"entity":"Company","objects":[{"name":"A"},{"name":"B"}]}"#)
        let valid = [
            #"a BATCH.INSERT {"entity":"Company","objects":[{"name":"C1"},{"name":"C2","website":"https://c.example"}]}"#,
            #"b BATCH.INSERT {"entity":"Employee","objects":[{"name":"E","salary":"10.5","age":30,"company":"Company/1"}]}"#,
            #"c BATCH.UPDATE {"entity":"Employee","predicate":"age > %@","args":[20],"values":{"salary":"11","isManager":true}}"#,
            #"d BATCH.UPDATE {"entity":"Company","predicate":"name BEGINSWITH $P","vars":{"P":"C"},"values":{"founded":"2020-01-01T00:00:00Z"}}"#,
            #"e BATCH.DELETE {"entity":"Employee","predicate":"salary < 11"}"#,
            #"f BATCH.DELETE {"entity":"Company","predicate":"name == 'C1'"}"#,
            #"g HISTORY {"after":3,"limit":5}"#,
            #"h HISTORY.PRUNE {"through":4}"#,
        ]
        let rounds = DurabilityTests.slow ? 20_000 : 1_500
        let client = try keeld.connect()
        var sent = 0
        var finals = 0
        /// Reads replies until `count` final lines have come (batches commit, each with its fsync:
        /// the requests go in windows, or a long run would outlast the socket's send timeout).
        func drain(to count: Int) throws {
            while finals < count {
                let line = try client.line()
                if try Reply.parse(Array(line.utf8)).isFinal { finals += 1 }
                #expect(!line.contains(" ERR INTERNAL") && !line.contains(" ERR IO") && !line.contains(" ERR CORRUPT"), "\(line)")
            }
        }
        for round in 0..<rounds {
            if round % 250 == 0 { try drain(to: sent) }
            var bytes = Array(valid[Int(rng.next() % UInt64(valid.count))].utf8)
            switch rng.next() % 5 {
            case 0:  // as it is: the store keeps changing under the mutated ones
                break
            case 1:  // flip some bytes
                for _ in 0..<(1 + rng.next() % 4) where !bytes.isEmpty {
                    bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next())
                }
            case 2:  // cut
                bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count + 1))))
            case 3:  // a digit changed (IDs, numbers, limits)
                if let i = bytes.indices.filter({ (48...57).contains(bytes[$0]) }).randomElement(using: &rng) {
                    bytes[i] = UInt8(48 + rng.next() % 10)
                }
            default:  // duplicate a slice
                let cut = Int(rng.next() % UInt64(bytes.count + 1))
                bytes.insert(contentsOf: bytes[..<cut], at: cut)
            }
            bytes.removeAll { $0 == UInt8(ascii: "\n") }
            try client.send(bytes + [UInt8(ascii: "\n")])
            sent += 1
        }
        try drain(to: sent)
        try client.send("end PING\n")
        #expect(try client.line() == "end OK", "one final line per request, then the PING's")
        let verify = try keeld.connect().request("v VERIFY")
        #expect(verify.isOK, "\(verify)")
        #expect(keeld.stop() == 0)
    }
}
