import Foundation
import Testing

@testable import KeelProtocol

@Suite("Docs/Protocol.md")
struct ProtocolDocTests {
    static let docPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Docs/Protocol.md").path

    @Test("the command reference in Docs/Protocol.md is the one the command table renders (KEEL_UPDATE_DOCS=1 rewrites it)")
    func referenceInStep() throws {
        let doc = try String(contentsOfFile: Self.docPath, encoding: .utf8)
        guard let begin = doc.range(of: CommandTable.referenceBegin), let end = doc.range(of: CommandTable.referenceEnd) else {
            Issue.record("Docs/Protocol.md lacks the generated-reference markers")
            return
        }
        let current = String(doc[begin.upperBound..<end.lowerBound])
        let rendered = "\n\n" + CommandTable.referenceMarkdown()
        if ProcessInfo.processInfo.environment["KEEL_UPDATE_DOCS"] == "1" {
            try (String(doc[..<begin.upperBound]) + rendered + String(doc[end.lowerBound...])).write(toFile: Self.docPath, atomically: true, encoding: .utf8)
            return
        }
        #expect(current == rendered, "Docs/Protocol.md's command reference is stale: run KEEL_UPDATE_DOCS=1 swift test --filter ProtocolDocTests")
    }
}
