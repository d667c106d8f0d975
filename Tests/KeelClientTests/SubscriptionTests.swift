// Subscriptions: change events as a sequence, restricted per subscriber, several on one
// connection, overflow, and unsubscribing when the sequence ends.

import KeelClient
import KeelModel
import KeelTestSupport
import Testing

@Suite("KeelConnection: subscriptions")
struct SubscriptionTests {
    @Test("events of commits on the entities followed, restricted per subscriber, several subscribers on one connection")
    func events() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        let writer = try await daemon.connect()
        let people = try await connection.subscribe(entities: ["Person"])
        let companies = try await connection.subscribe(entities: ["Company"])
        var peopleEvents = people.makeAsyncIterator()
        var companyEvents = companies.makeAsyncIterator()

        // One transaction touching both (an employee of a company), then one touching companies only.
        let company = try #require(try await writer.request("INSERT", ["entity": "Company", "values": ["name": "Acme"]])?["$id"]?.stringValue)
        let employee = try #require(
            try await writer.request("INSERT", ["entity": "Employee", "values": ["name": "Kim", "salary": "10.00", "company": .string(company)]])?["$id"]?.stringValue)
        let first = try #require(try await writer.request("SAVE")?["txn"]?.intValue)
        let second = try #require(try await writer.batchInsert(entity: "Company", objects: [["name": "Initech"]]).txn)

        // Employee is a Person: the Person subscriber sees it and not the companies.
        let p1 = try #require(try await peopleEvents.next())
        #expect(p1 == ChangeEvent(txn: first, inserted: [employee]))
        let c1 = try #require(try await companyEvents.next())
        #expect(c1.txn == first && c1.inserted == [company] && !c1.overflow)
        let c2 = try #require(try await companyEvents.next())
        #expect(c2.txn == second && c2.inserted.count == 1)
        // The second transaction touched no Person: nothing more for that subscriber until the next.
        _ = try await writer.request("UPDATE", ["$id": .string(employee), "values": ["age": 40]])
        let third = try #require(try await writer.request("SAVE")?["txn"]?.intValue)
        let p2 = try #require(try await peopleEvents.next())
        #expect(p2 == ChangeEvent(txn: third, updated: [employee]))

        let unknown = await keelError { _ = try await connection.subscribe(entities: ["Nope"]) }
        #expect(unknown?.code == .noSuchEntity)
    }

    @Test("a consumer that falls behind gets one overflow event in place of what it missed")
    func overflow() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect(LiveDaemon.options(events: 4))
        let events = try await connection.subscribe()
        var txns: [Int64] = []
        for i in 0..<10 {
            txns.append(try #require(try await connection.batchInsert(entity: "Company", objects: [["name": .string("o\(i)")]]).txn))
        }
        // Events go out between replies: after this reply, those of every batch above are in.
        _ = try await connection.request("CHANGES")
        var received: [ChangeEvent] = []
        var iterator = events.makeAsyncIterator()
        while received.last?.txn != txns.last, let event = try await iterator.next() { received.append(event) }
        #expect(received.count <= 4)
        #expect(received.first?.overflow == true)
        #expect(received.dropFirst().allSatisfy { !$0.overflow })
        #expect(received.last?.txn == txns.last)
    }

    @Test("ending the last subscription unsubscribes: no events come any more")
    func unsubscribe() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        let writer = try await daemon.connect()
        do {
            let events = try await connection.subscribe(entities: ["Company"])
            _ = try await writer.batchInsert(entity: "Company", objects: [["name": "seen"]])
            var iterator = events.makeAsyncIterator()
            #expect(try await iterator.next()?.inserted.count == 1)
        }
        // The sequence is gone; its UNSUBSCRIBE went out before this PING (one connection, in order).
        try await connection.ping()
        let before = connection.statistics.discardedLines
        for i in 0..<5 { _ = try await writer.batchInsert(entity: "Company", objects: [["name": .string("unseen\(i)")]]) }
        _ = try await connection.request("CHANGES")
        // An event arriving with no subscriber would be counted as discarded: none came.
        #expect(connection.statistics.discardedLines == before)

        // A new subscription works again.
        let again = try await connection.subscribe()
        _ = try await writer.batchInsert(entity: "Company", objects: [["name": "again"]])
        var iterator = again.makeAsyncIterator()
        #expect(try await iterator.next()?.inserted.count == 1)
    }

    @Test("a subscriber's task cancelled while it waits ends its stream with CANCELLED")
    func cancelledSubscriber() async throws {
        let daemon = try LiveDaemon()
        let connection = try await daemon.connect()
        let events = try await connection.subscribe()
        let consumer = Task { () async throws(KeelError) -> Int in
            var count = 0
            for try await _ in events { count += 1 }
            return count
        }
        try await Task.sleep(for: .milliseconds(20))
        consumer.cancel()
        let error = await keelError { _ = try await consumer.value }
        #expect(error?.code == .cancelled)
        try await connection.ping()
    }
}
