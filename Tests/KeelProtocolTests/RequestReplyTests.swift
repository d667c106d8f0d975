import KeelModel
import Testing

@testable import KeelProtocol

@Suite("Request and reply lines")
struct RequestReplyTests {
    static func parse(_ text: String) -> Result<Request, ParseFailure> {
        Result { () throws(ParseFailure) -> Request in try Request.parse(Array(text.utf8)) }
    }

    @Test("a request is TAG COMMAND [JSON-object]; the command is case-insensitive")
    func wellFormed() throws {
        let r = try Self.parse(#"q1 batch.insert {"entity":"Employee","objects":[]}"#).get()
        #expect(r.tag == "q1" && r.command == "BATCH.INSERT")
        #expect(r.arguments["entity"] == "Employee")
        #expect(try Self.parse("a.b:c-d_9 PING").get() == Request(tag: "a.b:c-d_9", command: "ping"))
    }

    @Test(
        "malformed lines are PARSE, with the tag when one could be read",
        arguments: [
            ("", nil), (" PING", nil), ("bad!tag PING", nil), (String(repeating: "t", count: 33) + " PING", nil),
            ("t1", "t1"), ("t1 ", "t1"), ("t1 FE7CH", "t1"), ("t1 PING {", "t1"), ("t1 PING [1]", "t1"),
            ("t1 PING {\"a\":1} x", "t1"), ("t1 INSÉRT", "t1"),
        ] as [(String, String?)])
    func malformed(line: String, tag: String?) {
        switch Self.parse(line) {
        case .success(let r): Issue.record("\(line.debugDescription) parsed as \(r)")
        case .failure(let failure):
            #expect(failure.tag == tag, "\(line.debugDescription)")
            let reply = failure.reply.line()
            #expect(reply.hasPrefix("\(tag ?? "*") ERR PARSE {\"message\":"), "\(reply)")
        }
    }

    @Test("a SAVE reply written straight into the output is the text of its JSON reply")
    func saveReplyWrittenStraight() {
        let ids = (1...3).map { ObjectID(entity: EntityID(0), number: UInt64($0)) }
        let results = [
            SaveResult(saveID: nil),
            SaveResult(saveID: SaveID(rawValue: 1), inserted: [ids[0]]),
            SaveResult(saveID: SaveID(rawValue: 9_876_543_210), inserted: ids, updated: [ids[1]], deleted: Array(ids[1...])),
        ]
        for result in results {
            var direct: [UInt8] = Array("t OK ".utf8)
            ContextTerms.writeSaveReply(result, to: &direct)
            direct.append(UInt8(ascii: "\n"))
            var viaJSON: [UInt8] = []
            Reply.ok(tag: "t", ContextTerms.saveReply(result)).write(to: &viaJSON)
            #expect(String(decoding: direct, as: UTF8.self) == String(decoding: viaJSON, as: UTF8.self))
        }
    }

    @Test("replies are written as the spec shows and read back the same")
    func replies() throws {
        let cases: [(Reply, String)] = [
            (.ok(tag: "t", nil), "t OK\n"),
            (.ok(tag: "t", ["$id": "Employee/18"]), "t OK {\"$id\":\"Employee/18\"}\n"),
            (.row(tag: "t", ["a": 1]), "t ROW {\"a\":1}\n"),
            (.event(["txn": 3]), "* EVENT {\"txn\":3}\n"),
            (.error(tag: "t", KeelError(.notFound, "no object Employee/9")), "t ERR NOT_FOUND {\"message\":\"no object Employee/9\"}\n"),
            (.error(tag: "t", code: .validation, message: "2 problems", details: ["n": 2]),
             "t ERR VALIDATION {\"message\":\"2 problems\",\"details\":{\"n\":2}}\n"),
        ]
        for (reply, text) in cases {
            #expect(reply.line() == text)
            #expect(try Reply.parse(Array(text.utf8.dropLast())) == reply, "\(text)")
        }
    }

    @Test("a request line written as bytes is the UTF-8 of the line written as a String, and reads back as the request")
    func requestLineAsBytes() throws {
        let cases: [(String, String, JSON)] = [
            ("1", "PING", [:]), ("18446744073709551615", "GET", ["$id": "Company/7"]),
            ("t.9", "batch.insert", ["entity": "Employee", "objects": [["name": "a\nb", "salary": 1.5]]]),
        ]
        for (tag, command, json) in cases {
            let arguments = try #require(json.objectValue)
            var text = ""
            Request.writeLine(tag: tag, command: command, arguments: arguments, to: &text)
            var bytes: [UInt8] = []
            Request.writeLine(tag: tag, command: command, arguments: arguments, to: &bytes)
            #expect(bytes == Array(text.utf8))
            #expect(try Request.parse(Array(bytes.dropLast())) == Request(tag: tag, command: command, arguments: arguments))
        }
        // A numeric tag written from its number is the tag written from its text.
        for number in [0, 7, 10, 42, 1_000_000, UInt64(Int64.max), UInt64.max] as [UInt64] {
            var fromNumber: [UInt8] = []
            Request.writeLine(tag: number, command: "GET", arguments: ["$id": "Company/1"], to: &fromNumber)
            var fromText: [UInt8] = []
            Request.writeLine(tag: String(number), command: "GET", arguments: ["$id": "Company/1"], to: &fromText)
            #expect(fromNumber == fromText, "\(number)")
            #expect(try Request.parse(Array(fromNumber.dropLast())).tag == String(number))
        }
    }

    @Test(
        "a reply's head reads a decimal tag as a number without its text, and keeps any other tag as written",
        arguments: [
            ("7 OK", 7 as UInt64?, "7"), ("0 OK", 0, "0"), ("18446744073709551615 OK", UInt64.max, "18446744073709551615"),
            ("18446744073709551616 OK", nil, "18446744073709551616"), ("007 OK", nil, "007"), ("7a OK", nil, "7a"),
            ("q1 ROW {}", nil, "q1"), ("* EVENT {}", nil, "*"), ("42 ERR NOT_FOUND {\"message\":\"m\"}", 42, "42"),
        ] as [(String, UInt64?, String)])
    func replyHeadTags(line: String, number: UInt64?, tag: String) throws {
        let bytes = Array(line.utf8)
        let head = try ReplyHead.parse(bytes)
        #expect(head.number == number)
        #expect(head.tag == tag)
        // The whole reply carries the tag as written, whichever way the head kept it.
        let reply = try head.reply(bytes)
        switch reply {
        case .ok(let t, _), .row(let t, _), .error(let t, _, _, _): #expect(t == tag)
        case .event: #expect(tag == "*")
        }
        #expect(try Reply.parse(bytes) == reply)
    }

    @Test(
        "a reply's head is read in place: its kind and where its JSON starts, or what is wrong with it",
        arguments: [
            ("7 OK", "ok", 4), ("7 OK {}", "ok", 5), ("12 ROW {\"a\":1}", "row", 7), ("* EVENT {}", "event", 8),
            ("3 ERR NOT_FOUND {}", "error NOT_FOUND", 16), ("3 ERR WHATEVER {}", "error WHATEVER", 15), (" OK", "ok", 3),
            ("7", "a reply line is TAG KIND [...]", -1), ("", "a reply line is TAG KIND [...]", -1),
            ("7 OKAY {}", "unknown reply kind OKAY", -1), ("7  OK", "unknown reply kind ", -1), ("7 ok", "unknown reply kind ok", -1),
            ("7 EVENT {}", "unknown reply kind EVENT", -1), ("7 ERR", "ERR must be followed by a code and a JSON object", -1),
            ("7 ERR NOT_FOUND", "ERR must be followed by a code and a JSON object", -1), ("7 ER {}", "unknown reply kind ER", -1),
        ] as [(String, String, Int)])
    func replyHeadKinds(line: String, expected: String, payloadStart: Int) throws {
        let bytes = Array(line.utf8)
        let fromMemory = bytes.withUnsafeBufferPointer { buffer in Result { () throws(ParseFailure) in try ReplyHead.parse(buffer) } }
        let fromArray = Result { () throws(ParseFailure) in try ReplyHead.parse(bytes) }
        switch (fromArray, fromMemory) {
        case (.success(let head), .success(let same)):
            #expect(head == same)
            let kind: String
            switch head.kind {
            case .ok: kind = "ok"
            case .row: kind = "row"
            case .event: kind = "event"
            case .error(let code): kind = "error \(code.rawValue)"
            }
            #expect(kind == expected)
            #expect(head.payloadStart == payloadStart)
        case (.failure(let failure), .failure(let same)):
            #expect(failure.message == expected)
            #expect(same.message == expected)
            #expect(payloadStart == -1)
        default:
            Issue.record("\(line.debugDescription): \(fromArray) against \(fromMemory)")
        }
    }

    @Test("10,000 unknown keys: 100 problems in details, problemCount 10,000, the accepted keys named once, a short message")
    func manyUnknownKeys() throws {
        let text = #"{"entity":"E","# + (0..<10_000).map { "\"k\($0)\":1" }.joined(separator: ",") + "}"
        let arguments = try #require(try JSON.parse(text).objectValue)
        do {
            _ = try CommandTable.resolve(Request(tag: "t", command: "FETCH", arguments: arguments))
            Issue.record("accepted")
        } catch {
            #expect(error.code == .badRequest)
            let problems = error.details?["problems"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(problems.count == 100)
            #expect(error.details?["problemCount"]?.intValue == 10_000)
            #expect(problems.first?.hasPrefix(#""k0" is not a key of FETCH (it takes "entity", "#) == true, "\(problems)")
            #expect(problems.dropFirst().allSatisfy { !$0.contains("it takes") }, "\(problems)")
            #expect(problems.last == #""k99" is not a key of FETCH"#)
            #expect(error.message.utf8.count < 600, "\(error.message)")
            #expect(error.message.hasSuffix("… and \(10_000 - error.message.components(separatedBy: "is not a key").count + 1) more"), "\(error.message)")
        }
        // A key of a megabyte is cut where it is named.
        do {
            _ = try CommandTable.resolve(Request(tag: "t", command: "PING", arguments: [String(repeating: "x", count: 1 << 20): 1]))
            Issue.record("accepted")
        } catch {
            #expect(error.message == "PING: \"\(String(repeating: "x", count: 97))…\" is not a key of PING (it takes none)")
            #expect(error.description.utf8.count < 1000)
        }
    }

    @Test("the command table checks keys, kinds and required keys, naming every problem")
    func validation() throws {
        #expect(throws: Never.self) { try CommandTable.resolve(Request(tag: "t", command: "FETCH", arguments: ["entity": "E", "limit": 10, "context": "bg"])) }
        do {
            _ = try CommandTable.resolve(Request(tag: "t", command: "FETCH", arguments: ["limit": "ten", "bogus": 1]))
            Issue.record("accepted")
        } catch {
            #expect(error.code == .badRequest)
            let problems = error.details?["problems"]?.arrayValue ?? []
            #expect(problems.count == 3, "\(error)")
        }
        do {
            _ = try CommandTable.resolve(Request(tag: "t", command: "FLY"))
            Issue.record("accepted")
        } catch {
            #expect(error.code == .unknownCommand)
        }
        // PING takes nothing; SAVE takes only the context.
        #expect(throws: KeelError.self) { try CommandTable.resolve(Request(tag: "t", command: "PING", arguments: ["x": 1])) }
        #expect(throws: Never.self) { try CommandTable.resolve(Request(tag: "t", command: "SAVE", arguments: ["context": "main"])) }
        #expect(throws: KeelError.self) { try CommandTable.resolve(Request(tag: "t", command: "SAVE", arguments: ["context": 3])) }
    }

    @Test("the table has every command of the spec and Keel's additions exactly once, admin ones marked")
    func table() {
        let spec = [
            "HELLO", "PING", "QUIT", "MODEL", "CONTEXT.OPEN", "CONTEXT.CLOSE", "INSERT", "UPDATE", "DELETE", "RELATE", "GET",
            "FETCH", "COUNT", "CHANGES", "SAVE", "ROLLBACK", "REFRESH", "BATCH.INSERT", "BATCH.UPDATE", "BATCH.DELETE",
            "SUBSCRIBE", "UNSUBSCRIBE", "HISTORY", "EXPLAIN", "STATS", "CHECKPOINT", "COMPACT", "VERIFY", "BACKUP",
            "HISTORY.PRUNE",  // Keel's additions: EXPLAIN, HISTORY.PRUNE
        ]
        #expect(Set(CommandTable.all.map(\.name)) == Set(spec))
        #expect(CommandTable.all.count == spec.count)
        #expect(Set(CommandTable.all.filter(\.isAdmin).map(\.name)) == ["CHECKPOINT", "COMPACT", "VERIFY", "BACKUP", "HISTORY.PRUNE"])
    }
}

@Suite("Writing request lines")
struct RequestWritingTests {
    @Test(
        "a written request line parses back to the same request",
        arguments: [
            Request(tag: "1", command: "ping"),
            Request(tag: "a.b:c-d_9", command: "batch.insert", arguments: ["entity": "Employee", "objects": [["name": "Kim\nLee"]]]),
            Request(tag: String(repeating: "t", count: 32), command: "GET", arguments: ["$id": "Employee/1", "include": ["department"]]),
        ])
    func roundTrip(request: Request) throws {
        let line = request.line()
        #expect(line.hasSuffix("\n") && line.dropLast().allSatisfy { $0 != "\n" }, "one line: \(line.debugDescription)")
        #expect(try Request.parse(Array(line.utf8.dropLast())) == request)
    }

    @Test("tags and command names are checked as the parser checks them")
    func validity() {
        #expect(Request.isValidTag("t1") && Request.isValidTag(String(repeating: "x", count: 32)))
        #expect(!Request.isValidTag("") && !Request.isValidTag("a b") && !Request.isValidTag(String(repeating: "x", count: 33)))
        #expect(!Request.isValidTag("*") && !Request.isValidTag("é"))
        #expect(Request.isValidCommand("FETCH") && Request.isValidCommand("batch.insert"))
        #expect(!Request.isValidCommand("") && !Request.isValidCommand("GET\nX") && !Request.isValidCommand("GÉT") && !Request.isValidCommand("A1"))
    }
}
