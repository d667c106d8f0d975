// Pipelining and framing across reads: a thousand requests in one write, a request split byte
// by byte, many requests per read, replies in order with exactly one final line each.

import Foundation
import KeelProtocol
import KeelTestSupport
import Testing

@Suite("Pipelining and framing")
struct PipeliningTests {
    @Test("1,000 pipelined requests in one write are answered in order, one final line each")
    func thousandInOneWrite() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let client = try keeld.connect()
        var batch = ""
        for i in 0..<1000 {
            // A mix of commands answered on the event loop and on the connection's thread.
            switch i % 4 {
            case 0: batch += "p\(i) PING\n"
            case 1: batch += "c\(i) CHANGES\n"
            case 2: batch += "x\(i) NOPE\n"
            default: batch += "h\(i) HELLO\n"
            }
        }
        try client.send(batch)
        for i in 0..<1000 {
            let line = try client.line()
            let tag = ["p", "c", "x", "h"][i % 4] + "\(i)"
            #expect(line.hasPrefix(tag + " "), "reply \(i): \(line)")
        }
        #expect(try client.request("end PING").isOK)
    }

    @Test("A request split byte by byte across writes is one request")
    func byteByByte() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let client = try keeld.connect()
        let text = "slow HELLO {\"protocol\":1,\"client\":\"byte by byte\"}\r\nnext PING\n"
        for byte in text.utf8 {
            try client.send([byte])
            usleep(200)
        }
        #expect(try client.line().hasPrefix("slow OK {\"server\":\"keeld\""))
        #expect(try client.line() == "next OK")
    }

    @Test("Many requests in one read, some split across reads, keep their order")
    func manyPerRead() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let client = try keeld.connect()
        var all = ""
        for i in 0..<300 { all += "r\(i) \(i % 3 == 0 ? "CHANGES" : "PING")\n" }
        let bytes = Array(all.utf8)
        var offset = 0
        var sizes = [1, 7, 64, 333, 4096, 2]
        while offset < bytes.count {
            let size = min(sizes.removeFirst(), bytes.count - offset)
            sizes.append(size)
            try client.send(Array(bytes[offset..<(offset + size)]))
            offset += size
        }
        for i in 0..<300 {
            #expect(try client.line().hasPrefix("r\(i) "))
        }
    }

    @Test("Several connections pipelining at once each get their own replies in order")
    func concurrentConnections() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let path = keeld.socketPath
        let failures = LoadClients.onThreads(6) { c in
            let client = try LineClient(path: path)
            var text = ""
            for i in 0..<500 { text += "c\(c)-\(i) \(i % 2 == 0 ? "PING" : "CHANGES")\n" }
            try client.send(text)
            for i in 0..<500 {
                let line = try client.line()
                guard line.hasPrefix("c\(c)-\(i) ") else { throw KeeldError("connection \(c) reply \(i): \(line)") }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }
}

@Suite("Saves answered by their group's leader")
struct GroupAnsweredSaveTests {
    @Test("Savers in groups: INSERT + SAVE answered in order, and the next request finds the save taken in")
    func saversInGroups() throws {
        // Eight connections save at once, so their saves share groups: the leader writes each
        // follower's SAVE reply and leaves its thread asleep until its next request, which must
        // wake it, find the context clean (the save taken in after the reply went out) and see the
        // object stored.
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let path = keeld.socketPath
        // Each connection on a thread of its own, so the eight really save at once.
        let failures = LoadClients.onThreads(8) { c in
            let client = try LineClient(path: path)
            var lastTxn = 0
            for i in 0..<40 {
                // Odd rounds send CHANGES in the same write (the SAVE is then not the last
                // request of its burst: its thread is woken as usual); even rounds send it
                // once the SAVE's reply is in (the thread left asleep since).
                let behind = i % 2 == 1 ? "c\(i) CHANGES\n" : ""
                try client.send("i\(i) INSERT {\"entity\":\"Computer\",\"values\":{\"id\":\"6f1c2a8e-3b7d-4e59-9a0c-1d2e3f405162\",\"model\":\"C\(c)-\(i)\"}}\ns\(i) SAVE\n" + behind)
                let inserted = try client.line()
                guard inserted.hasPrefix("i\(i) OK {\"$id\":\"Computer/") else { throw KeeldError("connection \(c): \(inserted)") }
                let id = inserted.split(separator: "\"")[3]
                let saved = try client.line()
                guard saved.hasPrefix("s\(i) OK {"), let txn = Self.txn(saved), txn > lastTxn else {
                    throw KeeldError("connection \(c) save \(i): \(saved) after txn \(lastTxn)")
                }
                lastTxn = txn
                if behind.isEmpty { try client.send("c\(i) CHANGES\n") }
                let changes = try client.line()
                guard changes.hasPrefix("c\(i) OK "), changes.contains("\"hasChanges\":false") else {
                    throw KeeldError("connection \(c) round \(i): the context still holds the save: \(changes)")
                }
                try client.send("g\(i) GET {\"$id\":\"\(id)\"}\n")
                let got = try client.line()
                guard got.hasPrefix("g\(i) OK "), got.contains("\"model\":\"C\(c)-\(i)\"") else {
                    throw KeeldError("connection \(c) round \(i): \(got)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        // And a connection left asleep after its last SAVE still ends cleanly.
        let client = try keeld.connect()
        try client.send("i INSERT {\"entity\":\"Computer\",\"values\":{\"id\":\"6f1c2a8e-3b7d-4e59-9a0c-1d2e3f405162\",\"model\":\"last\"}}\ns SAVE\n")
        #expect(try client.line().hasPrefix("i OK "))
        #expect(try client.line().hasPrefix("s OK "))
        #expect(try client.request("q QUIT").isOK)
    }

    static func txn(_ line: String) -> Int? {
        guard let range = line.range(of: "\"txn\":") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }
}
