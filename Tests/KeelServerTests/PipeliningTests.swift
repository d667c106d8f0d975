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
    func concurrentConnections() async throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let path = keeld.socketPath
        try await withThrowingTaskGroup(of: Void.self) { group in
            for c in 0..<6 {
                group.addTask {
                    let client = try LineClient(path: path)
                    var text = ""
                    for i in 0..<500 { text += "c\(c)-\(i) \(i % 2 == 0 ? "PING" : "CHANGES")\n" }
                    try client.send(text)
                    for i in 0..<500 {
                        let line = try client.line()
                        guard line.hasPrefix("c\(c)-\(i) ") else { throw KeeldError("connection \(c) reply \(i): \(line)") }
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
