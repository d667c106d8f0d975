// A client that does not read: the daemon stops reading it and pauses its FETCH stream instead
// of buffering, its memory stays bounded, and the connection resumes when the client reads.

import Foundation
import KeelModel
import KeelTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Back-pressure")
struct BackPressureTests {
    @Test("A FETCH of many rows to a client that does not read is paused, not buffered; reading resumes it to the end")
    func slowFetchReader() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(["syncMode": "off"], limits: ["maxBufferedBytes": 65536])
        try keeld.start()
        let writer = try keeld.connect()
        let comment = String(repeating: "x", count: 200)
        let objects = (0..<1000).map { #"{"bookUUID":"00000000-0000-0000-0000-000000000001","comment":"\#(comment)\#($0)"}"# }
            .joined(separator: ",")
        for i in 0..<30 {
            try writer.ok(#"b\#(i) BATCH.INSERT {"entity":"Feedback","objects":[\#(objects)]}"#)
        }
        // 30,000 rows of ~330 bytes: ~10 MB of reply.
        let reader = try keeld.connect()
        reader.setReceiveBuffer(4096)
        let before = keeld.residentKiB ?? 0
        try reader.send(#"f FETCH {"entity":"Feedback"}"# + "\n")
        usleep(1_500_000)
        let during = keeld.residentKiB ?? 0
        #expect(during - before < 6 * 1024, "RSS grew from \(before) KiB to \(during) KiB while the client did not read")
        // Other connections are served meanwhile.
        #expect(try writer.request("p PING").isOK)
        #expect(try writer.ok(#"n COUNT {"entity":"Feedback"}"#) == ["count": 30000])
        var rows = 0
        while true {
            let line = try reader.line()
            if line.hasPrefix("f ROW ") { rows += 1; continue }
            #expect(line == #"f OK {"count":30000}"#)
            break
        }
        #expect(rows == 30000)
        #expect(try reader.request("p PING").isOK)
    }

    @Test("Early replies (coalesceMicros 0) to a client that pipelines big GETs without reading wait for room, not buffered")
    func earlyRepliesWithoutReading() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(["syncMode": "off"], limits: ["maxBufferedBytes": 65536])
        try keeld.start()
        let client = try keeld.connect()
        #expect(try client.request(#"h HELLO {"protocol":1,"coalesceMicros":0}"#).payload?["coalesceMicros"] == 0)
        // One employee with a 256 KiB photo: each GET's reply is ~350 KB of base64.
        let photo = Data((0..<(256 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) }).base64EncodedString()
        try client.ok(#"i INSERT {"entity":"Employee","values":{"name":"Big","salary":"1.00","photo":"\#(photo)"}}"#)
        try client.ok("s SAVE")
        client.setReceiveBuffer(4096)
        // 100 GETs in flight (~35 MB of replies if the daemon buffered them), none read yet.
        let total = 100
        let before = keeld.residentKiB ?? 0
        _ = startSender(fd: client.fd, String(repeating: #"g GET {"$id":"Employee/1"}"# + "\n", count: total), times: 1)
        usleep(1_500_000)
        let during = keeld.residentKiB ?? 0
        #expect(during - before < 16 * 1024, "RSS grew from \(before) KiB to \(during) KiB while the client did not read")
        for _ in 0..<total {
            let line = try client.line()
            #expect(line.hasPrefix(#"g OK {"$id":"Employee/1""#) && line.contains(photo.prefix(64)))
        }
        #expect(try client.request("p PING").isOK)
    }

    @Test("A client that pipelines without reading is stopped by the daemon (not buffered) and gets every reply in order once it reads")
    func pipelineWithoutReading() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(limits: ["inFlightRequests": 64, "maxBufferedBytes": 65536])
        try keeld.start()
        let client = try keeld.connect()
        client.setReceiveBuffer(4096)
        // 5,000 MODEL requests: ~25 MB of replies if the daemon buffered them all.
        let total = 5000
        let before = keeld.residentKiB ?? 0
        _ = startSender(fd: client.fd, String(repeating: "m MODEL\n", count: 1000), times: total / 1000)
        usleep(1_500_000)
        let during = keeld.residentKiB ?? 0
        #expect(during - before < 8 * 1024, "RSS grew from \(before) KiB to \(during) KiB")
        var replies = 0
        while replies < total {
            let line = try client.line()
            #expect(line.hasPrefix("m OK {\"name\":\"Company\""))
            replies += 1
        }
    }
}
