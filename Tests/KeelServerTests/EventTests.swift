// SUBSCRIBE/UNSUBSCRIBE, events from other connections' saves, the overflow event for a
// subscriber that does not read (with the daemon's memory bounded), and HISTORY.

import Foundation
import KeelModel
import KeelProtocol
import KeelTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Events and history")
struct EventTests {
    @Test("A subscriber receives the events of another connection's saves and batches, filtered by entity, between replies")
    func otherConnectionsSaves() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let all = try keeld.connect()
        let people = try keeld.connect()
        let writer = try keeld.connect()
        try all.ok("s SUBSCRIBE")
        try people.ok(#"s SUBSCRIBE {"entities":["Person"]}"#)
        try people.fails(#"s2 SUBSCRIBE {"entities":["Nope"]}"#, "NO_SUCH_ENTITY")

        try writer.ok(#"i INSERT {"entity":"Company","values":{"name":"Acme"}}"#)
        try writer.ok("s SAVE")
        try writer.ok(#"b BATCH.INSERT {"entity":"Employee","objects":[{"name":"Kim","salary":"1","company":"Company/1"}]}"#)

        let first = try Reply(line: try all.line())
        #expect(first == ["txn": 1, "inserted": ["Company/1"], "updated": [], "deleted": []])
        let second = try Reply(line: try all.line())
        #expect(second == ["txn": 2, "inserted": ["Employee/1"], "updated": ["Company/1"], "deleted": []])
        // The Person subscriber hears only the save that touched a Person (an Employee), and only its objects.
        let onlyPeople = try Reply(line: try people.line())
        #expect(onlyPeople == ["txn": 2, "inserted": ["Employee/1"], "updated": [], "deleted": []])

        // Events come between replies, as whole lines: before or after the PING's, never inside
        // a reply (a FETCH's rows stay together).
        try writer.ok(#"u BATCH.UPDATE {"entity":"Employee","values":{"age":40}}"#)
        let fetch = try all.request(#"f FETCH {"entity":"Company"}"#)
        #expect(fetch.isOK && fetch.rows.count == 1)
        var events = fetch.events
        if events.isEmpty, case .event(let json) = try Reply(line: try all.line()) { events.append(json) }
        #expect(events == [["txn": 3, "inserted": [], "updated": ["Employee/1"], "deleted": []]])

        try all.ok("un UNSUBSCRIBE")
        try writer.ok(#"d BATCH.DELETE {"entity":"Employee"}"#)
        try writer.ok(#"c BATCH.INSERT {"entity":"Company","objects":[{"name":"Other"}]}"#)
        usleep(100_000)
        let after = try all.request("p2 PING")
        #expect(after.events.isEmpty, "no events after UNSUBSCRIBE")
        #expect(try Reply(line: try people.line())["txn"] == 3)
        #expect(try Reply(line: try people.line())["deleted"] == ["Employee/1"])
        let quiet = try people.request("p3 PING")
        #expect(quiet.events.isEmpty, "no event for a save that touches no Person")
    }

    @Test("A subscriber that never reads gets the overflow event, and the daemon's memory stays bounded")
    func overflow() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.configure(["syncMode": "off", "pageCacheBytes": 1 << 20], limits: ["subscriberQueueLength": 16, "maxBufferedBytes": 65536])
        try keeld.start()
        let subscriber = try keeld.connect()
        subscriber.setReceiveBuffer(4096)
        try subscriber.ok("s SUBSCRIBE")
        let writer = try keeld.connect()
        // Each save's event is ~1.7 KB (100 IDs): a thousand of them would be megabytes if queued.
        let objects = (0..<100).map { #"{"bookUUID":"00000000-0000-0000-0000-000000000001","comment":"c\#($0)"}"# }
            .joined(separator: ",")
        var rssAfterWarmUp = 0
        let rounds = 1000
        for round in 0..<rounds {
            try writer.ok(#"b\#(round) BATCH.INSERT {"entity":"Feedback","objects":[\#(objects)]}"#)
            if round == 100 { rssAfterWarmUp = keeld.residentKiB ?? 0 }
        }
        let rssAtEnd = keeld.residentKiB ?? 0
        // A gross leak shows here; the exact bound is checked below by what the subscriber gets.
        // (The store itself grows by ~100k objects meanwhile, so RSS cannot be much tighter.)
        #expect(rssAtEnd - rssAfterWarmUp < 24 * 1024, "RSS grew from \(rssAfterWarmUp) KiB to \(rssAtEnd) KiB")

        // Now read: whatever was written before the cap, then the overflow event naming a txn.
        subscriber.setTimeout(seconds: 10)
        var sawOverflow = false
        var eventsBeforeOverflow = 0
        var lastTxn: Int64 = 0
        while let line = try subscriber.readLine() {
            let event = try Reply(line: line)
            if event["overflow"] == true {
                sawOverflow = true
                #expect((event["txn"]?.intValue ?? 0) > 0)
            } else if !sawOverflow {
                eventsBeforeOverflow += 1
            }
            lastTxn = max(lastTxn, event["txn"]?.intValue ?? 0)
            if lastTxn >= Int64(rounds) { break }
        }
        #expect(sawOverflow)
        // Bounded: before the overflow event, only what fit under the 64 KiB output cap (and the
        // kernel's socket buffers) was sent — not the hundreds of events committed meanwhile.
        #expect(eventsBeforeOverflow < 200, "only what fit under the output cap was sent before the overflow")
        #expect(lastTxn == Int64(rounds), "after the overflow the subscriber catches up to the last save")
    }

    @Test("HISTORY streams the saves after a txn, oldest first, up to a limit")
    func history() throws {
        let keeld = try Keeld()
        defer { keeld.cleanUp() }
        try keeld.start()
        let c = try keeld.connect()
        for i in 1...5 {
            try c.ok(#"b\#(i) BATCH.INSERT {"entity":"Company","objects":[{"name":"C\#(i)"}]}"#)
        }
        try c.ok(#"u BATCH.UPDATE {"entity":"Company","values":{"registrationNumber":1}}"#)
        let all = try c.request(#"h1 HISTORY {"after":0}"#)
        #expect(all.isOK && all.payload == nil)
        #expect(all.rows.map { $0["txn"]?.intValue ?? 0 } == [1, 2, 3, 4, 5, 6])
        #expect(all.rows[0]["inserted"] == ["Company/1"])
        #expect(all.rows[5]["updated"]?.arrayValue?.count == 5)
        #expect(WireDate.parse(all.rows[0]["time"]?.stringValue ?? "") != nil)
        let page = try c.request(#"h2 HISTORY {"after":2,"limit":2}"#)
        #expect(page.rows.map { $0["txn"]?.intValue ?? 0 } == [3, 4])
        #expect(try c.request(#"h3 HISTORY {"after":6}"#).rows.isEmpty)
        try c.fails(#"h4 HISTORY {"after":-1}"#, "BAD_REQUEST")
        try c.fails("h5 HISTORY", "BAD_REQUEST")
    }
}

extension Reply {
    /// The JSON of an `* EVENT` line (or of any line, for a quick look).
    init(line: String) throws {
        self = try Reply.parse(Array(line.utf8))
    }

    subscript(key: String) -> JSON? {
        switch self {
        case .event(let json), .row(_, let json): json[key]
        case .ok(_, let json): json?[key]
        case .error: nil
        }
    }
}

extension Reply {
    static func == (reply: Reply, json: JSON) -> Bool {
        if case .event(let body) = reply { return body == json }
        return false
    }
}
